// Per-target f64 -> f32 rounding that gives the same bits on every target.
//
// x86 SIMD DemoteTo is cvtpd2ps: round to nearest even, overflow to +-Inf, NaN stays NaN. The
// portable fallbacks' DemoteTo (SCALAR with g++, EMU128 with clang) clamps overflow and Inf to
// +-FLT_MAX instead, so on those this rounds each lane itself: magnitudes >= FLT_MAX + half an ulp
// (0x1.ffffffp+127) become Inf, as IEEE RNE does, and everything else is an in-range static_cast
// (defined behaviour).

#if defined(POSENC_LIB_KERNELS_CONVERT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POSENC_LIB_KERNELS_CONVERT_INL_H_
#undef POSENC_LIB_KERNELS_CONVERT_INL_H_
#else
#define POSENC_LIB_KERNELS_CONVERT_INL_H_
#endif

#include <cmath>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D64>
HWY_INLINE hn::Vec<hn::Rebind<float, D64>> DemoteF64ToF32(D64 d64, hn::Vec<D64> v) {
  const hn::Rebind<float, D64> df;
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  double in[16 / sizeof(double)];  // at most 128 bits of lanes on either target
  float out[16 / sizeof(float)] = {};
  hn::StoreU(v, d64, in);
  for (size_t i = 0; i < hn::Lanes(d64); ++i) {
    const double x = in[i];
    if (!std::isnan(x) && std::fabs(x) >= 0x1.ffffffp+127) {
      out[i] = x > 0 ? HUGE_VALF : -HUGE_VALF;
    } else {
      out[i] = static_cast<float>(x);
    }
  }
  return hn::LoadU(df, out);
#else
  (void)d64;
  return hn::DemoteTo(df, v);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_CONVERT_INL_H_
