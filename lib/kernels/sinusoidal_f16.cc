// Dispatch TU: sinusoidal encodings on f16 embeddings / tables.
#include <cstdint>

#include "lib/kernels/sinusoidal_plan.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels/sinusoidal_f16.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/kernels/sinusoidal_tokens-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
void SinusoidalTokensF16Impl(const kernels::SinusoidalPlan& plan, int64_t begin, int64_t end) {
  SinusoidalTokens<hwy::float16_t>(plan, begin, end);
}
}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_EXPORT(SinusoidalTokensF16Impl);
namespace kernels {
void SinusoidalTokensF16(const SinusoidalPlan& plan, int64_t begin, int64_t end) {
  HWY_DYNAMIC_DISPATCH(SinusoidalTokensF16Impl)(plan, begin, end);
}
}  // namespace kernels
}  // namespace posenc
#endif
