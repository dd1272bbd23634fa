// Internal: validation and planning of sinusoidal calls, shared with posenc::reference.
#ifndef POSENC_LIB_API_SINUSOIDAL_PREPARE_H_
#define POSENC_LIB_API_SINUSOIDAL_PREPARE_H_

#include "lib/api/positions.h"
#include "lib/freqs/inv_freq.h"
#include "lib/core/sinusoidal_plan.h"
#include "posenc/sinusoidal.h"

namespace posenc {
namespace api {

// A validated call and what its plan points at that posenc owns; lives for the whole call.
struct PreparedSinusoidal {
  kernels::SinusoidalPlan plan;
  PositionSnapshot positions;  // plan.positions reads this copy
  freqs::SharedFreqs freqs;    // plan.freqs (computed rows)
};

// x null: a table write into `out`; else out = x * x_scale + PE. Fills *prep (contents
// unspecified on failure); nothing the caller passed in is written.
Status PrepareSinusoidal(const SinusoidalParams& params, const EmbeddingView* x,
                         const EmbeddingView& out, PreparedSinusoidal* prep);
}  // namespace api
}  // namespace posenc

#endif  // POSENC_LIB_API_SINUSOIDAL_PREPARE_H_
