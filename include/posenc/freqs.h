// posenc/freqs.h: RoPE frequencies for every scaling type real models ship, from a Hugging Face
// config.json or filled by hand. Everything is computed in double (HF computes in float32; see
// the README for the deviations that causes). A model whose layers use different RoPE (Gemma 3's
// sliding and full attention layers, layers without RoPE) is described by posenc/model.h; a
// RopeConfig is the RoPE of one layer type.
//
// rope_type     what it does (r = rotary_dim, inv_i = base^(-2i/r), docs/math.md)
// default       inv_i
// linear        inv_i / factor
// dynamic       base' = base * (factor * L / M - (factor - 1))^(r / (r - 2)) when L > M, else base
//               (L = sequence length, M = max_position_embeddings)
// ntk           base' = base * alpha^(r / (r - 2))  (static NTK-aware; no HF rope_type)
// yarn          blend of inv_i and inv_i / factor by a linear ramp over pair index between the
//               beta_fast / beta_slow correction dims; attention factor from mscale(s)
// llama3        inv_i / factor for long wavelengths, inv_i for short ones, smooth in between
// longrope      inv_i / ext_i with ext = long_factor if L > original_max_position_embeddings,
//               else short_factor; attention factor sqrt(1 + ln s / ln M0)
// proportional  (Gemma 4) the first int(partial_rotary_factor * head_dim // 2) pairs get
//               base^(-2i / head_dim) / factor, the remaining pairs frequency 0 (identity); the
//               rotation spans the whole head (rotary_dim = head_dim)
//
// Limits: head_dim <= kMaxHeadDim (65536). Every frequency and attention factor a config computes
// is checked to be finite; the message names the config keys that produced it.
#ifndef POSENC_FREQS_H_
#define POSENC_FREQS_H_

#include "posenc/export.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "posenc/rope.h"
#include "posenc/status.h"

