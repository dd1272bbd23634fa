// posenc/freqs.h: RoPE frequencies for every scaling type real models ship, from a Hugging Face
// config.json or filled by hand. Everything is computed in double (HF computes in float32; see
// the README for the deviations that causes).
//
// rope_type   what it does (r = rotary_dim, inv_i = base^(-2i/r), DESIGN.md §1)
// default     inv_i
// linear      inv_i / factor
// dynamic     base' = base * (factor * L / M - (factor - 1))^(r / (r - 2)) when L > M, else base
//             (L = sequence length, M = max_position_embeddings)
// ntk         base' = base * alpha^(r / (r - 2))  (static NTK-aware; no HF rope_type)
// yarn        blend of inv_i and inv_i / factor by a linear ramp over pair index between the
//             beta_fast / beta_slow correction dims; attention factor from mscale(s)
// llama3      inv_i / factor for long wavelengths, inv_i for short ones, smooth in between
// longrope    inv_i / ext_i with ext = long_factor if L > original_max_position_embeddings,
//             else short_factor; attention factor sqrt(1 + ln s / ln M0)
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

enum class RopeType { kDefault, kLinear, kDynamic, kNtk, kYarn, kLlama3, kLongRope };
POSENC_API const char* RopeTypeName(RopeType type);  // "default", "linear", ... (HF rope_type strings)

// The rope-relevant fields of a model config. Counts of 0 mean "absent".
struct RopeConfig {
  RopeType rope_type = RopeType::kDefault;
  double rope_theta = 10000.0;
  int64_t head_dim = 0;                // per-head size the rotary part is taken from (> 0)
  double partial_rotary_factor = 1.0;  // rotary_dim = int(head_dim * partial_rotary_factor)
  int64_t num_attention_heads = 0;     // informational (q heads)
  int64_t num_key_value_heads = 0;     // informational (k heads; GQA)
  int64_t max_position_embeddings = 0;
  int64_t original_max_position_embeddings = 0;  // top level (Phi-3) or inside the rope dict
  std::optional<double> factor;        // linear, dynamic, yarn, llama3 (required), longrope
  double alpha = 1.0;                  // ntk
  double beta_fast = 32.0, beta_slow = 1.0;  // yarn
  std::optional<double> mscale, mscale_all_dim;  // yarn
  std::optional<double> attention_factor;        // yarn, longrope: explicit override
  bool truncate = true;                          // yarn: floor/ceil the correction range
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3
  std::vector<double> short_factor, long_factor;         // longrope, rotary_dim / 2 each
  // Name of the dict the scaling keys came from, used in messages ("rope_scaling" or
  // "rope_parameters").
  std::string dict_key = "rope_scaling";
};

// What a config yields for one sequence length.
struct RopeFrequencies {
  RopeType rope_type = RopeType::kDefault;
  int64_t head_dim = 0;
  int64_t rotary_dim = 0;
  std::vector<double> inv_freq;  // rotary_dim / 2 values
  double attention_factor = 1.0;
};

// Frequencies for sequences of length seq_len (0 = unknown: dynamic keeps the base, longrope uses
// short_factor). Validates the config first; messages name the config key.
POSENC_API Status ComputeFrequencies(const RopeConfig& config, int64_t seq_len, RopeFrequencies* out);

// Parses a Hugging Face config.json (text or file). Reads rope_theta at top level or in the rope
// dict; the rope dict under rope_scaling or rope_parameters (`type` is an alias of `rope_type`);
// head_dim, else qk_rope_head_dim (DeepSeek), else hidden_size / num_attention_heads;
// partial_rotary_factor (top level or in the dict; GPT-NeoX's rotary_pct is an alias, as is
// rotary_emb_base for rope_theta); max_position_embeddings; original_max_position_embeddings at
// top level or in the dict. On failure *out is unchanged and the message names the key.
POSENC_API Status ParseHfConfig(const std::string& json_text, RopeConfig* out);
POSENC_API Status LoadHfConfig(const std::string& path, RopeConfig* out);

// ApplyRope with a config's frequencies, attention factor and rotary_dim (params.freqs is
// ignored; params.rotary_dim must be 0 or equal the config's; the source must be on the fly).
// For dynamic and longrope the sequence length is L = (largest position of the call) + 1, as HF
// computes it from position_ids; positions are validated first.
POSENC_API Status ApplyRope(const RopeTensors& tensors, const RopeConfig& config, const RopeParams& params);

}  // namespace posenc

#endif  // POSENC_FREQS_H_
