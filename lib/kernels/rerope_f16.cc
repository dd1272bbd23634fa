// Dispatch TU: RelativeRopeScores on f16 q/k (one TU per dtype so -j2 overlaps their compilation).
#include <cstdint>

#include "lib/kernels/rerope_plan.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels/rerope_f16.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/kernels/rerope-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
void ReropeTilesF16Impl(const kernels::ReropePlan& plan, int64_t begin, int64_t end) {
  ReropeTiles<hwy::float16_t>(plan, begin, end);
}
}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_EXPORT(ReropeTilesF16Impl);
namespace kernels {
void ReropeTilesF16(const ReropePlan& plan, int64_t begin, int64_t end) {
  HWY_DYNAMIC_DISPATCH(ReropeTilesF16Impl)(plan, begin, end);
}
}  // namespace kernels
}  // namespace posenc
#endif
