#include "bench/bandwidth.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/bandwidth.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void ScaleInPlaceImpl(float* x, size_t n, float scale) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto s = hn::Set(d, scale);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::Mul(hn::LoadU(d, x + i), s), d, x + i);
  for (; i < n; ++i) x[i] *= scale;
}

void AddInPlaceImpl(float* x, const float* t, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::Add(hn::LoadU(d, x + i), hn::LoadU(d, t + i)), d, x + i);
  for (; i < n; ++i) x[i] += t[i];
}

}  // namespace HWY_NAMESPACE
}  // namespace bench
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
namespace bench {
HWY_EXPORT(ScaleInPlaceImpl);
HWY_EXPORT(AddInPlaceImpl);
void ScaleInPlace(float* x, size_t n, float scale) {
  HWY_DYNAMIC_DISPATCH(ScaleInPlaceImpl)(x, n, scale);
}
void AddInPlace(float* x, const float* t, size_t n) {
  HWY_DYNAMIC_DISPATCH(AddInPlaceImpl)(x, t, n);
}
}  // namespace bench
}  // namespace posenc
#endif
