// Per-target f64 -> f32 rounding that gives the same bits on every target.
//
// Hardware conversions (x86 cvtpd2ps, Arm fcvtn / SVE fcvt) round to nearest even, overflow to
// +-Inf and keep NaN a NaN (quieted, top payload bits). Highway 1.0.3's C++ emulations of
// DemoteTo, used by the SCALAR target (the fallback with g++) and the EMU128 target (the
// fallback with clang), instead clamp Inf and every magnitude above FLT_MAX to +-FLT_MAX. On
// those two targets this rounds each lane itself: magnitudes >= FLT_MAX + half an ulp
// (0x1.ffffffp+127, the RNE overflow threshold) become +-Inf, NaN and everything else go
// through static_cast (in range, so defined behaviour; the compiler's scalar conversion is the
// same hardware instruction). Every target then returns IEEE RNE results; the reproducibility
// and hash tests plant Inf, NaN, overflow and subnormals to hold all of them to it.

// Fast-math would break the contract silently (reassociation, contraction, no NaN/Inf): refuse it.
// (demote-inl.h and half-inl.h both carry this check; every kernel TU includes one of them.)
#ifdef __FAST_MATH__
#error "posenc must not be compiled with -ffast-math: its kernels rely on exactly rounded IEEE operations (docs/math.md)"
#endif

#if defined(POSENC_LIB_KERNELS_DEMOTE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POSENC_LIB_KERNELS_DEMOTE_INL_H_
#undef POSENC_LIB_KERNELS_DEMOTE_INL_H_
#else
#define POSENC_LIB_KERNELS_DEMOTE_INL_H_
#endif

#include <cmath>
#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D64>
HWY_INLINE hn::Vec<hn::Rebind<float, D64>> DemoteF64ToF32(D64 d64, hn::Vec<D64> v) {
  const hn::Rebind<float, D64> df;
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  // HWY_LANES(double) bounds the lanes of any double vector of these targets (1 or 2).
  HWY_ALIGN double in[HWY_LANES(double)];
  HWY_ALIGN float out[HWY_LANES(double)];
  hn::Store(v, d64, in);
  for (size_t i = 0; i < hn::Lanes(d64); ++i) {
    const double x = in[i];
    if (!std::isnan(x) && std::fabs(x) >= 0x1.ffffffp+127) {
      out[i] = x > 0 ? HUGE_VALF : -HUGE_VALF;
    } else {
      out[i] = static_cast<float>(x);
    }
  }
  return hn::Load(df, out);
#else
  (void)d64;
  return hn::DemoteTo(df, v);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_DEMOTE_INL_H_
