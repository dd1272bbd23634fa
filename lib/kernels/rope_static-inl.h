// The body of the RoPE dispatch TUs lib/kernels/rope_{f32,bf16,f16}.cc (lib/kernels/
// dtype_dispatch.h): the RoPE and M-RoPE token kernels of the TU's POSENC_DTYPE. No include
// guard: hwy/foreach_target.h re-includes the TU, and so this file, once per SIMD target.
#include "lib/kernels/dtype_dispatch.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/kernels/mrope_tokens-inl.h"
#include "lib/kernels/rope_tokens-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
POSENC_ROW_KERNEL_TARGET(RopeTokens, RopePlan, RopeTokens)
POSENC_ROW_KERNEL_TARGET(MRopeTokens, RopePlan, MRopeTokens)
}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
POSENC_ROW_KERNEL_EXPORT(RopeTokens, RopePlan)
POSENC_ROW_KERNEL_EXPORT(MRopeTokens, RopePlan)
}  // namespace posenc
#endif
