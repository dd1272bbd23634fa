// Internal: the rope type registry. One entry per RopeType: its HF name, the check of the keys it
// reads and the computation of its frequencies. Config validation, ComputeFrequencies, the
// loader's name lookup and the C API's enum check all read this one table.
#ifndef POSENC_LIB_FREQS_SCALING_H_
#define POSENC_LIB_FREQS_SCALING_H_

#include <cstdint>
#include <string>

#include "posenc/freqs.h"

namespace posenc {
namespace freqs {

struct RopeTypeEntry {
  RopeType type;
  const char* name;  // the HF rope_type string
  // Checks every key this type reads (the common keys are checked before); r = rotary_dim.
  Status (*validate)(const RopeConfig& config, int64_t r);
  // inv_freq (r / 2 values) and attention factor for sequence length L (0 = unknown); fails
  // only when an intermediate (an NTK-rescaled base) leaves the double range.
  Status (*compute)(const RopeConfig& config, int64_t r, int64_t seq_len, RopeFrequencies* out);
};

// The entry of a type (nullptr for a value outside the enum), of an HF name (nullptr if unknown).
const RopeTypeEntry* FindRopeType(RopeType type);
const RopeTypeEntry* FindRopeType(const std::string& name);
// "default, linear, ..." for messages.
std::string RopeTypeNames();

// Checks the common keys and then the type's; on success sets *rotary_dim.
Status ValidateConfig(const RopeConfig& config, int64_t* rotary_dim);

// M0: original_max_position_embeddings, else max_position_embeddings (0 when neither).
int64_t OriginalLength(const RopeConfig& config);

// YaRN's attention scaling g(s, m) = 0.1 m ln s + 1 for s > 1, else 1
// (modeling_rope_utils._compute_yarn_parameters.get_mscale; DeepSeek's yarn_get_mscale).
double YarnMscale(double s, double m);

// The scaling factor YaRN uses: factor, else max_position_embeddings / M0.
double YarnFactor(const RopeConfig& config);

}  // namespace freqs
}  // namespace posenc

#endif  // POSENC_LIB_FREQS_SCALING_H_
