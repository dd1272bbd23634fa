// Internal: what posenc knows about each model family's RoPE beyond the generic config keys: the
// model class's defaults (transformers' configuration_*.py), its pair layout, its layer types and
// layers without RoPE (modeling_*.py). One row per model_type; unknown model types get the generic
// row (rope_theta 10000 as RotaryEmbeddingConfigMixin.default_theta, half pairs, the config's own
// layer_types, every layer with RoPE).
#ifndef POSENC_LIB_FREQS_HF_FAMILIES_H_
#define POSENC_LIB_FREQS_HF_FAMILIES_H_

#include <string>

namespace posenc {
namespace freqs {

// Pair layout the modeling code applies.
enum class PairRule {
  kHalf,               // rotate_half on (x[i], x[i + r/2])
  kInterleaved,        // (x[2i], x[2i+1]): rotate_every_two, view_as_complex, x[::2] / x[1::2]
  kRopeInterleaveKey,  // DeepSeek-V3: interleaved iff `rope_interleave` (default true)
};

// How the per-layer types are named when the config has no `layer_types`.
enum class LayerRule {
  kAllFull,       // every layer "full_attention"
  kSlidingEvery,  // "full_attention" on every pattern-th layer (1-based), "sliding_attention"
                  // elsewhere; pattern from sliding_window_pattern / _sliding_window_pattern
  kLlama4,        // "chunked_attention" on RoPE layers, "full_attention" on NoPE layers
};

// Which layers have no RoPE.
enum class NoRopeRule {
  kNone,
  kNoRopeLayers,   // no_rope_layers[i] == 0 (1 = RoPE); absent: every no_rope_layer_interval-th
  kFullAttention,  // Cohere2: RoPE only on sliding-window layers
};

// Where each layer type's RoPE comes from when the config holds one flat rope dict (the older
// format): kShared gives every type the dict; the others follow the model's own
// convert_rope_params_to_dict.
enum class TypedRule {
  kShared,
  kGemma3,  // full_attention: the dict, rope_theta (1e6); sliding_attention: default, rope_local_base_freq (1e4)
  kOlmo3,   // full_attention: the dict, rope_theta (5e5); sliding_attention: default, 5e5 (see hf_families.cc)
  kGemma4,  // always per layer type; full_attention's head size is global_head_dim
};

// How head_dim / rotary_dim / rope_theta are found.
enum class HeadRule { kHeadDim, kQkRopeHeadDim, kKvChannels };
enum class RotaryRule { kFactor, kGptjRotaryDim, kHalfOfHead };
enum class ThetaRule { kConfig, kGptjFixed, kChatGlmRatio };

struct HfFamily {
  const char* model_type;
  double default_theta;    // the config class's default rope_theta / default_theta
  double default_partial;  // the config class's default partial_rotary_factor
  PairRule pairs;
  LayerRule layers;
  int pattern;  // kSlidingEvery: default pattern
  NoRopeRule no_rope;
  TypedRule typed;
  HeadRule head;
  RotaryRule rotary;
  ThetaRule theta;
  bool deepseek_softmax;  // softmax scale * mscale(factor, mscale_all_dim)^2
  // "alias=canonical,..." keys the family spells differently (GPT-J's n_embd, ChatGLM's num_layers).
  const char* aliases;
  // A JSON object of the class's defaults for keys a config may omit (canonical names).
  const char* defaults;
};

// The row of a model_type (multimodal parents such as "gemma3" map to their text model), or the
// generic row.
const HfFamily& FindFamily(const std::string& model_type);

// The model_type of the text model of a multimodal parent ("gemma3" -> "gemma3_text"), or
// model_type itself.
std::string TextModelType(const std::string& model_type);

}  // namespace freqs
}  // namespace posenc

#endif  // POSENC_LIB_FREQS_HF_FAMILIES_H_
