// The C API of model configs (posenc_config_*) and models (posenc_model_*): thin translation to
// posenc/freqs.h and posenc/model.h through the shared guard of c_api_internal.h.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "lib/api/c_api_internal.h"
#include "lib/freqs/scaling.h"
#include "posenc/freqs.h"
#include "posenc/model.h"
#include "posenc/posenc.h"

namespace {

using posenc::Status;
using posenc::StatusCode;
using posenc::capi::Guard;
using posenc::capi::RawEnum;

// The C enums are the C++ ones.
static_assert(POSENC_ROPE_DEFAULT == static_cast<int>(posenc::RopeType::kDefault) &&
                  POSENC_ROPE_LINEAR == static_cast<int>(posenc::RopeType::kLinear) &&
                  POSENC_ROPE_DYNAMIC == static_cast<int>(posenc::RopeType::kDynamic) &&
                  POSENC_ROPE_NTK == static_cast<int>(posenc::RopeType::kNtk) &&
                  POSENC_ROPE_YARN == static_cast<int>(posenc::RopeType::kYarn) &&
                  POSENC_ROPE_LLAMA3 == static_cast<int>(posenc::RopeType::kLlama3) &&
                  POSENC_ROPE_LONGROPE == static_cast<int>(posenc::RopeType::kLongRope) &&
                  POSENC_ROPE_PROPORTIONAL == static_cast<int>(posenc::RopeType::kProportional),
              "posenc_rope_type must match posenc::RopeType");
static_assert(POSENC_PAIRS_HALF == static_cast<int>(posenc::PairLayout::kHalf) &&
                  POSENC_PAIRS_INTERLEAVED == static_cast<int>(posenc::PairLayout::kInterleaved) &&
                  POSENC_PAIRS_FROM_CONFIG == static_cast<int>(posenc::PairLayout::kFromConfig),
              "posenc_pairs must match posenc::PairLayout");

Status Invalid(const std::string& message) { return Status(StatusCode::kInvalidArgument, message); }

// A config from `text` (a path or JSON, as `load` reads it) into *out.
posenc_status MakeConfig(const char* what, const char* text, const char* name,
                         Status (*load)(const std::string&, posenc::RopeConfig*), posenc_config** out) {
  return Guard(what, [&] {
    if (text == nullptr) return Invalid(std::string(name) + " is null");
    if (out == nullptr) return Invalid("out is null");
    posenc::RopeConfig c;
    Status st = load(text, &c);
    if (!st.ok()) return st;
    *out = new posenc_config{std::move(c)};
    return Status::Ok();
  });
}

posenc_status MakeModel(const char* what, const char* text, const char* name,
                        Status (*load)(const std::string&, posenc::ModelRope*), posenc_model** out) {
  return Guard(what, [&] {
    if (text == nullptr) return Invalid(std::string(name) + " is null");
    if (out == nullptr) return Invalid("out is null");
    std::unique_ptr<posenc_model> m(new posenc_model);
    Status st = load(text, &m->model);
    if (!st.ok()) return st;
    for (const posenc::RopeLayerType& t : m->model.layer_types) {
      m->configs.emplace_back(new posenc_config{t.config});
    }
    *out = m.release();
    return Status::Ok();
  });
}

// inv_freq (capacity values), rotary_dim and attention factor of `config` at seq_len.
Status Frequencies(const posenc::RopeConfig& config, int64_t seq_len, double* inv_freq, int64_t capacity,
                   int64_t* rotary_dim, double* attention_factor) {
  posenc::RopeFrequencies f;
  Status st = posenc::ComputeFrequencies(config, seq_len, &f);
  if (!st.ok()) return st;
  const int64_t n = static_cast<int64_t>(f.inv_freq.size());
  if (inv_freq != nullptr && capacity < n) {
    return Invalid("capacity = " + std::to_string(capacity) + ": needs rotary_dim / 2 = " + std::to_string(n));
  }
  if (inv_freq != nullptr) std::memcpy(inv_freq, f.inv_freq.data(), static_cast<size_t>(n) * sizeof(double));
  if (rotary_dim != nullptr) *rotary_dim = f.rotary_dim;
  if (attention_factor != nullptr) *attention_factor = f.attention_factor;
  return Status::Ok();
}

Status FindType(const posenc_model* model, const char* layer_type, const posenc_config** out) {
  if (model == nullptr) return Invalid("model is null");
  if (layer_type == nullptr) return Invalid("layer_type is null");
  const posenc::RopeConfig* c = nullptr;
  Status st = posenc::LayerRope(model->model, layer_type, &c);
  if (!st.ok()) return st;
  for (size_t i = 0; i < model->model.layer_types.size(); ++i) {
    if (&model->model.layer_types[i].config == c) *out = model->configs[i].get();
  }
  return Status::Ok();
}

template <class Apply>
posenc_status ModelApply(const char* what, const posenc_tensor* q, const posenc_tensor* q_out,
                         const posenc_tensor* k, const posenc_tensor* k_out, const posenc_model* model,
                         const posenc_rope_params* params, const Apply& apply) {
  return Guard(what, [&] {
    if (model == nullptr) return Invalid("model is null");
    posenc::RopeParams p;
    Status st = posenc::capi::ToRopeParams(params, &p);
    if (!st.ok()) return st;
    if (params->config != nullptr) return Invalid("params.config: must be NULL with a model (the model gives the config)");
    posenc::RopeTensors t;
    t.q = posenc::capi::ToTensor(q);
    t.q_out = posenc::capi::ToTensor(q_out);
    t.k = posenc::capi::ToTensor(k);
    t.k_out = posenc::capi::ToTensor(k_out);
    return apply(t, p);
  });
}

}  // namespace

