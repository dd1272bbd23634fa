// The body of the sinusoidal dispatch TUs lib/kernels/sinusoidal_{f32,bf16,f16}.cc
// (lib/kernels/dtype_dispatch.h): the token kernel of the TU's POSENC_DTYPE. No include guard:
// hwy/foreach_target.h re-includes the TU, and so this file, once per SIMD target.
#include "lib/kernels/dtype_dispatch.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/kernels/sinusoidal_tokens-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
POSENC_ROW_KERNEL_TARGET(SinusoidalTokens, SinusoidalPlan, SinusoidalTokens)
}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
POSENC_ROW_KERNEL_EXPORT(SinusoidalTokens, SinusoidalPlan)
}  // namespace posenc
#endif
