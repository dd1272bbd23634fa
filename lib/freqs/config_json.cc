// Hugging Face config.json -> ModelRope / RopeConfig (nlohmann-json). Every error names the key.
//
// The walk follows transformers 5.24:
//   1. the text model's config: `text_config` when present (PreTrainedConfig.get_text_config);
//   2. its family (lib/freqs/hf_families.cc): key aliases and the config class's defaults;
//   3. the layers: `layer_types` or the family's pattern, and which layers have no RoPE;
//   4. the rope dict: `rope_scaling` if non-empty, else `rope_parameters`
//      (RotaryEmbeddingConfigMixin.convert_rope_params_to_dict); per layer type when its keys are
//      layer type names ("Case 2" of standardize_rope_params), else one dict for every type, or
//      the family's own split (Gemma 3, OLMo 3);
//   5. per layer type, the RopeConfig with standardize_rope_params' precedence (rope_theta in the
//      dict, then the config, then the class default; a top-level original_max_position_embeddings
//      wins over the dict's for llama3 / yarn / longrope), validated and computed once.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/core/guard.h"
#include "lib/core/status_util.h"
#include "lib/freqs/hf_families.h"
#include "lib/freqs/json_fields.h"
#include "lib/freqs/scaling.h"
#include "posenc/freqs.h"
#include "posenc/model.h"