extern "C" {

void posenc_config_desc_init(posenc_config_desc* d) {
  if (d == nullptr) return;
  std::memset(d, 0, sizeof(*d));
  const posenc::RopeConfig c;
  d->rope_type = POSENC_ROPE_DEFAULT;
  d->rope_theta = c.rope_theta;
  d->partial_rotary_factor = c.partial_rotary_factor;
  d->factor = 1.0;
  d->alpha = 1.0;
  d->beta_fast = 32.0;
  d->beta_slow = 1.0;
  d->truncate = 1;
  d->low_freq_factor = 1.0;
  d->high_freq_factor = 4.0;
  d->pairs = POSENC_PAIRS_HALF;
}

posenc_status posenc_config_create(const posenc_config_desc* d, posenc_config** out) {
  return Guard(__func__, [&] {
    if (d == nullptr) return Invalid("desc is null");
    if (out == nullptr) return Invalid("out is null");
    const int rope_type = RawEnum(d->rope_type);
    if (posenc::freqs::FindRopeType(static_cast<posenc::RopeType>(rope_type)) == nullptr) {
      return Invalid("desc.rope_type = " + std::to_string(rope_type) + ": not a posenc_rope_type");
    }
    const int pairs = RawEnum(d->pairs);
    if (pairs != POSENC_PAIRS_HALF && pairs != POSENC_PAIRS_INTERLEAVED) {
      return Invalid("desc.pairs = " + std::to_string(pairs) + ": must be POSENC_PAIRS_HALF or _INTERLEAVED");
    }
    if (d->factor_len < 0 || (d->factor_len > 0 && (d->short_factor == nullptr || d->long_factor == nullptr))) {
      return Invalid("desc.factor_len = " + std::to_string(d->factor_len) +
                     ": needs short_factor and long_factor of that length");
    }
    if (d->mrope_section_len < 0 || d->mrope_section_len > 16 ||
        (d->mrope_section_len > 0 && d->mrope_section == nullptr)) {
      return Invalid("desc.mrope_section_len = " + std::to_string(d->mrope_section_len) +
                     ": must be in [0, 16] with mrope_section holding that many values");
    }
    posenc::RopeConfig c;
    c.rope_type = static_cast<posenc::RopeType>(rope_type);
    c.rope_theta = d->rope_theta;
    c.head_dim = d->head_dim;
    c.partial_rotary_factor = d->partial_rotary_factor;
    if (d->rotary_dim != 0) c.rotary_dim = d->rotary_dim;
    c.pairs = static_cast<posenc::PairLayout>(pairs);
    if (d->max_position_embeddings != 0) c.max_position_embeddings = d->max_position_embeddings;
    if (d->original_max_position_embeddings != 0) {
      c.original_max_position_embeddings = d->original_max_position_embeddings;
    }
    if (d->has_factor) c.factor = d->factor;
    c.alpha = d->alpha;
    c.beta_fast = d->beta_fast;
    c.beta_slow = d->beta_slow;
    if (d->has_mscale) c.mscale = d->mscale;
    if (d->has_mscale_all_dim) c.mscale_all_dim = d->mscale_all_dim;
    if (d->has_attention_factor) c.attention_factor = d->attention_factor;
    c.truncate = d->truncate != 0;
    c.low_freq_factor = d->low_freq_factor;
    c.high_freq_factor = d->high_freq_factor;
    if (d->factor_len > 0) {
      c.short_factor = std::vector<double>(d->short_factor, d->short_factor + d->factor_len);
      c.long_factor = std::vector<double>(d->long_factor, d->long_factor + d->factor_len);
    }
    if (d->mrope_section_len > 0) {
      c.mrope.section.assign(d->mrope_section, d->mrope_section + d->mrope_section_len);
      c.mrope.interleaved = d->mrope_interleaved != 0;
    }
    c.dict_key = "desc";
    posenc::RopeFrequencies f;  // validates the whole config now, not at first use
    Status st = posenc::ComputeFrequencies(c, 0, &f);
    if (!st.ok()) return st;
    *out = new posenc_config{std::move(c)};
    return Status::Ok();
  });
}

posenc_status posenc_config_describe(const posenc_config* config, posenc_config_desc* out) {
  return Guard(__func__, [&] {
    if (config == nullptr) return Invalid("config is null");
    if (out == nullptr) return Invalid("out is null");
    const posenc::RopeConfig& c = config->config;
    posenc_config_desc d;
    posenc_config_desc_init(&d);
    d.rope_type = static_cast<posenc_rope_type>(static_cast<int>(c.rope_type));
    d.rope_theta = c.rope_theta;
    d.head_dim = c.head_dim;
    d.partial_rotary_factor = c.partial_rotary_factor;
    d.rotary_dim = c.rotary_dim.value_or(0);
    d.pairs = c.pairs == posenc::PairLayout::kInterleaved ? POSENC_PAIRS_INTERLEAVED : POSENC_PAIRS_HALF;
    d.max_position_embeddings = c.max_position_embeddings.value_or(0);
    d.original_max_position_embeddings = c.original_max_position_embeddings.value_or(0);
    d.has_factor = c.factor.has_value();
    d.factor = c.factor.value_or(1.0);
    d.alpha = c.alpha.value_or(1.0);
    d.beta_fast = c.beta_fast.value_or(32.0);
    d.beta_slow = c.beta_slow.value_or(1.0);
    d.has_mscale = c.mscale.has_value();
    d.mscale = c.mscale.value_or(0.0);
    d.has_mscale_all_dim = c.mscale_all_dim.has_value();
    d.mscale_all_dim = c.mscale_all_dim.value_or(0.0);
    d.has_attention_factor = c.attention_factor.has_value();
    d.attention_factor = c.attention_factor.value_or(0.0);
    d.truncate = c.truncate ? 1 : 0;
    d.low_freq_factor = c.low_freq_factor.value_or(1.0);
    d.high_freq_factor = c.high_freq_factor.value_or(4.0);
    if (c.short_factor && c.long_factor) {
      d.short_factor = c.short_factor->data();
      d.long_factor = c.long_factor->data();
      d.factor_len = static_cast<int64_t>(c.short_factor->size());
    }
    d.mrope_section = c.mrope.section.empty() ? nullptr : c.mrope.section.data();
    d.mrope_section_len = static_cast<int64_t>(c.mrope.section.size());
    d.mrope_interleaved = c.mrope.interleaved ? 1 : 0;
    *out = d;
    return Status::Ok();
  });
}

posenc_status posenc_config_load(const char* path, posenc_config** out) {
  return MakeConfig(__func__, path, "path", posenc::LoadHfConfig, out);
}

posenc_status posenc_config_parse(const char* json_text, posenc_config** out) {
  return MakeConfig(__func__, json_text, "json_text", posenc::ParseHfConfig, out);
}

void posenc_config_destroy(posenc_config* config) { delete config; }

posenc_status posenc_config_frequencies(const posenc_config* config, int64_t seq_len,
                                        double* inv_freq, int64_t capacity, int64_t* rotary_dim,
                                        double* attention_factor) {
  return Guard(__func__, [&] {
    if (config == nullptr) return Invalid("config is null");
    return Frequencies(config->config, seq_len, inv_freq, capacity, rotary_dim, attention_factor);
  });
}

int64_t posenc_config_hf_dynamic_length(const posenc_config* config, int64_t cached_len, int64_t seq_len) {
  if (config == nullptr) return -1;
  return posenc::HfDynamicLength(config->config, cached_len, seq_len);
}

posenc_status posenc_model_load(const char* path, posenc_model** out) {
  return MakeModel(__func__, path, "path", posenc::LoadHfModel, out);
}

posenc_status posenc_model_parse(const char* json_text, posenc_model** out) {
  return MakeModel(__func__, json_text, "json_text", posenc::ParseHfModel, out);
}

void posenc_model_destroy(posenc_model* model) { delete model; }

int64_t posenc_model_num_layers(const posenc_model* model) {
  return model == nullptr ? 0 : static_cast<int64_t>(model->model.layers.size());
}

int64_t posenc_model_num_layer_types(const posenc_model* model) {
  return model == nullptr ? 0 : static_cast<int64_t>(model->model.layer_types.size());
}

const char* posenc_model_layer_type_name(const posenc_model* model, int64_t index) {
  if (model == nullptr || index < 0 || index >= static_cast<int64_t>(model->model.layer_types.size())) {
    return nullptr;
  }
  return model->model.layer_types[static_cast<size_t>(index)].name.c_str();
}

posenc_status posenc_model_layer_type(const posenc_model* model, int64_t layer, int64_t* type_index) {
  return Guard(__func__, [&] {
    if (model == nullptr) return Invalid("model is null");
    if (type_index == nullptr) return Invalid("type_index is null");
    const int64_t n = static_cast<int64_t>(model->model.layers.size());
    if (layer < 0 || layer >= n) {
      return Invalid("layer = " + std::to_string(layer) + ": must be in [0, " + std::to_string(n) + ")");
    }
    *type_index = model->model.layers[static_cast<size_t>(layer)];
    return Status::Ok();
  });
}

posenc_status posenc_model_config(const posenc_model* model, const char* layer_type,
                                  const posenc_config** out) {
  return Guard(__func__, [&] {
    if (out == nullptr) return Invalid("out is null");
    return FindType(model, layer_type, out);
  });
}

double posenc_model_softmax_scale_factor(const posenc_model* model) {
  return model == nullptr ? 0.0 : model->model.softmax_scale_factor;
}

posenc_status posenc_model_frequencies(const posenc_model* model, const char* layer_type, int64_t seq_len,
                                       double* inv_freq, int64_t capacity, int64_t* rotary_dim,
                                       double* attention_factor) {
  return Guard(__func__, [&] {
    const posenc_config* c = nullptr;
    Status st = FindType(model, layer_type, &c);
    if (!st.ok()) return st;
    return Frequencies(c->config, seq_len, inv_freq, capacity, rotary_dim, attention_factor);
  });
}

posenc_status posenc_model_rope_apply(const posenc_tensor* q, const posenc_tensor* q_out,
                                      const posenc_tensor* k, const posenc_tensor* k_out,
                                      const posenc_model* model, const char* layer_type,
                                      const posenc_rope_params* params) {
  return ModelApply(__func__, q, q_out, k, k_out, model, params,
                    [&](const posenc::RopeTensors& t, const posenc::RopeParams& p) {
                      if (layer_type == nullptr) return Invalid("layer_type is null");
                      return posenc::ApplyRope(t, model->model, std::string(layer_type), p);
                    });
}

posenc_status posenc_model_rope_apply_layer(const posenc_tensor* q, const posenc_tensor* q_out,
                                            const posenc_tensor* k, const posenc_tensor* k_out,
                                            const posenc_model* model, int64_t layer,
                                            const posenc_rope_params* params) {
  return ModelApply(__func__, q, q_out, k, k_out, model, params,
                    [&](const posenc::RopeTensors& t, const posenc::RopeParams& p) {
                      return posenc::ApplyRope(t, model->model, layer, p);
                    });
}

}  // extern "C"
