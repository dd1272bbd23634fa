// Dispatch TU: the cos/sin rows by distance of RelativeRopeTable (the same row code the score
// tiles use on the fly, lib/kernels/rerope-inl.h DistanceRows).
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels/rerope_rows.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/kernels/registry.h"
#include "lib/kernels/rerope-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
void ReropeRowsImpl(const double* inv_freq, int64_t half, double m2, const DistanceMap& map,
                    int64_t first, int64_t count, double* rows) {
  DistanceRows(inv_freq, static_cast<size_t>(half), m2, map, first, count, rows);
}
}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_EXPORT(ReropeRowsImpl);
namespace kernels {
void ReropeRows(const double* inv_freq, int64_t half, double m2, const DistanceMap& map,
                int64_t first, int64_t count, double* rows) {
  HWY_DYNAMIC_DISPATCH(ReropeRowsImpl)(inv_freq, half, m2, map, first, count, rows);
}
}  // namespace kernels
}  // namespace posenc
#endif
