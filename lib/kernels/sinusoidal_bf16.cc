// Dispatch TU: sinusoidal encodings on bf16 embeddings / tables.
#include <cstdint>

#include "lib/kernels/sinusoidal_plan.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels/sinusoidal_bf16.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/kernels/sinusoidal_tokens-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
void SinusoidalTokensBF16Impl(const kernels::SinusoidalPlan& plan, int64_t begin, int64_t end) {
  SinusoidalTokens<hwy::bfloat16_t>(plan, begin, end);
}
}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_EXPORT(SinusoidalTokensBF16Impl);
namespace kernels {
void SinusoidalTokensBF16(const SinusoidalPlan& plan, int64_t begin, int64_t end) {
  HWY_DYNAMIC_DISPATCH(SinusoidalTokensBF16Impl)(plan, begin, end);
}
}  // namespace kernels
}  // namespace posenc
#endif
