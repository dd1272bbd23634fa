// Internal: validation and planning of sinusoidal calls, shared with posenc::reference.
#ifndef POSENC_LIB_API_SINUSOIDAL_PREPARE_H_
#define POSENC_LIB_API_SINUSOIDAL_PREPARE_H_

#include "lib/kernels/sinusoidal_plan.h"
#include "posenc/sinusoidal.h"

namespace posenc {
namespace api {
// x null: a table write into `out`; else out = x * x_scale + PE. Fills *plan (contents
// unspecified on failure); nothing the caller passed in is written.
Status PrepareSinusoidal(const SinusoidalParams& params, const EmbeddingView* x,
                         const EmbeddingView& out, kernels::SinusoidalPlan* plan);
}  // namespace api
}  // namespace posenc

#endif  // POSENC_LIB_API_SINUSOIDAL_PREPARE_H_
