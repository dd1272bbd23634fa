// Internal: config validation shared by the loader, ComputeFrequencies and ApplyRope(config).
#ifndef POSENC_LIB_FREQS_SCALING_H_
#define POSENC_LIB_FREQS_SCALING_H_

#include <cstdint>

#include "posenc/freqs.h"

namespace posenc {
namespace freqs {
// Checks every field the config's rope_type reads; on success sets *rotary_dim.
Status ValidateConfig(const RopeConfig& config, int64_t* rotary_dim);
}  // namespace freqs
}  // namespace posenc

#endif  // POSENC_LIB_FREQS_SCALING_H_
