// Per-target bf16 / f16 <-> f32 conversions that round to nearest even on every target.
//
// Highway 1.0.3's DemoteTo truncates bf16 on x86 and f16 without F16C (docs/highway-notes.md), so
// posenc converts with integer operations, identical on every target:
//   bf16 <- f32: (u + 0x7FFF + ((u >> 16) & 1)) >> 16; NaN -> (u >> 16) | 0x0040 (quiet, keeps
//                sign and top payload). Overflow carries into the exponent and becomes Inf.
//   f16  <- f32: AVX2/AVX3 use F16C (vcvtps2ph, RNE). Elsewhere: |v| >= 65536 (or NaN/Inf): Inf,
//                or for NaN 0x7E00 | (mantissa >> 13), F16C's quieted NaN; |v| < 2^-14: add 0.5f
//                so the FPU's own RNE aligns the 10 subnormal bits, subtract the bias; otherwise
//                rebias the exponent and add 0xFFF + (mantissa bit 13) before >> 13 (RNE; a carry
//                out of 65504 gives Inf as IEEE does). Sign copied. (F. Giesen's
//                float_to_half_rtne.)
//   f32 <- bf16: u << 16 (exact).
//   f32 <- f16:  AVX2/AVX3 use F16C (vcvtph2ps). Elsewhere: shift into place and rebias; Inf/NaN
//                get the extra exponent and NaNs the quiet bit (as F16C); subnormals are
//                renormalised by one exact f32 subtraction. Exact for all 65536 inputs.
// The emulation reproduces F16C bit for bit, NaNs included (tests/half_test.cc checks every
// target against one scalar oracle), so f16 results are identical on every target.
// Storage types are hwy::bfloat16_t / hwy::float16_t, accessed as uint16_t bits.

// Fast-math would break the contract silently (reassociation, contraction, no NaN/Inf): refuse it.
// (demote-inl.h and half-inl.h both carry this check; every kernel TU includes one of them.)
#ifdef __FAST_MATH__
#error "posenc must not be compiled with -ffast-math: its kernels rely on exactly rounded IEEE operations (docs/math.md)"
#endif

#if defined(POSENC_LIB_KERNELS_HALF_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POSENC_LIB_KERNELS_HALF_INL_H_
#undef POSENC_LIB_KERNELS_HALF_INL_H_
#else
#define POSENC_LIB_KERNELS_HALF_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class DF>
HWY_INLINE hn::Vec<DF> BF16BitsToF32(DF df, hn::Vec<hn::Rebind<uint16_t, DF>> bits) {
  const hn::Rebind<uint32_t, DF> du32;
  return hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(du32, bits)));
}

#undef POSENC_F16C
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define POSENC_F16C 1
#else
#define POSENC_F16C 0
#endif

template <class DF>
HWY_INLINE hn::Vec<DF> F16BitsToF32(DF df, hn::Vec<hn::Rebind<uint16_t, DF>> bits) {
#if POSENC_F16C
  return hn::PromoteTo(df, hn::BitCast(hn::Rebind<hwy::float16_t, DF>(), bits));
#else
  const hn::Rebind<int32_t, DF> di;
  const auto h = hn::BitCast(di, hn::PromoteTo(hn::Rebind<uint32_t, DF>(), bits));
  const auto shifted_exp = hn::Set(di, 0x7C00 << 13);
  auto o = hn::ShiftLeft<13>(hn::And(h, hn::Set(di, 0x7FFF)));
  const auto exp = hn::And(o, shifted_exp);
  o = hn::Add(o, hn::Set(di, (127 - 15) << 23));
  const auto inf_nan = hn::Eq(exp, shifted_exp);
  const auto sub = hn::Eq(exp, hn::Zero(di));
  const auto quiet = hn::IfThenElseZero(hn::Ne(hn::And(h, hn::Set(di, 0x3FF)), hn::Zero(di)),
                                        hn::Set(di, 0x00400000));
  o = hn::IfThenElse(inf_nan, hn::Or(hn::Add(o, hn::Set(di, (128 - 16) << 23)), quiet), o);
  // Zero / subnormal: one more exponent step, then subtract 2^-14 (exact) to renormalise.
  const auto renorm = hn::BitCast(
      di, hn::Sub(hn::BitCast(df, hn::Add(o, hn::Set(di, 1 << 23))), hn::Set(df, 6.103515625e-05f)));
  o = hn::IfThenElse(sub, renorm, o);
  o = hn::Or(o, hn::ShiftLeft<16>(hn::And(h, hn::Set(di, 0x8000))));
  return hn::BitCast(df, o);
#endif
}

// u32 lanes <= 0xFFFF to u16 lanes (exact).
template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, DF>> U32ToU16Bits(DF df, hn::Vec<hn::Rebind<uint32_t, DF>> r) {
  (void)df;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  return hn::TruncateTo(hn::Rebind<uint16_t, DF>(), r);  // vpmovdw
#else
  return hn::DemoteTo(hn::Rebind<uint16_t, DF>(), hn::BitCast(hn::Rebind<int32_t, DF>(), r));
#endif
}

