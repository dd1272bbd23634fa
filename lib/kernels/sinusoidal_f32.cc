// Dispatch TU: sinusoidal encodings on f32 embeddings / tables.
#include <cstdint>

#include "lib/kernels/sinusoidal_plan.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels/sinusoidal_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/kernels/sinusoidal_tokens-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
void SinusoidalTokensF32Impl(const kernels::SinusoidalPlan& plan, int64_t begin, int64_t end) {
  SinusoidalTokens<float>(plan, begin, end);
}
}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_EXPORT(SinusoidalTokensF32Impl);
namespace kernels {
void SinusoidalTokensF32(const SinusoidalPlan& plan, int64_t begin, int64_t end) {
  HWY_DYNAMIC_DISPATCH(SinusoidalTokensF32Impl)(plan, begin, end);
}
}  // namespace kernels
}  // namespace posenc
#endif
