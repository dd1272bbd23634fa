// Dispatch TU for cos/sin rows (RopeTable, and later the sinusoidal tables) and the target name.
#include <cstdint>

#include "lib/kernels/registry.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels/sincos.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/kernels/sincos-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

void CosSinRowsImpl(const double* inv_freq, int64_t half, double attention_factor, int64_t first,
                    int64_t count, float* cos, float* sin, float* cos_lo, float* sin_lo) {
  for (int64_t j = 0; j < count; ++j) {
    const double p = static_cast<double>(first + j);
    const size_t n = static_cast<size_t>(half);
    if (cos_lo != nullptr) {
      CosSinRow<true>(p, inv_freq, n, attention_factor, cos + j * half, sin + j * half,
                      cos_lo + j * half, sin_lo + j * half);
    } else {
      CosSinRow(p, inv_freq, n, attention_factor, cos + j * half, sin + j * half);
    }
  }
}

const char* TargetNameImpl() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_EXPORT(CosSinRowsImpl);
HWY_EXPORT(TargetNameImpl);
namespace kernels {
void CosSinRows(const double* inv_freq, int64_t half, double attention_factor, int64_t first,
                int64_t count, float* cos, float* sin, float* cos_lo, float* sin_lo) {
  HWY_DYNAMIC_DISPATCH(CosSinRowsImpl)(inv_freq, half, attention_factor, first, count, cos, sin,
                                       cos_lo, sin_lo);
}
const char* DispatchedTargetName() { return HWY_DYNAMIC_DISPATCH(TargetNameImpl)(); }
}  // namespace kernels
}  // namespace posenc
#endif