template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, DF>> F32ToBF16Bits(DF df, hn::Vec<DF> v) {
  const hn::Rebind<uint32_t, DF> du;
  const auto u = hn::BitCast(du, v);
  const auto upper = hn::ShiftRight<16>(u);
  const auto rounded =
      hn::ShiftRight<16>(hn::Add(u, hn::Add(hn::Set(du, 0x7FFF), hn::And(upper, hn::Set(du, 1)))));
  const auto quiet = hn::Or(upper, hn::Set(du, 0x40));
  const auto is_nan = hn::RebindMask(du, hn::IsNaN(v));  // not Ne(v, v): AVX2 uses NEQ_OQ
  return U32ToU16Bits(df, hn::IfThenElse(is_nan, quiet, rounded));
}

// bf16 of v rounded to nearest even in the upper 16 bits of each u32 lane (the lower 16 bits
// are don't-care), every NaN as the canonical quiet NaN 0x7FC0 (no sign, no payload): for
// outputs whose contract makes NaNs canonical anyway (RoPE heads, rope-inl.h), so they need no
// canonicalising pass. Non-NaN lanes give F32ToBF16Bits's bits; the rounding add cannot carry
// out of a non-NaN lane (Inf is 0x7F800000, the largest finite rounds to it).
template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<uint32_t, DF>> F32ToBF16CanonicalHigh(DF df, hn::Vec<DF> v) {
  (void)df;
  const hn::Rebind<uint32_t, DF> du;
  const auto u = hn::BitCast(du, v);
  const auto rounded =
      hn::Add(u, hn::Add(hn::Set(du, 0x7FFF), hn::And(hn::ShiftRight<16>(u), hn::Set(du, 1))));
  return hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), hn::Set(du, 0x7FC00000u), rounded);
}

#if HWY_TARGET != HWY_SCALAR
// v0 then v1 as 2 * Lanes(df) bf16 at p: F32ToBF16CanonicalHigh's bits (round to nearest even,
// every NaN 0x7FC0). The upper halves of the u32 lanes narrow with one ConcatOdd.
// With kAvx512Bf16 (the caller read kernels::Avx512Bf16Stores() once, outside its loops: a load
// and a branch per store cost ~5 % of a 4096-token bf16 call on an AVX512_BF16 Xeon,
// docs/performance.md section 3.27), on AVX3 with full 16-lane vectors: one VCVTNE2PS2BF16 when
// no lane is a NaN or an f32 subnormal. That instruction rounds every other f32 to nearest even
// exactly as the integer rounding does (all 2^32 inputs compared on an AVX512_BF16 Xeon), but
// it treats subnormal inputs as zero and keeps NaN payloads; such vectors (rare: a NaN or a
// result below 2^-126) take the integer rounding. About 3x fewer operations per store.
template <bool kAvx512Bf16, class DF>
HWY_INLINE void StoreBF16Pair(DF df, hn::Vec<DF> v0, hn::Vec<DF> v1, uint16_t* HWY_RESTRICT p) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (kAvx512Bf16 && hn::MaxLanes(DF()) == 16) {
    constexpr int kNaNOrSubnormal = 0x01 | 0x20 | 0x80;  // QNaN, denormal, SNaN (VFPCLASSPS)
    const __mmask16 special0 = _mm512_fpclass_ps_mask(v0.raw, kNaNOrSubnormal);
    const __mmask16 special1 = _mm512_fpclass_ps_mask(v1.raw, kNaNOrSubnormal);
    if (HWY_LIKELY(_kortestz_mask16_u8(special0, special1))) {  // one KORTESTW for both
      __m512i bits;  // lower 16 lanes: v0, upper: v1 (AT&T operand order: src2, src1, dst)
      asm("vcvtne2ps2bf16 %2, %1, %0" : "=v"(bits) : "v"(v1.raw), "v"(v0.raw));
      _mm512_storeu_si512(p, bits);
      return;
    }
  }
#endif
  const hn::Repartition<uint16_t, DF> d16;  // 2 * Lanes(df) lanes
  const auto hi0 = hn::BitCast(d16, F32ToBF16CanonicalHigh(df, v0));
  const auto hi1 = hn::BitCast(d16, F32ToBF16CanonicalHigh(df, v1));
  hn::StoreU(hn::ConcatOdd(d16, hi1, hi0), d16, p);
}
#endif  // HWY_TARGET != HWY_SCALAR

