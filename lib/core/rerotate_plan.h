// Internal: the validated description of one RerotateRope call (posenc/shift.h): keys rotated at
// the from side's positions and rows are re-rotated to the to side's (rope) in one pass, angle_i =
// p_to * w_to[i] - p_from * w_from[i] per pair.
#ifndef POSENC_LIB_CORE_REROTATE_PLAN_H_
#define POSENC_LIB_CORE_REROTATE_PLAN_H_

#include <cstdint>

#include "lib/core/rope_plan.h"
#include "posenc/rope.h"

namespace posenc {
namespace kernels {

struct RerotatePlan {
  // The target side as PrepareRope plans ApplyRope with to_positions, to_freqs and to_source:
  // tensors, layout, arithmetic, and its row source (rope.attention_factor: the to factor).
  RopePlan rope;
  // The from side: its validated positions copy and row source, as PrepareRope planned it.
  Positions from_positions;
  kernels::RowSource from_source = kernels::RowSource::kCompute;
  const double* from_inv_freq = nullptr;  // kCompute
  double from_attention_factor = 1.0;     // kCompute: the factor of its computed row
  const void* from_cos_rows = nullptr;    // kByPosition / kPerToken
  const void* from_sin_rows = nullptr;
  DType from_cache_dtype = DType::kF32;
  // Both sides kCompute: the exact way (posenc/shift.h), rows from the double cos/sin of both
  // angles times exact_factor = to factor / from factor. Else the row way: both f32 rows
  // composed in double times row_scale = 1 / m_from^2.
  bool exact = true;
  double exact_factor = 1.0;
  double row_scale = 1.0;
  DType dtype = DType::kF32;  // == rope.dtype (for parallel::ForEachToken)
  int64_t tokens() const { return rope.tokens(); }
};

}  // namespace kernels
}  // namespace posenc

#endif  // POSENC_LIB_CORE_REROTATE_PLAN_H_
