// Dispatch TU: RoPE on f32 tensors (one TU per dtype so -j2 overlaps their compilation).
#include <cstdint>

#include "lib/kernels/rope_plan.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels/rope_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/kernels/rope_tokens-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
void RopeTokensF32Impl(const kernels::RopePlan& plan, int64_t begin, int64_t end) {
  RopeTokens<float>(plan, begin, end);
}
}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_EXPORT(RopeTokensF32Impl);
namespace kernels {
void RopeTokensF32(const RopePlan& plan, int64_t token_begin, int64_t token_end) {
  HWY_DYNAMIC_DISPATCH(RopeTokensF32Impl)(plan, token_begin, token_end);
}
}  // namespace kernels
}  // namespace posenc
#endif