namespace posenc {
namespace {

using core::Err;
using freqs::json;
constexpr auto kInvalid = StatusCode::kInvalidArgument;
// A bound on the layer count a config may give (the per-layer list is allocated from it).
constexpr int64_t kMaxLayers = 65536;

// Where a model's fields are read: the text config, then the family's aliases, then the family's
// defaults (the config class's __init__ defaults).
class Source {
 public:
  Source(const json& obj, std::string path, const freqs::HfFamily& family)
      : obj_(obj), path_(std::move(path)), family_(family), defaults_(json::parse(family.defaults)) {
    std::stringstream ss(family.aliases);
    std::string item;
    while (std::getline(ss, item, ',')) {
      const size_t eq = item.find('=');
      if (eq != std::string::npos) aliases_.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
  }

  const freqs::HfFamily& family() const { return family_; }
  const std::string& path() const { return path_; }
  const json& obj() const { return obj_; }

  // The object holding `canonical` (or its alias) and the key as written there.
  std::pair<const json*, std::string> Find(const std::string& canonical) const {
    if (freqs::Present(obj_, canonical.c_str())) return {&obj_, canonical};
    for (const auto& [alias, name] : aliases_) {
      if (name == canonical && freqs::Present(obj_, alias.c_str())) return {&obj_, alias};
    }
    if (freqs::Present(defaults_, canonical.c_str())) return {&defaults_, canonical};
    return {nullptr, canonical};
  }
  bool Has(const std::string& canonical) const { return Find(canonical).first != nullptr; }

  template <class T, class Getter>
  Status Read(const std::string& canonical, Getter get, std::optional<T>* out) const {
    const auto [holder, key] = Find(canonical);
    if (holder == nullptr) return Status::Ok();
    return get(*holder, key.c_str(), holder == &defaults_ ? std::string() : path_, out);
  }
  Status Int(const std::string& k, std::optional<int64_t>* out) const { return Read(k, freqs::GetInt, out); }
  Status Number(const std::string& k, std::optional<double>* out) const {
    return Read(k, freqs::GetNumber, out);
  }

 private:
  const json& obj_;
  std::string path_;
  const freqs::HfFamily& family_;
  json defaults_;
  std::vector<std::pair<std::string, std::string>> aliases_;
};

// The model-wide fields every layer type shares.
struct Common {
  std::optional<int64_t> heads, kv_heads, hidden, layers, max_pos, original;
  std::optional<double> rope_theta, partial;
};

Status ReadCommon(const Source& s, Common* c) {
  POSENC_RETURN_IF_ERROR(s.Int("num_attention_heads", &c->heads));
  POSENC_RETURN_IF_ERROR(s.Int("num_key_value_heads", &c->kv_heads));
  if (s.family().head == freqs::HeadRule::kKvChannels) {  // ChatGLM: multi-query groups
    std::optional<bool> mqa;
    POSENC_RETURN_IF_ERROR(freqs::GetBool(s.obj(), "multi_query_attention", s.path(), &mqa));
    if (mqa && *mqa) POSENC_RETURN_IF_ERROR(s.Int("multi_query_group_num", &c->kv_heads));
  }
  if (!c->kv_heads) c->kv_heads = c->heads;
  POSENC_RETURN_IF_ERROR(s.Int("hidden_size", &c->hidden));
  POSENC_RETURN_IF_ERROR(s.Int("num_hidden_layers", &c->layers));
  POSENC_RETURN_IF_ERROR(s.Int("max_position_embeddings", &c->max_pos));
  POSENC_RETURN_IF_ERROR(s.Int("original_max_position_embeddings", &c->original));
  // rope_theta at top level (GPT-NeoX: rotary_emb_base); partial_rotary_factor (rotary_pct).
  POSENC_RETURN_IF_ERROR(s.Number("rope_theta", &c->rope_theta));
  if (!c->rope_theta) POSENC_RETURN_IF_ERROR(freqs::GetNumber(s.obj(), "rotary_emb_base", s.path(), &c->rope_theta));
  POSENC_RETURN_IF_ERROR(s.Number("partial_rotary_factor", &c->partial));
  if (!c->partial) POSENC_RETURN_IF_ERROR(freqs::GetNumber(s.obj(), "rotary_pct", s.path(), &c->partial));
  if (c->layers && (*c->layers <= 0 || *c->layers > kMaxLayers)) {
    return Err(kInvalid, s.path(), "num_hidden_layers = ", *c->layers, ": must be in [1, ", kMaxLayers, "]");
  }
  return Status::Ok();
}

// Per layer: its type name and whether it has RoPE. Empty when the layer count is unknown.
struct Layers {
  std::vector<std::string> type;
  std::vector<bool> rope;
};

Status ReadLayers(const Source& s, const Common& c, Layers* out) {
  const freqs::HfFamily& f = s.family();
  std::optional<std::vector<std::string>> given;
  POSENC_RETURN_IF_ERROR(freqs::GetStringList(s.obj(), "layer_types", s.path(), &given));
  if (given && c.layers && static_cast<int64_t>(given->size()) != *c.layers) {
    return Err(kInvalid, s.path(), "layer_types has ", given->size(), " entries: must have num_hidden_layers = ",
               *c.layers);
  }
  if (given && static_cast<int64_t>(given->size()) > kMaxLayers) {
    return Err(kInvalid, s.path(), "layer_types has ", given->size(), " entries: at most ", kMaxLayers);
  }
  const int64_t n = given ? static_cast<int64_t>(given->size()) : c.layers.value_or(0);
  out->rope.assign(static_cast<size_t>(n), true);
  // NoPE layers: no_rope_layers[i] == 0 (SmolLM3Config, Llama4TextConfig).
  if (f.no_rope == freqs::NoRopeRule::kNoRopeLayers && n > 0) {
    std::optional<std::vector<int64_t>> flags;
    POSENC_RETURN_IF_ERROR(freqs::GetIntList(s.obj(), "no_rope_layers", s.path(), &flags));
    const std::vector<int64_t> list = flags.value_or(std::vector<int64_t>());
    // Llama 4 treats an empty list as absent (`no_rope_layers if no_rope_layers else default`).
    const bool listed = flags.has_value() && !(list.empty() && f.layers == freqs::LayerRule::kLlama4);
    if (listed) {
      if (static_cast<int64_t>(list.size()) < n) {
        return Err(kInvalid, s.path(), "no_rope_layers has ", list.size(), " entries: needs one per layer (",
                   n, ")");
      }
      for (int64_t i = 0; i < n; ++i) out->rope[i] = list[i] != 0;
    } else {
      std::optional<int64_t> interval;
      POSENC_RETURN_IF_ERROR(freqs::GetInt(s.obj(), "no_rope_layer_interval", s.path(), &interval));
      const int64_t k = interval.value_or(4);
      if (k <= 0) return Err(kInvalid, s.path(), "no_rope_layer_interval = ", k, ": must be > 0");
      for (int64_t i = 0; i < n; ++i) out->rope[i] = (i + 1) % k != 0;
    }
  }
  if (given) {
    out->type = *given;
  } else {
    out->type.assign(static_cast<size_t>(n), "full_attention");
    if (f.layers == freqs::LayerRule::kSlidingEvery) {
      std::optional<int64_t> pattern;
      POSENC_RETURN_IF_ERROR(freqs::GetInt(s.obj(), "sliding_window_pattern", s.path(), &pattern));
      if (!pattern) POSENC_RETURN_IF_ERROR(freqs::GetInt(s.obj(), "_sliding_window_pattern", s.path(), &pattern));
      const int64_t k = pattern.value_or(f.pattern);
      if (k <= 0) return Err(kInvalid, s.path(), "sliding_window_pattern = ", k, ": must be > 0");
      for (int64_t i = 0; i < n; ++i) out->type[i] = (i + 1) % k != 0 ? "sliding_attention" : "full_attention";
      if (f.typed == freqs::TypedRule::kGemma4 && n > 0) out->type[n - 1] = "full_attention";
    } else if (f.layers == freqs::LayerRule::kLlama4) {
      for (int64_t i = 0; i < n; ++i) out->type[i] = out->rope[i] ? "chunked_attention" : "full_attention";
    }
  }
  if (f.no_rope == freqs::NoRopeRule::kFullAttention) {  // Cohere2
    for (int64_t i = 0; i < n; ++i) out->rope[i] = out->type[i] != "full_attention";
  }
  return Status::Ok();
}

// The rope dict(s): `rope_scaling` when a non-empty object, else `rope_parameters`.
struct RopeDicts {
  const json* dict = nullptr;  // nullptr: none
  std::string key;             // as written, with the path
  bool per_type = false;       // keys are layer type names
};

Status ReadRopeDicts(const Source& s, const std::set<std::string>& type_names, RopeDicts* out) {
  const json* scaling = nullptr;
  const json* params = nullptr;
  POSENC_RETURN_IF_ERROR(freqs::GetObject(s.obj(), "rope_scaling", s.path(), &scaling));
  POSENC_RETURN_IF_ERROR(freqs::GetObject(s.obj(), "rope_parameters", s.path(), &params));
  if (scaling != nullptr && !scaling->empty()) {
    out->dict = scaling;
    out->key = s.path() + "rope_scaling";
  } else if (params != nullptr) {
    out->dict = params;
    out->key = s.path() + "rope_parameters";
  }
  if (out->dict == nullptr || out->dict->empty()) return Status::Ok();
  bool per_type = true;
  for (const auto& [k, v] : out->dict->items()) {
    if (!v.is_object() || type_names.count(k) == 0) per_type = false;
  }
  out->per_type = per_type;
  return Status::Ok();
}

Status ParseRopeType(const json& d, const std::string& dict_key, RopeConfig* c, bool* mrope_type) {
  std::optional<std::string> name;
  const char* key = freqs::Present(d, "rope_type") ? "rope_type" : "type";
  POSENC_RETURN_IF_ERROR(freqs::GetString(d, key, dict_key + ".", &name));
  *mrope_type = false;
  if (!name || *name == "default") {
    c->rope_type = RopeType::kDefault;
    return Status::Ok();
  }
  if (*name == "mrope") {  // Qwen2-VL / Qwen2.5-VL: default frequencies, sectioned positions
    c->rope_type = RopeType::kDefault;
    *mrope_type = true;
    return Status::Ok();
  }
  const freqs::RopeTypeEntry* e = freqs::FindRopeType(*name);  // a name or an alias ("su")
  if (e == nullptr) {
    return Err(kInvalid, dict_key, ".", key, " = \"", *name, "\": unknown rope type (expected ",
               freqs::RopeTypeNames(), ", ", freqs::RopeTypeAliases(), " or mrope)");
  }
  c->rope_type = e->type;
  return Status::Ok();
}

// The scaling keys of one rope dict.
Status ReadScalingKeys(const json& d, const std::string& dict_key, RopeConfig* c) {
  const std::string p = dict_key + ".";
  POSENC_RETURN_IF_ERROR(freqs::GetNumber(d, "factor", p, &c->factor));
  POSENC_RETURN_IF_ERROR(freqs::GetNumber(d, "alpha", p, &c->alpha));
  POSENC_RETURN_IF_ERROR(freqs::GetNumber(d, "beta_fast", p, &c->beta_fast));
  POSENC_RETURN_IF_ERROR(freqs::GetNumber(d, "beta_slow", p, &c->beta_slow));
  POSENC_RETURN_IF_ERROR(freqs::GetNumber(d, "mscale", p, &c->mscale));
  POSENC_RETURN_IF_ERROR(freqs::GetNumber(d, "mscale_all_dim", p, &c->mscale_all_dim));
  POSENC_RETURN_IF_ERROR(freqs::GetNumber(d, "attention_factor", p, &c->attention_factor));
  std::optional<bool> truncate;
  POSENC_RETURN_IF_ERROR(freqs::GetBool(d, "truncate", p, &truncate));
  c->truncate = truncate.value_or(true);
  POSENC_RETURN_IF_ERROR(freqs::GetNumber(d, "low_freq_factor", p, &c->low_freq_factor));
  POSENC_RETURN_IF_ERROR(freqs::GetNumber(d, "high_freq_factor", p, &c->high_freq_factor));
  POSENC_RETURN_IF_ERROR(freqs::GetNumberList(d, "short_factor", p, &c->short_factor));
  POSENC_RETURN_IF_ERROR(freqs::GetNumberList(d, "long_factor", p, &c->long_factor));
  std::optional<std::vector<int64_t>> section;
  POSENC_RETURN_IF_ERROR(freqs::GetIntList(d, "mrope_section", p, &section));
  if (section) c->mrope.section = *section;
  std::optional<bool> interleaved;
  POSENC_RETURN_IF_ERROR(freqs::GetBool(d, "mrope_interleaved", p, &interleaved));
  c->mrope.interleaved = interleaved.value_or(false);
  if (c->mrope.interleaved && !c->mrope.present()) {
    return Err(kInvalid, p, "mrope_interleaved is set without mrope_section");
  }
  return Status::Ok();
}

// rope_theta of a layer type whose dict does not give one: the family's convert_rope_params_to_dict.
double FallbackTheta(const freqs::HfFamily& f, const std::string& type, const Common& c,
                     const std::optional<double>& local_base) {
  switch (f.typed) {
    case freqs::TypedRule::kGemma3:  // Gemma3TextConfig: default_theta {global 1e6, local 1e4}
      if (type == "sliding_attention") return local_base.value_or(10000.0);
      return c.rope_theta.value_or(1000000.0);
    case freqs::TypedRule::kOlmo3:
      // Olmo3Config pops rope_theta for full_attention first, so sliding_attention always gets
      // default_theta (5e5) unless its own dict names one. Reproduced as HF computes it.
      if (type == "sliding_attention") return f.default_theta;
      return c.rope_theta.value_or(f.default_theta);
    case freqs::TypedRule::kGemma4:  // Gemma4TextConfig default_rope_params
      return type == "sliding_attention" ? 10000.0 : 1000000.0;
    case freqs::TypedRule::kShared:
      break;
  }
  return c.rope_theta.value_or(f.default_theta);
}

// The RopeConfig of layer type `type`, whose dict is `d` (an empty object: none).
Status BuildConfig(const Source& s, const Common& c, const std::string& type, const json& d,
                   const std::string& dict_key, bool per_type, RopeConfig* out) {
  const freqs::HfFamily& f = s.family();
  RopeConfig r;
  r.dict_key = dict_key;
  bool mrope_type = false;
  POSENC_RETURN_IF_ERROR(ParseRopeType(d, dict_key, &r, &mrope_type));
  POSENC_RETURN_IF_ERROR(ReadScalingKeys(d, dict_key, &r));
  if (mrope_type && !r.mrope.present()) {
    return Err(kInvalid, dict_key, ".mrope_section: missing (required by rope type mrope)");
  }

  // rope_theta: the dict, then the family's rule (top level, class default).
  std::optional<double> theta, local_base;
  POSENC_RETURN_IF_ERROR(freqs::GetNumber(d, "rope_theta", dict_key + ".", &theta));
  POSENC_RETURN_IF_ERROR(freqs::GetNumber(s.obj(), "rope_local_base_freq", s.path(), &local_base));
  r.rope_theta = theta ? *theta : FallbackTheta(f, type, c, local_base);
  if (f.theta == freqs::ThetaRule::kGptjFixed) r.rope_theta = 10000.0;
  if (f.theta == freqs::ThetaRule::kChatGlmRatio) {
    std::optional<double> ratio;
    POSENC_RETURN_IF_ERROR(s.Number("rope_ratio", &ratio));
    r.rope_theta = 10000.0 * ratio.value_or(1.0);
  }

  // head_dim.
  std::optional<int64_t> head;
  if (f.typed == freqs::TypedRule::kGemma4 && type == "full_attention") {
    POSENC_RETURN_IF_ERROR(s.Int("global_head_dim", &head));
  } else if (f.head == freqs::HeadRule::kQkRopeHeadDim) {
    POSENC_RETURN_IF_ERROR(s.Int("qk_rope_head_dim", &head));
  } else if (f.head == freqs::HeadRule::kKvChannels) {
    POSENC_RETURN_IF_ERROR(s.Int("kv_channels", &head));
  }
  if (!head || *head == 0) POSENC_RETURN_IF_ERROR(s.Int("head_dim", &head));
  if (!head || *head == 0) POSENC_RETURN_IF_ERROR(s.Int("qk_rope_head_dim", &head));
  if (!head || *head == 0) {  // `getattr(config, "head_dim", None) or hidden_size // heads`
    if (!c.hidden || !c.heads || *c.hidden <= 0 || *c.heads <= 0) {
      return Err(kInvalid, s.path(), "head_dim: missing, and hidden_size / num_attention_heads cannot "
                 "derive it (hidden_size = ", c.hidden.value_or(0), ", num_attention_heads = ",
                 c.heads.value_or(0), ")");
    }
    head = *c.hidden / *c.heads;
  }
  if (*head <= 0 || *head > kMaxHeadDim) {
    return Err(kInvalid, s.path(), "head_dim = ", *head, ": must be > 0 and <= ", kMaxHeadDim);
  }
  r.head_dim = *head;

  // rotary_dim / partial_rotary_factor.
  if (f.rotary == freqs::RotaryRule::kGptjRotaryDim) {
    std::optional<int64_t> rd;
    POSENC_RETURN_IF_ERROR(s.Int("rotary_dim", &rd));
    if (rd && *rd != 0) r.rotary_dim = *rd;  // null: the whole head
  } else if (f.rotary == freqs::RotaryRule::kHalfOfHead) {
    r.rotary_dim = r.head_dim / 2;  // ChatGLM: RotaryEmbedding(rotary_dim // 2)
  }
  std::optional<double> partial;
  POSENC_RETURN_IF_ERROR(freqs::GetNumber(d, "partial_rotary_factor", dict_key + ".", &partial));
  r.partial_rotary_factor = partial ? *partial : c.partial.value_or(f.default_partial);

  // Pair layout.
  r.pairs = f.pairs == freqs::PairRule::kHalf ? PairLayout::kHalf : PairLayout::kInterleaved;
  if (f.pairs == freqs::PairRule::kRopeInterleaveKey) {
    std::optional<bool> interleave;
    POSENC_RETURN_IF_ERROR(freqs::GetBool(s.obj(), "rope_interleave", s.path(), &interleave));
    r.pairs = interleave.value_or(true) ? PairLayout::kInterleaved : PairLayout::kHalf;
  }

  // Lengths. standardize_rope_params: for llama3 / yarn / longrope a top-level
  // original_max_position_embeddings wins over the dict's (one global dict only); absent, the
  // original length defaults to max_position_embeddings.
  r.max_position_embeddings = c.max_pos;
  std::optional<int64_t> dict_original;
  POSENC_RETURN_IF_ERROR(freqs::GetInt(d, "original_max_position_embeddings", dict_key + ".", &dict_original));
  const bool scaled = freqs::FindRopeType(r.rope_type)->standardized_original;
  if (scaled && !per_type && c.original) {
    r.original_max_position_embeddings = c.original;
  } else if (dict_original) {
    r.original_max_position_embeddings = dict_original;
  } else if (scaled) {
    r.original_max_position_embeddings = c.max_pos;
  } else {
    r.original_max_position_embeddings = c.original;
  }
  r.num_attention_heads = c.heads.value_or(0);
  r.num_key_value_heads = c.kv_heads.value_or(0);

  // Validate, and compute what the config yields (at L = 0 and beyond every switch length), so
  // a config whose frequencies are not finite fails here, naming its keys.
  RopeFrequencies probe;
  POSENC_RETURN_IF_ERROR(ComputeFrequencies(r, 0, &probe));
  const int64_t m0 = freqs::OriginalLength(r);
  if (freqs::LengthRuleOf(r.rope_type) == freqs::LengthRule::kSwitchesAtOriginal && m0 < INT64_MAX) {
    POSENC_RETURN_IF_ERROR(ComputeFrequencies(r, m0 + 1, &probe));
  }
  *out = std::move(r);
  return Status::Ok();
}

Status ParseModelDocument(const json& doc, ModelRope* out) {
  if (!doc.is_object()) return Err(kInvalid, "config: expected a JSON object, got ", doc.type_name());
  // 1. The text model's config.
  const json* text = nullptr;
  POSENC_RETURN_IF_ERROR(freqs::GetObject(doc, "text_config", "", &text));
  const json& t = text != nullptr ? *text : doc;
  const std::string path = text != nullptr ? "text_config." : "";
  std::optional<std::string> model_type, parent_type;
  POSENC_RETURN_IF_ERROR(freqs::GetString(t, "model_type", path, &model_type));
  POSENC_RETURN_IF_ERROR(freqs::GetString(doc, "model_type", "", &parent_type));
  std::string mt = model_type ? *model_type : parent_type.value_or("");
  mt = freqs::TextModelType(mt);
  // 2. Its family.
  const Source s(t, path, freqs::FindFamily(mt));
  Common c;
  POSENC_RETURN_IF_ERROR(ReadCommon(s, &c));
  // 3. Layers.
  Layers layers;
  POSENC_RETURN_IF_ERROR(ReadLayers(s, c, &layers));
  std::vector<std::string> names;  // RoPE layer types, in order of first use
  for (size_t i = 0; i < layers.type.size(); ++i) {
    if (layers.rope[i] && std::find(names.begin(), names.end(), layers.type[i]) == names.end()) {
      names.push_back(layers.type[i]);
    }
  }
  // 4. Rope dicts.
  std::set<std::string> all_names(layers.type.begin(), layers.type.end());
  if (layers.type.empty()) all_names = {"full_attention", "sliding_attention", "chunked_attention"};
  RopeDicts dicts;
  POSENC_RETURN_IF_ERROR(ReadRopeDicts(s, all_names, &dicts));
  const freqs::HfFamily& f = s.family();
  const bool typed = f.typed != freqs::TypedRule::kShared;
  if (layers.type.empty()) {  // unknown layer count: the types the dicts or the family name
    if (dicts.per_type) {
      for (const auto& [k, v] : dicts.dict->items()) names.push_back(k);
    } else if (typed) {
      names = {"sliding_attention", "full_attention"};
    } else {
      names = {"full_attention"};
    }
  }
  if (names.empty()) return Err(kInvalid, path, "layer types: no layer has RoPE");
  // Gemma 4 without a rope dict: Gemma4TextConfig's default_rope_params.
  json gemma4_defaults;
  if (f.typed == freqs::TypedRule::kGemma4 && (dicts.dict == nullptr || dicts.dict->empty())) {
    gemma4_defaults = json::parse(R"({"sliding_attention": {"rope_type": "default"},
        "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25}})");
    dicts.dict = &gemma4_defaults;
    dicts.key = path + "rope_parameters";
    dicts.per_type = true;
  }
  // 5. One RopeConfig per RoPE layer type.
  static const json kEmpty = json::object();
  ModelRope m;
  m.model_type = mt;
  for (const std::string& name : names) {
    const json* d = &kEmpty;
    std::string dict_key = dicts.key.empty() ? path + "rope_scaling" : dicts.key;
    if (dicts.per_type) {
      if (!dicts.dict->contains(name)) {
        return Err(kInvalid, dicts.key, ": has no entry for layer type \"", name, "\"");
      }
      d = &dicts.dict->at(name);
      dict_key = dicts.key + "." + name;
    } else if (dicts.dict != nullptr && (!typed || name == "full_attention")) {
      d = dicts.dict;  // Gemma 3 / OLMo 3: a flat dict scales the full-attention layers only
    }
    RopeLayerType lt;
    lt.name = name;
    POSENC_RETURN_IF_ERROR(BuildConfig(s, c, name, *d, dict_key, dicts.per_type, &lt.config));
    m.layer_types.push_back(std::move(lt));
  }
  m.layers.resize(layers.type.size(), ModelRope::kNoRope);
  for (size_t i = 0; i < layers.type.size(); ++i) {
    if (!layers.rope[i]) continue;
    m.layers[i] = static_cast<int>(std::find(names.begin(), names.end(), layers.type[i]) - names.begin());
  }
  // DeepSeek: softmax scale * mscale(factor, mscale_all_dim)^2 when RoPE is scaled
  // (DeepseekV3Attention.__init__).
  const RopeConfig& first = m.layer_types[0].config;
  if (f.deepseek_softmax && first.rope_type == RopeType::kYarn && first.mscale_all_dim &&
      *first.mscale_all_dim != 0.0) {
    const double ms = freqs::YarnMscale(freqs::YarnFactor(first), *first.mscale_all_dim);
    m.softmax_scale_factor = ms * ms;
  }
  *out = std::move(m);
  return Status::Ok();
}

std::string JoinTypeNames(const ModelRope& m) {
  std::string s;
  for (const RopeLayerType& t : m.layer_types) s += (s.empty() ? "" : ", ") + t.name;
  return s;
}

}  // namespace

Status ParseHfModel(const std::string& json_text, ModelRope* out) {
  return core::Guarded("posenc::ParseHfModel", [&] {
    if (out == nullptr) return Err(kInvalid, "out is null");
    return freqs::ParseJsonText(json_text, [&](const json& doc) { return ParseModelDocument(doc, out); });
  });
}

Status LoadHfModel(const std::string& path, ModelRope* out) {
  return core::Guarded("posenc::LoadHfModel", [&] {
    if (out == nullptr) return Err(kInvalid, "out is null");
    std::string text;
    Status st = freqs::ReadConfigFile(path, &text);
    if (st.ok()) st = ParseHfModel(text, out);
    if (!st.ok() && st.message().rfind("config path", 0) != 0) return Status(st.code(), path + ": " + st.message());
    return st;
  });
}

bool SingleRope(const ModelRope& m) {
  for (const RopeLayerType& t : m.layer_types) {
    if (t.config != m.layer_types[0].config) return false;
  }
  return !m.layer_types.empty();
}

Status ParseHfConfig(const std::string& json_text, RopeConfig* out) {
  return core::Guarded("posenc::ParseHfConfig", [&] {
    if (out == nullptr) return Err(kInvalid, "out is null");
    ModelRope m;
    Status st = ParseHfModel(json_text, &m);
    if (!st.ok()) return st;
    if (!SingleRope(m)) {
      return Err(kInvalid, "config: the model has ", m.layer_types.size(), " RoPE layer types with different RoPE (",
                 JoinTypeNames(m), "): load it with LoadHfModel and apply the RoPE of a layer type");
    }
    *out = m.layer_types[0].config;
    return Status::Ok();
  });
}

Status LoadHfConfig(const std::string& path, RopeConfig* out) {
  return core::Guarded("posenc::LoadHfConfig", [&] {
    if (out == nullptr) return Err(kInvalid, "out is null");
    std::string text;
    Status st = freqs::ReadConfigFile(path, &text);
    if (st.ok()) st = ParseHfConfig(text, out);
    if (!st.ok() && st.message().rfind("config path", 0) != 0) return Status(st.code(), path + ": " + st.message());
    return st;
  });
}

}  // namespace posenc
