// Internal: the validated description of one RerotateRope call (posenc/shift.h): keys rotated at
// positions `from` with frequencies from_inv_freq are re-rotated to `rope.positions` with
// rope.inv_freq in one pass, angle_i = p_to * w_to[i] - p_from * w_from[i] per pair.
#ifndef POSENC_LIB_CORE_REROTATE_PLAN_H_
#define POSENC_LIB_CORE_REROTATE_PLAN_H_

#include <cstdint>

#include "lib/core/rope_plan.h"
#include "posenc/rope.h"

namespace posenc {
namespace kernels {

struct RerotatePlan {
  RopePlan rope;  // tensors, layout, arithmetic; kCompute with the target positions / inv_freq;
                  // rope.attention_factor = to factor / from factor
  Positions from_positions;  // validated copy
  const double* from_inv_freq = nullptr;
  DType dtype = DType::kF32;  // == rope.dtype (for parallel::ForEachToken)
  int64_t tokens() const { return rope.tokens(); }
};

}  // namespace kernels
}  // namespace posenc

#endif  // POSENC_LIB_CORE_REROTATE_PLAN_H_