template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, DF>> F32ToF16Bits(DF df, hn::Vec<DF> v) {
#if POSENC_F16C
  (void)df;
  return hn::BitCast(hn::Rebind<uint16_t, DF>(), hn::DemoteTo(hn::Rebind<hwy::float16_t, DF>(), v));
#else
  const hn::Rebind<int32_t, DF> di;
  const auto u = hn::BitCast(di, v);
  const auto sign = hn::And(u, hn::Set(di, static_cast<int32_t>(0x80000000u)));
  const auto a = hn::Xor(u, sign);  // |v| bits, >= 0 as int32
  const auto nan_bits = hn::Or(hn::Set(di, 0x7E00), hn::And(hn::ShiftRight<13>(a), hn::Set(di, 0x3FF)));
  const auto inf_nan = hn::IfThenElse(hn::Gt(a, hn::Set(di, 0x7F800000)), nan_bits,
                                      hn::Set(di, 0x7C00));
  // Subnormal / zero results: 0.5f = ((127 - 15) + (23 - 10) + 1) << 23 as the magic.
  const auto sub = hn::Sub(hn::BitCast(di, hn::Add(hn::BitCast(df, a), hn::Set(df, 0.5f))),
                           hn::Set(di, 0x3F000000));
  const auto mant_odd = hn::And(hn::ShiftRight<13>(a), hn::Set(di, 1));
  const auto norm = hn::ShiftRight<13>(
      hn::Add(hn::Add(a, hn::Set(di, static_cast<int32_t>(((15 - 127) * (1 << 23)) + 0xFFF))),
              mant_odd));
  auto r = hn::IfThenElse(hn::Lt(a, hn::Set(di, 113 << 23)), sub, norm);
  r = hn::IfThenElse(hn::Lt(a, hn::Set(di, 0x47800000)), r, inf_nan);
  r = hn::Or(r, hn::BitCast(di, hn::ShiftRight<16>(hn::BitCast(hn::Rebind<uint32_t, DF>(), sign))));
  return hn::DemoteTo(hn::Rebind<uint16_t, DF>(), r);
#endif
}

// Loads / stores f32 lanes from / to each storage type.
template <class DF>
HWY_INLINE hn::Vec<DF> LoadAsF32(DF df, const float* p) {
  return hn::LoadU(df, p);
}
template <class DF>
HWY_INLINE hn::Vec<DF> LoadAsF32(DF df, const hwy::bfloat16_t* p) {
  return BF16BitsToF32(df, hn::LoadU(hn::Rebind<uint16_t, DF>(), reinterpret_cast<const uint16_t*>(p)));
}
template <class DF>
HWY_INLINE hn::Vec<DF> LoadAsF32(DF df, const hwy::float16_t* p) {
  return F16BitsToF32(df, hn::LoadU(hn::Rebind<uint16_t, DF>(), reinterpret_cast<const uint16_t*>(p)));
}
template <class DF>
HWY_INLINE void StoreFromF32(hn::Vec<DF> v, DF df, float* p) {
  hn::StoreU(v, df, p);
}
template <class DF>
HWY_INLINE void StoreFromF32(hn::Vec<DF> v, DF df, hwy::bfloat16_t* p) {
  hn::StoreU(F32ToBF16Bits(df, v), hn::Rebind<uint16_t, DF>(), reinterpret_cast<uint16_t*>(p));
}
template <class DF>
HWY_INLINE void StoreFromF32(hn::Vec<DF> v, DF df, hwy::float16_t* p) {
  hn::StoreU(F32ToF16Bits(df, v), hn::Rebind<uint16_t, DF>(), reinterpret_cast<uint16_t*>(p));
}

// Bits of a half type to f32 and back (for LoadInterleaved2 on the 16-bit lanes).
template <class DF>
HWY_INLINE hn::Vec<DF> BitsToF32(DF df, hn::Vec<hn::Rebind<uint16_t, DF>> b, hwy::bfloat16_t*) {
  return BF16BitsToF32(df, b);
}
template <class DF>
HWY_INLINE hn::Vec<DF> BitsToF32(DF df, hn::Vec<hn::Rebind<uint16_t, DF>> b, hwy::float16_t*) {
  return F16BitsToF32(df, b);
}
template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, DF>> F32ToBits(DF df, hn::Vec<DF> v, hwy::bfloat16_t*) {
  return F32ToBF16Bits(df, v);
}
template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, DF>> F32ToBits(DF df, hn::Vec<DF> v, hwy::float16_t*) {
  return F32ToF16Bits(df, v);
}

// n elements of type T to f32 / f32 to T (1-lane tails: the same per-lane code).
template <class T>
HWY_INLINE void ConvertToF32(const T* src, size_t n, float* dst) {
  const hn::ScalableTag<float> d;
  const hn::CappedTag<float, 1> d1;
  size_t i = 0;
  for (; i + hn::Lanes(d) <= n; i += hn::Lanes(d)) hn::StoreU(LoadAsF32(d, src + i), d, dst + i);
  for (; i < n; ++i) hn::StoreU(LoadAsF32(d1, src + i), d1, dst + i);
}
template <class T>
HWY_INLINE void ConvertFromF32(const float* src, size_t n, T* dst) {
  const hn::ScalableTag<float> d;
  const hn::CappedTag<float, 1> d1;
  size_t i = 0;
  for (; i + hn::Lanes(d) <= n; i += hn::Lanes(d)) StoreFromF32(hn::LoadU(d, src + i), d, dst + i);
  for (; i < n; ++i) StoreFromF32(hn::LoadU(d1, src + i), d1, dst + i);
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_HALF_INL_H_
