// The body of the RelativeRopeScores dispatch TUs lib/kernels/rerope_{f32,bf16,f16}.cc
// (lib/kernels/dtype_dispatch.h): the score-tile kernel of the TU's POSENC_DTYPE. No include
// guard: hwy/foreach_target.h re-includes the TU, and so this file, once per SIMD target.
#include "lib/kernels/dtype_dispatch.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/kernels/rerope-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
POSENC_ROW_KERNEL_TARGET(ReropeTiles, ReropePlan, ReropeTiles)
}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
POSENC_ROW_KERNEL_EXPORT(ReropeTiles, ReropePlan)
}  // namespace posenc
#endif
