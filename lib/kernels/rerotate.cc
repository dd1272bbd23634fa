// Dispatch TU: fused re-rotation (RerotateRope) on f32, bf16 and f16 tensors.
#include <cstdint>

#include "lib/kernels/registry.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels/rerotate.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/kernels/rerotate-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
void RerotateTokensF32Impl(const kernels::RerotatePlan& plan, int64_t begin, int64_t end) {
  RerotateTokens<float>(plan, begin, end);
}
void RerotateTokensBF16Impl(const kernels::RerotatePlan& plan, int64_t begin, int64_t end) {
  RerotateTokens<hwy::bfloat16_t>(plan, begin, end);
}
void RerotateTokensF16Impl(const kernels::RerotatePlan& plan, int64_t begin, int64_t end) {
  RerotateTokens<hwy::float16_t>(plan, begin, end);
}
}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_EXPORT(RerotateTokensF32Impl);
HWY_EXPORT(RerotateTokensBF16Impl);
HWY_EXPORT(RerotateTokensF16Impl);
namespace kernels {
void RerotateTokensF32(const RerotatePlan& plan, int64_t token_begin, int64_t token_end) {
  HWY_DYNAMIC_DISPATCH(RerotateTokensF32Impl)(plan, token_begin, token_end);
}
void RerotateTokensBF16(const RerotatePlan& plan, int64_t token_begin, int64_t token_end) {
  HWY_DYNAMIC_DISPATCH(RerotateTokensBF16Impl)(plan, token_begin, token_end);
}
void RerotateTokensF16(const RerotatePlan& plan, int64_t token_begin, int64_t token_end) {
  HWY_DYNAMIC_DISPATCH(RerotateTokensF16Impl)(plan, token_begin, token_end);
}
}  // namespace kernels
}  // namespace posenc
#endif
