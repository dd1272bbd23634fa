// Dispatch TU: M-RoPE (multi-stream positions) on f32, bf16 and f16 tensors.
#include <cstdint>

#include "lib/kernels/rope_plan.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels/mrope.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/kernels/mrope_tokens-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
void MRopeTokensF32Impl(const kernels::RopePlan& plan, int64_t begin, int64_t end) {
  MRopeTokens<float>(plan, begin, end);
}
void MRopeTokensBF16Impl(const kernels::RopePlan& plan, int64_t begin, int64_t end) {
  MRopeTokens<hwy::bfloat16_t>(plan, begin, end);
}
void MRopeTokensF16Impl(const kernels::RopePlan& plan, int64_t begin, int64_t end) {
  MRopeTokens<hwy::float16_t>(plan, begin, end);
}
}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_EXPORT(MRopeTokensF32Impl);
HWY_EXPORT(MRopeTokensBF16Impl);
HWY_EXPORT(MRopeTokensF16Impl);
namespace kernels {
void MRopeTokensF32(const RopePlan& plan, int64_t token_begin, int64_t token_end) {
  HWY_DYNAMIC_DISPATCH(MRopeTokensF32Impl)(plan, token_begin, token_end);
}
void MRopeTokensBF16(const RopePlan& plan, int64_t token_begin, int64_t token_end) {
  HWY_DYNAMIC_DISPATCH(MRopeTokensBF16Impl)(plan, token_begin, token_end);
}
void MRopeTokensF16(const RopePlan& plan, int64_t token_begin, int64_t token_end) {
  HWY_DYNAMIC_DISPATCH(MRopeTokensF16Impl)(plan, token_begin, token_end);
}
}  // namespace kernels
}  // namespace posenc
#endif
