// posenc/model.h: a model's RoPE as its config.json describes it, layer by layer.
//
// Models give different layers different RoPE: Gemma 3 uses base 10^4 on its sliding-window
// layers and 10^6 (plus linear scaling on the larger sizes) on its full-attention layers; Gemma 4
// adds proportional RoPE on the full layers; OLMo 3 applies YaRN only to its full layers; Llama 4,
// SmolLM3 and Cohere2 have layers without RoPE. A ModelRope holds one RopeConfig per RoPE layer
// type, named as the model names it (HF's `layer_types`: "sliding_attention", "full_attention",
// "chunked_attention"; a config without layer types has one type, "full_attention"), the type of
// every layer (or none), and the attention scale factors that live outside RoPE.
//
// LoadHfModel follows transformers 5: the text model's config (`text_config`, as HF's
// get_text_config()), the standardisation of rope parameters (modeling_rope_utils
// RotaryEmbeddingConfigMixin.standardize_rope_params: per-layer-type dicts, original length
// precedence), each model class's defaults (configuration_*.py: rope_theta per model_type, GPT-NeoX
// rotary_pct 0.25, ...), and each modeling file's pair layout and NoPE layers. The README lists
// the families and what is read from each.
#ifndef POSENC_MODEL_H_
#define POSENC_MODEL_H_

#include "posenc/export.h"

#include <cstdint>
#include <string>
#include <vector>

#include "posenc/freqs.h"
#include "posenc/rope.h"
#include "posenc/status.h"

namespace posenc {

// One RoPE layer type: the model's name for it and its RoPE.
struct RopeLayerType {
  std::string name;
  RopeConfig config;
};

struct ModelRope {
  static constexpr int kNoRope = -1;
  // model_type of the text model ("llama", "gemma3_text", ...; "" when the config has none).
  std::string model_type;
  // The distinct RoPE layer types, in the order the layers first use them. Types may share one
  // RopeConfig (Gemma 2's sliding and full layers); SingleRope() tells.
  std::vector<RopeLayerType> layer_types;
  // Per decoder layer: an index into layer_types, or kNoRope. Empty when the config gives no
  // layer count (num_hidden_layers or its alias).
  std::vector<int> layers;
  // Multiplies the attention softmax scale 1/sqrt(head dim), outside RoPE: DeepSeek-V2/V3 and
  // Kimi-K2 with YaRN and mscale_all_dim use mscale(factor, mscale_all_dim)^2 (about 1.874 for
  // DeepSeek-V3); 1 for every other model. The RoPE attention factor (cos/sin) stays the config's.
  double softmax_scale_factor = 1.0;
};

// Parses / loads a Hugging Face config.json. On failure *out is unchanged and the message names
// the key (for example "text_config.rope_parameters.full_attention.factor = -1: ...").
POSENC_API Status ParseHfModel(const std::string& json_text, ModelRope* out);
POSENC_API Status LoadHfModel(const std::string& path, ModelRope* out);

// True when every RoPE layer type has the same RopeConfig (so ParseHfConfig accepts the model).
POSENC_API bool SingleRope(const ModelRope& model);

// The RopeConfig of a layer type by name; the error names the valid types.
POSENC_API Status LayerRope(const ModelRope& model, const std::string& layer_type,
                            const RopeConfig** out);
// The RopeConfig of decoder layer `layer` (0-based). A layer without RoPE fails with a message
// saying so (check model.layers[layer] == ModelRope::kNoRope first and skip RoPE for it).
POSENC_API Status LayerRope(const ModelRope& model, int64_t layer, const RopeConfig** out);

// ApplyRope(tensors, config, params) with the RoPE of a layer type / of a layer.
POSENC_API Status ApplyRope(const RopeTensors& tensors, const ModelRope& model,
                            const std::string& layer_type, const RopeParams& params);
POSENC_API Status ApplyRope(const RopeTensors& tensors, const ModelRope& model, int64_t layer,
                            const RopeParams& params);

}  // namespace posenc

#endif  // POSENC_MODEL_H_
