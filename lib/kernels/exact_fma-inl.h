// Per-target f32 fused multiply-add with one rounding on every target: the same bits as C's fmaf.
//
// MulAddExact(d, a, b, c) = RN(a * b + c), the exact a * b + c rounded once to nearest even, for
// f32 vectors of any target. Where Highway's MulAdd is one fused instruction (HWY_NATIVE_FMA:
// AVX2, AVX3, NEON, SVE) it is that instruction. Elsewhere (SSE4, SSSE3, EMU128, SCALAR)
// Highway's MulAdd is Mul then Add, two roundings, so this evaluates in double:
//
//   p = a * b           exact: two 24-bit significands give at most 48 bits, and |p| lies in
//                       [2^-298, 2^256), far inside double's normal range;
//   s = RN53(p + c)     e = (p + c) - s exactly (Knuth's TwoSum, 6 operations; no overflow for
//                       these magnitudes);
//   s' = round to odd   if e != 0 and s's last significand bit is 0, s moves one double ulp
//                       towards e (its integer bits +1 when e has s's sign, else -1): s' is
//                       then the odd neighbour bracketing p + c, i.e. RO53(p + c);
//   RN24(s')            DemoteF64ToF32 (demote-inl.h).
//
// Rounding to odd at 53 bits and then to nearest at 24 <= 53 - 2 bits gives the correctly
// rounded result: an inexact s' is odd at 53 bits, so it is neither a 24-bit number nor a 24-bit
// midpoint, and it lies strictly between the same two 24-bit midpoints as p + c (no 54-bit number
// lies strictly between s' and p + c), so the last rounding goes the same way as from p + c
// itself (Boldo and Melquiond proved this in general, IEEE Trans. Computers 57(4), 2008); for f32
// subnormal results too (fewer bits still) and at the overflow threshold (s' stays on the side
// of 0x1.ffffffp+127 that p + c is on). s = 0 implies e = 0 (an exact cancellation). Inf or NaN
// operands make e a NaN, which `0 < |e|` rejects, so s passes through unchanged: the infinities
// and NaNs of fmaf (NaN payloads are not part of the contract). The signs of exact zeros follow
// from the one double addition, as fmaf's do. Cost on these targets: about 20 operations per
// two double lanes. tests/exact_fma_test.cc holds every target to std::fmaf bit for bit.

#if defined(POSENC_LIB_KERNELS_EXACT_FMA_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POSENC_LIB_KERNELS_EXACT_FMA_INL_H_
#undef POSENC_LIB_KERNELS_EXACT_FMA_INL_H_
#else
#define POSENC_LIB_KERNELS_EXACT_FMA_INL_H_
#endif

#include <cstdint>
#include <type_traits>

#include "hwy/highway.h"
#include "lib/kernels/demote-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if !HWY_NATIVE_FMA
// RN24(a * b + c) for f32 lanes held in the double vectors of D64 (one double per f32 lane).
template <class D64>
HWY_INLINE hn::Vec<hn::Rebind<float, D64>> MulAddExactWide(D64 d64,
                                                           hn::Vec<hn::Rebind<float, D64>> a,
                                                           hn::Vec<hn::Rebind<float, D64>> b,
                                                           hn::Vec<hn::Rebind<float, D64>> c) {
  const hn::RebindToUnsigned<D64> du;
  const auto cw = hn::PromoteTo(d64, c);
  const auto p = hn::Mul(hn::PromoteTo(d64, a), hn::PromoteTo(d64, b));
  const auto s = hn::Add(p, cw);
  const auto bv = hn::Sub(s, p);  // TwoSum: e = (p - (s - bv)) + (c - bv)
  const auto e = hn::Add(hn::Sub(p, hn::Sub(s, bv)), hn::Sub(cw, bv));
  const auto s_bits = hn::BitCast(du, s);
  const auto one = hn::Set(du, uint64_t{1});
  // +1 (towards larger magnitude) when e and s share a sign, else -1 (as 2^64 - 1).
  const auto opposite = hn::ShiftRight<63>(hn::Xor(hn::BitCast(du, e), s_bits));
  const auto step = hn::Sub(one, hn::ShiftLeft<1>(opposite));
  const auto inexact = hn::RebindMask(du, hn::Lt(hn::Zero(d64), hn::Abs(e)));
  const auto even = hn::Eq(hn::And(s_bits, one), hn::Zero(du));
  const auto odd = hn::IfThenElse(hn::And(inexact, even), hn::Add(s_bits, step), s_bits);
  return DemoteF64ToF32(d64, hn::BitCast(d64, odd));
}
#endif

// RN24(a * b + c) lane by lane: fmaf's bits on every target (see the top of this file).
template <class D>
HWY_INLINE hn::Vec<D> MulAddExact(D d, hn::Vec<D> a, hn::Vec<D> b, hn::Vec<D> c) {
  static_assert(std::is_same_v<hn::TFromD<D>, float>, "f32 lanes");
#if HWY_NATIVE_FMA
  (void)d;
  return hn::MulAdd(a, b, c);
#elif HWY_TARGET == HWY_SCALAR
  (void)d;
  return MulAddExactWide(hn::Rebind<double, D>(), a, b, c);  // 1 lane
#else
  if constexpr (hn::MaxLanes(D()) == 1) {  // a tail's 1-lane vector
    (void)d;
    return MulAddExactWide(hn::Rebind<double, D>(), a, b, c);
  } else {
    // Each half of the f32 lanes in a double vector of as many lanes.
    const hn::Half<D> dh;
    const hn::Rebind<double, decltype(dh)> d64;
    const auto lo = MulAddExactWide(d64, hn::LowerHalf(dh, a), hn::LowerHalf(dh, b),
                                    hn::LowerHalf(dh, c));
    const auto hi = MulAddExactWide(d64, hn::UpperHalf(dh, a), hn::UpperHalf(dh, b),
                                    hn::UpperHalf(dh, c));
    return hn::Combine(d, hi, lo);
  }
#endif
}

// RN24(c - a * b) lane by lane (fmaf(-a, b, c)): NegMulAdd where the target fuses (one
// instruction, where MulAdd of Neg(a) may cost a sign flip more), else MulAddExact of -a (exact).
template <class D>
HWY_INLINE hn::Vec<D> NegMulAddExact(D d, hn::Vec<D> a, hn::Vec<D> b, hn::Vec<D> c) {
#if HWY_NATIVE_FMA
  (void)d;
  return hn::NegMulAdd(a, b, c);
#else
  return MulAddExact(d, hn::Neg(a), b, c);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_EXACT_FMA_INL_H_
