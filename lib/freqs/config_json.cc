// Hugging Face config.json -> RopeConfig (nlohmann-json). Every error names the key.
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "lib/api/tensor_checks.h"
#include "lib/freqs/scaling.h"
#include "posenc/freqs.h"

namespace posenc {
namespace {

using api::Err;
using nlohmann::json;
constexpr auto kInvalid = StatusCode::kInvalidArgument;

const char* JsonTypeName(const json& j) { return j.type_name(); }

bool Present(const json& obj, const char* key) {
  return obj.is_object() && obj.contains(key) && !obj.at(key).is_null();
}

// Reads obj[key] as a number into *out when present (null counts as absent).
Status GetNumber(const json& obj, const char* key, const std::string& path, double* out,
                 bool* found = nullptr) {
  if (found) *found = false;
  if (!Present(obj, key)) return Status::Ok();
  const json& v = obj.at(key);
  if (!v.is_number()) {
    return Err(kInvalid, path, key, ": expected a number, got ", JsonTypeName(v), " ", v.dump());
  }
  *out = v.get<double>();
  if (found) *found = true;
  return Status::Ok();
}

Status GetInt(const json& obj, const char* key, const std::string& path, int64_t* out) {
  if (!Present(obj, key)) return Status::Ok();
  const json& v = obj.at(key);
  if (v.is_number_integer() || v.is_number_unsigned()) {
    *out = v.get<int64_t>();
    return Status::Ok();
  }
  if (v.is_number_float() && v.get<double>() == std::floor(v.get<double>())) {
    *out = static_cast<int64_t>(v.get<double>());
    return Status::Ok();
  }
  return Err(kInvalid, path, key, ": expected an integer, got ", JsonTypeName(v), " ", v.dump());
}

Status GetOptional(const json& obj, const char* key, const std::string& path,
                   std::optional<double>* out) {
  double v = 0;
  bool found = false;
  Status st = GetNumber(obj, key, path, &v, &found);
  if (st.ok() && found) *out = v;
  return st;
}

Status GetList(const json& obj, const char* key, const std::string& path, std::vector<double>* out) {
  if (!Present(obj, key)) return Status::Ok();
  const json& v = obj.at(key);
  if (!v.is_array()) {
    return Err(kInvalid, path, key, ": expected a list of numbers, got ", JsonTypeName(v));
  }
  std::vector<double> list;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number()) {
      return Err(kInvalid, path, key, "[", i, "]: expected a number, got ", JsonTypeName(v[i]));
    }
    list.push_back(v[i].get<double>());
  }
  *out = std::move(list);
  return Status::Ok();
}

Status ParseRopeType(const json& dict, const std::string& path, RopeType* out) {
  const char* key = Present(dict, "rope_type") ? "rope_type" : (Present(dict, "type") ? "type" : nullptr);
  if (key == nullptr) {
    *out = RopeType::kDefault;
    return Status::Ok();
  }
  const json& v = dict.at(key);
  if (!v.is_string()) {
    return Err(kInvalid, path, key, ": expected a string, got ", JsonTypeName(v), " ", v.dump());
  }
  const std::string name = v.get<std::string>();
  static const std::pair<const char*, RopeType> kNames[] = {
      {"default", RopeType::kDefault}, {"linear", RopeType::kLinear},
      {"dynamic", RopeType::kDynamic}, {"ntk", RopeType::kNtk},
      {"yarn", RopeType::kYarn},       {"llama3", RopeType::kLlama3},
      {"longrope", RopeType::kLongRope}, {"su", RopeType::kLongRope}};
  for (const auto& [n, t] : kNames) {
    if (name == n) {
      *out = t;
      return Status::Ok();
    }
  }
  return Err(kInvalid, path, key, " = \"", name,
             "\": unknown rope type (expected default, linear, dynamic, ntk, yarn, llama3, "
             "longrope or su)");
}

#define POSENC_RETURN_IF_ERROR(expr) \
  do {                               \
    Status _st = (expr);             \
    if (!_st.ok()) return _st;       \
  } while (0)

