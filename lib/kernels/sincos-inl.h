// Per-target cos/sin rows for RoPE and sinusoidal encodings: the angle engine.
//
// For a position p and frequencies w[i] (double) this produces, for each i,
//   cos_i = f32(m * cos(p * w[i])),  sin_i = f32(m * sin(p * w[i]))
// where p * w[i] is the double product (one rounding: the "exact" angle of the contract) and
// f32() rounds to nearest even once. Everything in between is double:
//   1. k = rne(theta * 2/pi), via the 1.5 * 2^52 trick (explicit Add/Sub: hn::Round differs on
//      SCALAR for some ties, see docs/highway-notes.md).
//   2. r = theta - k * pi/2 with pi/2 split into three 24-bit pieces plus a 53-bit tail: each
//      k * piece is exact for |k| < 2^29 (|theta| < 8.4e8), so r carries ~1e-16 absolute error.
//   3. sin(r), cos(r) on [-pi/4, pi/4] by Taylor polynomials through r^15 and r^16: truncation
//      error < 5e-17, far below the f32 rounding.
//   4. Quadrant k mod 4 swaps / negates, then multiply by m and round to f32.
// Only Mul, Add, Sub, comparisons and selects are used (no MulAdd, no hn::Sin), all exactly
// rounded IEEE operations, so every target, the scalar fallback included, gives the same bits.
// Callers keep |theta| <= 2^50 (validated in lib/api); beyond 2^29 accuracy degrades gradually.

#if defined(POSENC_LIB_KERNELS_SINCOS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POSENC_LIB_KERNELS_SINCOS_INL_H_
#undef POSENC_LIB_KERNELS_SINCOS_INL_H_
#else
#define POSENC_LIB_KERNELS_SINCOS_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "lib/kernels/demote-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// cos and sin of theta (double lanes), exact to ~1e-16 for |theta| < 8.4e8.
template <class D>
HWY_INLINE void CosSinF64(D d, hn::Vec<D> theta, hn::Vec<D>& cos_out, hn::Vec<D>& sin_out) {
  const auto kMagic = hn::Set(d, 6755399441055744.0);  // 1.5 * 2^52: adding it rounds to integer
  const auto k = hn::Sub(hn::Add(hn::Mul(theta, hn::Set(d, 0x1.45f306dc9c883p-1)), kMagic), kMagic);
  auto r = hn::Sub(theta, hn::Mul(k, hn::Set(d, 0x1.921fb40000000p+0)));
  r = hn::Sub(r, hn::Mul(k, hn::Set(d, 0x1.4442d00000000p-24)));
  r = hn::Sub(r, hn::Mul(k, hn::Set(d, 0x1.8469880000000p-48)));
  r = hn::Sub(r, hn::Mul(k, hn::Set(d, 0x1.8cc51701b839ap-72)));
  const auto r2 = hn::Mul(r, r);

  // sin(r) = r + r^3 * (s1 + r2 * (s2 + ... )), Taylor coefficients (-1)^n / (2n+1)!.
  auto ps = hn::Set(d, -7.6471637318198164759e-13);  // -1/15!
  ps = hn::Add(hn::Mul(ps, r2), hn::Set(d, 1.6059043836821614599e-10));   // 1/13!
  ps = hn::Add(hn::Mul(ps, r2), hn::Set(d, -2.5052108385441718775e-08));  // -1/11!
  ps = hn::Add(hn::Mul(ps, r2), hn::Set(d, 2.7557319223985890653e-06));   // 1/9!
  ps = hn::Add(hn::Mul(ps, r2), hn::Set(d, -1.9841269841269841270e-04));  // -1/7!
  ps = hn::Add(hn::Mul(ps, r2), hn::Set(d, 8.3333333333333333333e-03));   // 1/5!
  ps = hn::Add(hn::Mul(ps, r2), hn::Set(d, -1.6666666666666666667e-01));  // -1/3!
  const auto s = hn::Add(r, hn::Mul(hn::Mul(ps, r2), r));

  // cos(r) = 1 + r2 * (c1 + r2 * (c2 + ...)), Taylor coefficients (-1)^n / (2n)!.
  auto pc = hn::Set(d, 4.7794773323873852974e-14);  // 1/16!
  pc = hn::Add(hn::Mul(pc, r2), hn::Set(d, -1.1470745597729724714e-11));  // -1/14!
  pc = hn::Add(hn::Mul(pc, r2), hn::Set(d, 2.0876756987868098979e-09));   // 1/12!
  pc = hn::Add(hn::Mul(pc, r2), hn::Set(d, -2.7557319223985890653e-07));  // -1/10!
  pc = hn::Add(hn::Mul(pc, r2), hn::Set(d, 2.4801587301587301587e-05));   // 1/8!
  pc = hn::Add(hn::Mul(pc, r2), hn::Set(d, -1.3888888888888888889e-03));  // -1/6!
  pc = hn::Add(hn::Mul(pc, r2), hn::Set(d, 4.1666666666666666667e-02));   // 1/4!
  pc = hn::Add(hn::Mul(pc, r2), hn::Set(d, -0.5));                        // -1/2!
  const auto c = hn::Add(hn::Set(d, 1.0), hn::Mul(pc, r2));

  // Quadrant: f = k/4 - rne(k/4) is 0, 0.25, +-0.5 or -0.25 for k mod 4 = 0, 1, 2, 3.
  const auto quarter = hn::Mul(k, hn::Set(d, 0.25));
  const auto f = hn::Sub(quarter, hn::Sub(hn::Add(quarter, kMagic), kMagic));
  const auto q1 = hn::Eq(f, hn::Set(d, 0.25));
  const auto q2 = hn::Eq(hn::Abs(f), hn::Set(d, 0.5));
  const auto q3 = hn::Eq(f, hn::Set(d, -0.25));
  const auto swap = hn::Or(q1, q3);
  const auto sin_q = hn::IfThenElse(swap, c, s);
  const auto cos_q = hn::IfThenElse(swap, s, c);
  sin_out = hn::IfThenElse(hn::Or(q2, q3), hn::Neg(sin_q), sin_q);
  cos_out = hn::IfThenElse(hn::Or(q1, q2), hn::Neg(cos_q), cos_q);
}

