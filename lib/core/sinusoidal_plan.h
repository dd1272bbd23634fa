// Internal: a validated sinusoidal call (table write or fused add), read by the kernels and the
// reference. Built only by lib/api/sinusoidal.cc.
#ifndef POSENC_LIB_CORE_SINUSOIDAL_PLAN_H_
#define POSENC_LIB_CORE_SINUSOIDAL_PLAN_H_

#include <cstdint>

#include "posenc/sinusoidal.h"

namespace posenc {
namespace kernels {

struct SinusoidalPlan {
  int64_t batch = 0, seq = 0, d_model = 0;
  DType dtype = DType::kF32;
  SinusoidalLayout layout = SinusoidalLayout::kInterleaved;
  bool add = false;          // false: out = PE; true: out = x * x_scale + PE
  double x_scale = 1.0;
  const void* x = nullptr;   // add only
  int64_t x_stride[2] = {0, 0};
  void* out = nullptr;
  int64_t out_stride[2] = {0, 0};
  Positions positions;
  int64_t position_offset = 0;
  const double* freqs = nullptr;       // d_model / 2 frequencies w_i (computed rows)
  const float* table_rows = nullptr;   // if set: PE row of position p at table_rows + p * d_model

  int64_t tokens() const { return batch * seq; }
};

}  // namespace kernels
}  // namespace posenc

#endif  // POSENC_LIB_CORE_SINUSOIDAL_PLAN_H_