Status ParseDocument(const json& doc, RopeConfig* out) {
  if (!doc.is_object()) return Err(kInvalid, "config: expected a JSON object, got ", JsonTypeName(doc));
  RopeConfig c;
  // The rope dict: rope_parameters (newer HF) or rope_scaling (older); null means none.
  json dict = json::object();
  for (const char* key : {"rope_parameters", "rope_scaling"}) {
    if (!Present(doc, key)) continue;
    if (!doc.at(key).is_object()) {
      return Err(kInvalid, key, ": expected an object or null, got ", JsonTypeName(doc.at(key)));
    }
    dict = doc.at(key);
    c.dict_key = key;
    break;
  }
  const std::string d = c.dict_key + ".";
  POSENC_RETURN_IF_ERROR(ParseRopeType(dict, d, &c.rope_type));

  // rope_theta: in the dict (newer), top level, or GPT-NeoX's rotary_emb_base.
  if (Present(dict, "rope_theta")) {
    POSENC_RETURN_IF_ERROR(GetNumber(dict, "rope_theta", d, &c.rope_theta));
  } else if (Present(doc, "rope_theta")) {
    POSENC_RETURN_IF_ERROR(GetNumber(doc, "rope_theta", "", &c.rope_theta));
  } else {
    POSENC_RETURN_IF_ERROR(GetNumber(doc, "rotary_emb_base", "", &c.rope_theta));
  }

  // head_dim, else qk_rope_head_dim (DeepSeek), else hidden_size / num_attention_heads.
  POSENC_RETURN_IF_ERROR(GetInt(doc, "num_attention_heads", "", &c.num_attention_heads));
  POSENC_RETURN_IF_ERROR(GetInt(doc, "num_key_value_heads", "", &c.num_key_value_heads));
  if (c.num_key_value_heads == 0) c.num_key_value_heads = c.num_attention_heads;
  if (Present(doc, "head_dim")) {
    POSENC_RETURN_IF_ERROR(GetInt(doc, "head_dim", "", &c.head_dim));
  } else if (Present(doc, "qk_rope_head_dim")) {
    POSENC_RETURN_IF_ERROR(GetInt(doc, "qk_rope_head_dim", "", &c.head_dim));
  } else {
    int64_t hidden = 0;
    POSENC_RETURN_IF_ERROR(GetInt(doc, "hidden_size", "", &hidden));
    if (hidden <= 0 || c.num_attention_heads <= 0) {
      return Err(kInvalid, "head_dim: missing, and hidden_size / num_attention_heads cannot "
                           "derive it (hidden_size = ", hidden, ", num_attention_heads = ",
                 c.num_attention_heads, ")");
    }
    c.head_dim = hidden / c.num_attention_heads;
  }

  if (Present(dict, "partial_rotary_factor")) {
    POSENC_RETURN_IF_ERROR(GetNumber(dict, "partial_rotary_factor", d, &c.partial_rotary_factor));
  } else if (Present(doc, "partial_rotary_factor")) {
    POSENC_RETURN_IF_ERROR(GetNumber(doc, "partial_rotary_factor", "", &c.partial_rotary_factor));
  } else {
    POSENC_RETURN_IF_ERROR(GetNumber(doc, "rotary_pct", "", &c.partial_rotary_factor));
  }
  POSENC_RETURN_IF_ERROR(GetInt(doc, "max_position_embeddings", "", &c.max_position_embeddings));
  if (Present(dict, "original_max_position_embeddings")) {
    POSENC_RETURN_IF_ERROR(GetInt(dict, "original_max_position_embeddings", d,
                                  &c.original_max_position_embeddings));
  } else {
    POSENC_RETURN_IF_ERROR(GetInt(doc, "original_max_position_embeddings", "",
                                  &c.original_max_position_embeddings));
  }

  POSENC_RETURN_IF_ERROR(GetOptional(dict, "factor", d, &c.factor));
  POSENC_RETURN_IF_ERROR(GetNumber(dict, "alpha", d, &c.alpha));
  POSENC_RETURN_IF_ERROR(GetNumber(dict, "beta_fast", d, &c.beta_fast));
  POSENC_RETURN_IF_ERROR(GetNumber(dict, "beta_slow", d, &c.beta_slow));
  POSENC_RETURN_IF_ERROR(GetOptional(dict, "mscale", d, &c.mscale));
  POSENC_RETURN_IF_ERROR(GetOptional(dict, "mscale_all_dim", d, &c.mscale_all_dim));
  POSENC_RETURN_IF_ERROR(GetOptional(dict, "attention_factor", d, &c.attention_factor));
  if (Present(dict, "truncate")) {
    if (!dict.at("truncate").is_boolean()) {
      return Err(kInvalid, d, "truncate: expected a boolean, got ", JsonTypeName(dict.at("truncate")));
    }
    c.truncate = dict.at("truncate").get<bool>();
  }
  if (c.rope_type == RopeType::kLlama3) {
    for (const char* key : {"low_freq_factor", "high_freq_factor"}) {
      if (!Present(dict, key)) return Err(kInvalid, d, key, ": missing (required by rope_type llama3)");
    }
  }
  POSENC_RETURN_IF_ERROR(GetNumber(dict, "low_freq_factor", d, &c.low_freq_factor));
  POSENC_RETURN_IF_ERROR(GetNumber(dict, "high_freq_factor", d, &c.high_freq_factor));
  if (c.rope_type == RopeType::kLongRope) {
    for (const char* key : {"short_factor", "long_factor"}) {
      if (!Present(dict, key)) return Err(kInvalid, d, key, ": missing (required by rope_type longrope)");
    }
  }
  if (c.rope_type == RopeType::kNtk && !Present(dict, "alpha")) {
    return Err(kInvalid, d, "alpha: missing (required by rope_type ntk)");
  }
  POSENC_RETURN_IF_ERROR(GetList(dict, "short_factor", d, &c.short_factor));
  POSENC_RETURN_IF_ERROR(GetList(dict, "long_factor", d, &c.long_factor));

  int64_t rotary_dim = 0;
  POSENC_RETURN_IF_ERROR(freqs::ValidateConfig(c, &rotary_dim));
  *out = std::move(c);
  return Status::Ok();
}

}  // namespace

Status ParseHfConfig(const std::string& json_text, RopeConfig* out) {
  if (out == nullptr) return Err(kInvalid, "out is null");
  try {
    return ParseDocument(json::parse(json_text), out);
  } catch (const json::exception& e) {
    return Err(kInvalid, "config: invalid JSON: ", e.what());
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInternal, "out of memory");
  }
}

Status LoadHfConfig(const std::string& path, RopeConfig* out) {
  std::ifstream f(path);
  if (!f) return Err(kInvalid, "config path \"", path, "\": cannot open");
  std::stringstream ss;
  ss << f.rdbuf();
  Status st = ParseHfConfig(ss.str(), out);
  if (!st.ok()) return Status(st.code(), path + ": " + st.message());
  return st;
}

}  // namespace posenc