// f32(v) for the double lanes v, stored at hi, and with kLo also f32(v - f32(v)) at lo (the
// difference is exact in double: f32(v) is v rounded to 24 bits).
template <bool kLo, class D>
HWY_INLINE void StoreHiLo(D d, hn::Vec<D> v, float* HWY_RESTRICT hi, float* HWY_RESTRICT lo) {
  const hn::Rebind<float, D> df;
  const auto h = DemoteF64ToF32(d, v);
  hn::StoreU(h, df, hi);
  if constexpr (kLo) hn::StoreU(DemoteF64ToF32(d, hn::Sub(v, hn::PromoteTo(d, h))), df, lo);
}

// cos[i], sin[i] for i < half: f32(m * cos(pos * inv_freq[i])), f32(m * sin(...)); with kLo also
// the lo parts of RotationArithmetic::kFmaChain, cos_lo[i] = f32(C - cos[i]) with C the double
// m * cos(...) (docs/math.md section 9.7), likewise sin_lo.
template <bool kLo = false, class D>
HWY_INLINE void CosSinLanes(D d, double pos, const double* HWY_RESTRICT inv_freq, double m,
                            float* HWY_RESTRICT cos, float* HWY_RESTRICT sin,
                            float* HWY_RESTRICT cos_lo = nullptr,
                            float* HWY_RESTRICT sin_lo = nullptr) {
  const auto theta = hn::Mul(hn::Set(d, pos), hn::LoadU(d, inv_freq));
  hn::Vec<D> c, s;
  CosSinF64(d, theta, c, s);
  const auto vm = hn::Set(d, m);
  StoreHiLo<kLo>(d, hn::Mul(c, vm), cos, cos_lo);
  StoreHiLo<kLo>(d, hn::Mul(s, vm), sin, sin_lo);
}

// One position's row: CosSinLanes over i < half (kLo: with its lo parts).
template <bool kLo = false>
HWY_INLINE void CosSinRow(double pos, const double* HWY_RESTRICT inv_freq, size_t half, double m,
                          float* HWY_RESTRICT cos, float* HWY_RESTRICT sin,
                          float* HWY_RESTRICT cos_lo = nullptr,
                          float* HWY_RESTRICT sin_lo = nullptr) {
  const hn::ScalableTag<double> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= half; i += N) {
    CosSinLanes<kLo>(d, pos, inv_freq + i, m, cos + i, sin + i, cos_lo + (kLo ? i : 0),
                     sin_lo + (kLo ? i : 0));
  }
  // Tail on 1-lane vectors: the same per-lane arithmetic as the body.
  const hn::CappedTag<double, 1> d1;
  for (; i < half; ++i) {
    CosSinLanes<kLo>(d1, pos, inv_freq + i, m, cos + i, sin + i, cos_lo + (kLo ? i : 0),
                     sin_lo + (kLo ? i : 0));
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_SINCOS_INL_H_