namespace posenc {

enum class RopeType { kDefault, kLinear, kDynamic, kNtk, kYarn, kLlama3, kLongRope, kProportional };
// "default", "linear", ... (HF rope_type strings; "ntk" is posenc's own name).
POSENC_API const char* RopeTypeName(RopeType type);

// The largest head_dim a config may give (a documented bound: larger values are rejected rather
// than allocated).
constexpr int64_t kMaxHeadDim = 65536;

// M-RoPE (Qwen2-VL, Qwen2.5-VL: `mrope_section`; Qwen3-VL: also `mrope_interleaved`): how the
// rotary pairs are split over the (t, h, w) position streams. The frequencies are the config's
// rope_type's (default for every released model); the M-RoPE kernel reads this spec.
struct MRopeSpec {
  std::vector<int64_t> section;  // pairs per stream (t, h, w), summing to rotary_dim / 2
  bool interleaved = false;      // Qwen3-VL: h and w take every third pair (offsets 1 and 2)
  bool present() const { return !section.empty(); }
};

// The RoPE of one layer type of a model. Keys a rope type requires are std::optional: absent
// means absent (ComputeFrequencies, and so every loader and ApplyRope(config), fails naming the
// missing key, checked in one place for every type); the others carry HF's defaults.
struct RopeConfig {
  RopeType rope_type = RopeType::kDefault;
  double rope_theta = 10000.0;
  int64_t head_dim = 0;                  // per-head size the rotary part is taken from (> 0)
  double partial_rotary_factor = 1.0;    // rotary_dim = int(head_dim * partial_rotary_factor)
  // An explicit rotary_dim (GPT-J's `rotary_dim`, ChatGLM's kv_channels / 2); when set it wins
  // over partial_rotary_factor.
  std::optional<int64_t> rotary_dim;
  // The model's pair layout: kHalf (rotate_half: Llama, Qwen, Gemma, Phi, GPT-NeoX, gpt-oss) or
  // kInterleaved (GPT-J, ChatGLM, GLM-4, Cohere, DeepSeek, Kimi-K2, Llama 4). ApplyRope with this
  // config uses it unless RopeParams::pairs overrides it.
  PairLayout pairs = PairLayout::kHalf;
  int64_t num_attention_heads = 0;       // informational (q heads; 0 = unknown)
  int64_t num_key_value_heads = 0;       // informational (k heads; GQA)
  std::optional<int64_t> max_position_embeddings;           // M: dynamic; yarn / longrope fallbacks
  std::optional<int64_t> original_max_position_embeddings;  // M0: yarn, longrope, llama3
  std::optional<double> factor;           // linear, dynamic, llama3 (required); yarn, longrope, proportional
  std::optional<double> alpha;            // ntk (required)
  std::optional<double> beta_fast, beta_slow;  // yarn; absent or 0 (HF's `or`): 32 and 1
  std::optional<double> mscale, mscale_all_dim;  // yarn
  std::optional<double> attention_factor;        // yarn, longrope: explicit override
  bool truncate = true;                          // yarn: floor/ceil the correction range
  std::optional<double> low_freq_factor, high_freq_factor;  // llama3 (required)
  std::optional<std::vector<double>> short_factor, long_factor;  // longrope (required), r/2 each
  MRopeSpec mrope;                                // M-RoPE section spec (absent: plain RoPE)
  // Name of the dict the scaling keys came from, used in messages ("rope_scaling",
  // "rope_parameters", "rope_parameters.full_attention"). Not part of equality.
  std::string dict_key = "rope_scaling";
};

// Field-by-field equality over one field list (every field but dict_key).
POSENC_API bool operator==(const RopeConfig& a, const RopeConfig& b);
inline bool operator!=(const RopeConfig& a, const RopeConfig& b) { return !(a == b); }

// What a config yields for one sequence length.
struct RopeFrequencies {
  RopeType rope_type = RopeType::kDefault;
  int64_t head_dim = 0;
  int64_t rotary_dim = 0;
  std::vector<double> inv_freq;  // rotary_dim / 2 values, finite and >= 0
  double attention_factor = 1.0;
};

// Frequencies for sequences of length seq_len (0 = unknown: dynamic keeps the base, longrope uses
// short_factor). Stateless: the result depends on (config, seq_len) only. Validates the config
// first and what it computes after; messages name the config key.
POSENC_API Status ComputeFrequencies(const RopeConfig& config, int64_t seq_len, RopeFrequencies* out);

// Dynamic NTK as HF keeps it (modeling_rope_utils.dynamic_rope_update, dynamic_frequency_update):
// HF recomputes the frequencies when a call's length L exceeds the length they were last computed
// for, keeps them for shorter calls, and resets to the original ones once L < M. Given the length
// the previous call left (`cached_len`; 0 before the first call) and this call's L, returns the
// length HF's frequencies for this call are computed at, which is also the next cached_len. For
// every other rope type it returns seq_len (HF's longrope switch is per call). Pass the result as
// RopeParams::seq_len to ApplyRope(config) to reproduce HF's stateful behaviour.
POSENC_API int64_t HfDynamicLength(const RopeConfig& config, int64_t cached_len, int64_t seq_len);

// Parses a Hugging Face config.json (text or file) of a model whose RoPE layers all share one
// RopeConfig; every rule posenc/model.h describes applies (text_config nesting, per-model
// defaults, pair layout, ...). A model with several different RoPE layer types (Gemma 3, OLMo 3,
// Gemma 4) fails with a one-line message naming them: load it with LoadHfModel. A RopeConfig does
// not say which layers have no RoPE (Llama 4, SmolLM3, Cohere2): LoadHfModel does. On failure
// *out is unchanged and the message names the key.
POSENC_API Status ParseHfConfig(const std::string& json_text, RopeConfig* out);
POSENC_API Status LoadHfConfig(const std::string& path, RopeConfig* out);

// ApplyRope with a config's frequencies, attention factor, rotary_dim and pair layout
// (params.freqs is ignored; params.rotary_dim must be 0 or equal the config's; the source must be
// on the fly; params.pairs kFromConfig (the default) takes the config's layout, kHalf or
// kInterleaved overrides it). The sequence length L for dynamic and longrope is params.seq_len
// when > 0, else (largest position of the call) + 1 as HF computes it from position_ids: per call,
// stateless (see HfDynamicLength for HF's stateful dynamic rule). Positions are validated first.
POSENC_API Status ApplyRope(const RopeTensors& tensors, const RopeConfig& config, const RopeParams& params);

}  // namespace posenc

#endif  // POSENC_FREQS_H_
