// Per-target RoPE row kernels: rotate the pairs of one head with one token's cos/sin row.
//
//   forward:  (x, y) -> (x*c - y*s, y*c + x*s)
//   inverse:  (x, y) -> (x*c + y*s, y*c - x*s)      (rotation by -theta)
// x, y, c, s are f32 in memory. Two arithmetic variants for f32 tensors (RotationArithmetic in
// posenc/rope.h): kF64 promotes, rotates in double and rounds once (per 4 pairs 2 promotions and
// 2 roundings; the token's cos/sin row is promoted once for all heads); kF32 uses f32 products
// and sums. bf16/f16
// tensors use the kF32 arithmetic on their exactly widened values and round the result once.
//
// Accuracy: the one measure of the contract (posenc/rope.h, reference::MaxPairUlpError). For a
// pair with inputs (x, y), M = max(|x|, |y|), exact outputs (X, Y) (the rotation by the double
// angle with exact m*cos, m*sin; m = attention factor; caller caches: their values), every
// output o of storage type T satisfies
//     |o - X| < B * ulp_T(M),  B = 2 (f32, kF64), 3 (f32, kF32), 1 + 3*2^-13 (f16), 1 + 3*2^-16 (bf16)
// provided |m| <= 1 (caches: |cos|, |sin| <= 1), |angle| < 2^29 (exact reduction, sincos-inl.h),
// and 2M <= the largest finite T (no output can overflow). Proof. Let M in [2^e, 2^(e+1)),
// ulp = ulp_f32, so ulp(M) = 2^(e-23) and M * 2^-24 <= (1 - 2^-24) ulp(M) (subnormal M: ulp(M) =
// 2^-149 and every bound below holds a fortiori).
//   (a) c = f32(m cos(theta)) is within 2^-25 (half an ulp below 1) + 2^-52 (the engine) of the
//       exact m cos(theta); likewise s. So |x dc| + |y ds| <= M (2^-24 + 2^-51) < ulp(M).
//       (Caches are exact by definition: this term is 0.)
//   (b) |c|, |s| <= 1, so every product is <= M and every sum <= 2M < 2^(e+2): rounding one
//       costs at most half an ulp there, i.e. <= 0.5 ulp(M) for a product, <= ulp(M) for a sum.
//   kF64: the double products of f32 values are exact, the double sum rounds by <= 2^-51 M, the
//         f32 result by <= ulp(M) (b): < ulp(M) (a, with the 2^-51 M) + ulp(M) = 2 ulp(M).
//   kF32: (a) + two products (b) + the sum (b): < ulp(M) + 0.5 + 0.5 + 1 ulp(M) = 3 ulp(M).
//   bf16/f16: the f32 value v is within 3 ulp(M) of X (kF32) and |v| <= 2M, so rounding it to T
//         costs <= 0.5 ulp_T(2M) = ulp_T(M): < ulp_T(M) + 3 ulp(M) = (1 + 3 * 2^(p-23)) ulp_T(M),
//         p = 10 (f16), 7 (bf16) mantissa bits (in T's subnormal range ulp(M) is smaller still).
//   When |X| lies in the binade above M the last rounding alone can cost a full ulp_T(M), so no
//   half type can promise "1 ulp of M": tests/accuracy_bound_test.cc finds such pairs.
//
// Bitwise reproducibility: products and sums are separate Mul and Add/Sub (never MulAdd: FMA
// exists on AVX2/AVX3 only and fusing there would change bits relative to SSE4/SSSE3/SCALAR; the
// build also passes -ffp-contract=off). Tails run the same code on 1-lane vectors, so every
// element gets identical arithmetic wherever it falls in a vector. Every NaN output is the
// canonical quiet NaN (CanonicalizeStoredNaNs): which of two NaN operands an Add returns depends
// on the operand order each target's compiler picked, and Inf * 0 differs in sign between x86
// and Arm.
// Half-layout pairs (x[i], x[i + r/2]) are two plain loads; interleaved pairs (x[2i], x[2i+1])
// use LoadInterleaved2, which is correct on the 1-lane SCALAR target too (shuffle tricks such as
// Reverse2 are not: HIGHWAY-1.0.3.md pitfall 1).

#if defined(POSENC_LIB_KERNELS_ROPE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POSENC_LIB_KERNELS_ROPE_INL_H_
#undef POSENC_LIB_KERNELS_ROPE_INL_H_
#else
#define POSENC_LIB_KERNELS_ROPE_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hwy/highway.h"
#include "lib/kernels/convert-inl.h"
#include "lib/kernels/half-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <bool kInverse, class V>
HWY_INLINE void Rotate(V x, V y, V c, V s, V& out_x, V& out_y) {
  if constexpr (kInverse) {
    out_x = hn::Add(hn::Mul(x, c), hn::Mul(y, s));
    out_y = hn::Sub(hn::Mul(y, c), hn::Mul(x, s));
  } else {
    out_x = hn::Sub(hn::Mul(x, c), hn::Mul(y, s));
    out_y = hn::Add(hn::Mul(y, c), hn::Mul(x, s));
  }
}

// The lanes of one step. kF64: `d` is a double tag, the f32 data are Rebind<float, D>
// (half-width) vectors promoted around the rotation, and cos/sin arrive already promoted (the
// token's row is widened once, WidenRowF64, not once per head: exact, so the same bits).
// kF32: `d` is a float tag.
template <bool kF64, class D>
struct Lanes {
  using DF = hn::Rebind<float, D>;
  template <bool kInverse>
  static HWY_INLINE void Rotate2(D d, hn::Vec<DF> x, hn::Vec<DF> y, hn::Vec<D> c, hn::Vec<D> s,
                                 hn::Vec<DF>& ox, hn::Vec<DF>& oy) {
    if constexpr (kF64) {
      hn::Vec<D> x64, y64;
      Rotate<kInverse>(hn::PromoteTo(d, x), hn::PromoteTo(d, y), c, s, x64, y64);
      ox = DemoteF64ToF32(d, x64);
      oy = DemoteF64ToF32(d, y64);
    } else {
      (void)d;
      Rotate<kInverse>(x, y, c, s, ox, oy);
    }
  }
};

// The cos/sin row element type of an f32 head with arithmetic kF64 / kF32.
template <bool kF64>
using RotationRow = std::conditional_t<kF64, double, float>;

// Row values widened to double for kF64 heads, once per token (PromoteTo is exact).
HWY_INLINE void WidenRowF64(const float* HWY_RESTRICT src, size_t n, double* HWY_RESTRICT dst) {
  const hn::ScalableTag<double> d;
  const hn::CappedTag<double, 1> d1;
  const hn::Rebind<float, decltype(d)> df;
  const hn::Rebind<float, decltype(d1)> df1;
  size_t i = 0;
  for (; i + hn::Lanes(d) <= n; i += hn::Lanes(d)) hn::StoreU(hn::PromoteTo(d, hn::LoadU(df, src + i)), d, dst + i);
  for (; i < n; ++i) hn::StoreU(hn::PromoteTo(d1, hn::LoadU(df1, src + i)), d1, dst + i);
}

// NaN outputs are made canonical after the fact, only for heads that may hold one: every step
// adds its outputs into a probe, which stays finite unless some output is NaN or infinite (or
// large outputs overflow it). Two adds per step instead of a compare and a blend per output
// vector; two probes alternate so the adds do not form one long dependency chain.
template <class V>
HWY_INLINE void Probe(V& probe, V ox, V oy) {
  probe = hn::Add(probe, hn::Add(ox, oy));
}
template <class DF>
HWY_INLINE bool ProbeFinite(DF df, hn::Vec<DF> probe) {
  return hn::AllFalse(df, hn::IsNaN(hn::Sub(probe, probe)));  // Inf - Inf and NaN - NaN are NaN
}

// Every stored NaN among n outputs becomes the canonical quiet NaN of its type (f32 0x7FC00000,
// f16 0x7E00, bf16 0x7FC0), the rare path after a probe that is not finite.
HWY_INLINE void CanonicalizeStoredNaNs(float* out, size_t n) {
  for (size_t j = 0; j < n; ++j) {
    uint32_t b;
    std::memcpy(&b, out + j, 4);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) {
      b = 0x7FC00000u;
      std::memcpy(out + j, &b, 4);
    }
  }
}
template <class T>
HWY_INLINE void CanonicalizeStoredNaNs(T* out, size_t n) {
  constexpr bool kF16 = std::is_same_v<T, hwy::float16_t>;
  const uint16_t inf = kF16 ? 0x7C00 : 0x7F80, nan = kF16 ? 0x7E00 : 0x7FC0;
  for (size_t j = 0; j < n; ++j) {
    uint16_t b;
    std::memcpy(&b, out + j, 2);
    if ((b & 0x7FFF) > inf) std::memcpy(out + j, &nan, 2);
  }
}

// Pairs (in[i], in[i + half]) -> (out[i], out[i + half]) for the lanes of d.
template <bool kF64, bool kInverse, class D>
HWY_INLINE void RotateHalfLanes(D d, const float* in, const RotationRow<kF64>* HWY_RESTRICT cos,
                                const RotationRow<kF64>* HWY_RESTRICT sin, size_t half, float* out,
                                hn::Vec<hn::Rebind<float, D>>& probe) {
  const hn::Rebind<float, D> df;
  hn::Vec<decltype(df)> ox, oy;
  Lanes<kF64, D>::template Rotate2<kInverse>(d, hn::LoadU(df, in), hn::LoadU(df, in + half),
                                             hn::LoadU(d, cos), hn::LoadU(d, sin), ox, oy);
  Probe(probe, ox, oy);
  hn::StoreU(ox, df, out);
  hn::StoreU(oy, df, out + half);
}

// Pairs (in[2i], in[2i + 1]) for the lanes of d.
template <bool kF64, bool kInverse, class D>
HWY_INLINE void RotateInterleavedLanes(D d, const float* in,
                                       const RotationRow<kF64>* HWY_RESTRICT cos,
                                       const RotationRow<kF64>* HWY_RESTRICT sin, float* out,
                                       hn::Vec<hn::Rebind<float, D>>& probe) {
  const hn::Rebind<float, D> df;
  hn::Vec<decltype(df)> x, y, ox, oy;
  hn::LoadInterleaved2(df, in, x, y);
  Lanes<kF64, D>::template Rotate2<kInverse>(d, x, y, hn::LoadU(d, cos), hn::LoadU(d, sin), ox,
                                             oy);
  Probe(probe, ox, oy);
  hn::StoreInterleaved2(ox, oy, df, out);
}

// The lanes of one step for pairs starting at pair index i, either layout.
template <bool kF64, bool kInterleaved, bool kInverse, class D>
HWY_INLINE void RotateStep(D d, const float* in, const RotationRow<kF64>* HWY_RESTRICT cos,
                           const RotationRow<kF64>* HWY_RESTRICT sin, size_t half, size_t i, float* out,
                           hn::Vec<hn::Rebind<float, D>>& probe) {
  if constexpr (kInterleaved) {
    RotateInterleavedLanes<kF64, kInverse>(d, in + 2 * i, cos + i, sin + i, out + 2 * i, probe);
  } else {
    RotateHalfLanes<kF64, kInverse>(d, in + i, cos + i, sin + i, half, out + i, probe);
  }
}

// Rotates the first 2 * half elements of one head. `in` may equal `out` (in place); otherwise
// they must not overlap. Elements past 2 * half are not touched. cos/sin: the token's row, in
// double for kF64 (WidenRowF64 of the f32 row), else f32.
template <bool kF64, bool kInterleaved, bool kInverse>
HWY_INLINE void RotateHead(const float* in, const RotationRow<kF64>* HWY_RESTRICT cos,
                           const RotationRow<kF64>* HWY_RESTRICT sin, size_t half, float* out) {
  using T = std::conditional_t<kF64, double, float>;
  const hn::ScalableTag<T> d;
  const hn::CappedTag<T, 1> d1;
  const hn::Rebind<float, decltype(d)> df;
  const hn::Rebind<float, decltype(d1)> df1;
  const size_t N = hn::Lanes(d);
  auto p0 = hn::Zero(df), p1 = hn::Zero(df);
  auto pt = hn::Zero(df1);
  size_t i = 0;
  for (; i + 2 * N <= half; i += 2 * N) {
    RotateStep<kF64, kInterleaved, kInverse>(d, in, cos, sin, half, i, out, p0);
    RotateStep<kF64, kInterleaved, kInverse>(d, in, cos, sin, half, i + N, out, p1);
  }
  for (; i + N <= half; i += N) RotateStep<kF64, kInterleaved, kInverse>(d, in, cos, sin, half, i, out, p0);
  for (; i < half; ++i) RotateStep<kF64, kInterleaved, kInverse>(d1, in, cos, sin, half, i, out, pt);
  if (!ProbeFinite(df, hn::Add(p0, p1)) || !ProbeFinite(df1, pt)) CanonicalizeStoredNaNs(out, 2 * half);
}

// bf16 / f16 heads: f32 arithmetic (RotationArithmetic does not apply), each output the
// round-to-nearest-even of the f32 result.
template <bool kInverse, class T, class D>
HWY_INLINE void RotateHalfLanesT(D d, const T* in, const float* HWY_RESTRICT cos,
                                 const float* HWY_RESTRICT sin, size_t half, T* out,
                                 hn::Vec<D>& probe) {
  hn::Vec<D> ox, oy;
  Rotate<kInverse>(LoadAsF32(d, in), LoadAsF32(d, in + half), hn::LoadU(d, cos), hn::LoadU(d, sin),
                   ox, oy);
  Probe(probe, ox, oy);
  StoreFromF32(ox, d, out);
  StoreFromF32(oy, d, out + half);
}

template <bool kInverse, class T, class D>
HWY_INLINE void RotateInterleavedLanesT(D d, const T* in, const float* HWY_RESTRICT cos,
                                        const float* HWY_RESTRICT sin, T* out, hn::Vec<D>& probe) {
  const hn::Rebind<uint16_t, D> du16;
  hn::Vec<decltype(du16)> a, b;
  hn::LoadInterleaved2(du16, reinterpret_cast<const uint16_t*>(in), a, b);
  hn::Vec<D> ox, oy;
  Rotate<kInverse>(BitsToF32(d, a, static_cast<T*>(nullptr)), BitsToF32(d, b, static_cast<T*>(nullptr)),
                   hn::LoadU(d, cos), hn::LoadU(d, sin), ox, oy);
  Probe(probe, ox, oy);
  hn::StoreInterleaved2(F32ToBits(d, ox, static_cast<T*>(nullptr)),
                        F32ToBits(d, oy, static_cast<T*>(nullptr)), du16,
                        reinterpret_cast<uint16_t*>(out));
}

template <bool kInterleaved, bool kInverse, class T, class D>
HWY_INLINE void RotateStepT(D d, const T* in, const float* HWY_RESTRICT cos,
                            const float* HWY_RESTRICT sin, size_t half, size_t i, T* out,
                            hn::Vec<D>& probe) {
  if constexpr (kInterleaved) {
    RotateInterleavedLanesT<kInverse>(d, in + 2 * i, cos + i, sin + i, out + 2 * i, probe);
  } else {
    RotateHalfLanesT<kInverse>(d, in + i, cos + i, sin + i, half, out + i, probe);
  }
}

// One head of any storage type: f32 heads honour kF64 (and then read a double row, RowOf);
// half heads use f32 arithmetic.
template <class T, bool kF64>
using RowOf = RotationRow<kF64 && std::is_same_v<T, float>>;
template <class T, bool kF64, bool kInterleaved, bool kInverse>
HWY_INLINE void RotateHeadT(const T* in, const RowOf<T, kF64>* HWY_RESTRICT cos,
                            const RowOf<T, kF64>* HWY_RESTRICT sin, size_t half, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    RotateHead<kF64, kInterleaved, kInverse>(in, cos, sin, half, out);
  } else {
    const hn::ScalableTag<float> d;
    const hn::CappedTag<float, 1> d1;
    const size_t N = hn::Lanes(d);
    auto p0 = hn::Zero(d), p1 = hn::Zero(d);
    auto pt = hn::Zero(d1);
    size_t i = 0;
    for (; i + 2 * N <= half; i += 2 * N) {
      RotateStepT<kInterleaved, kInverse>(d, in, cos, sin, half, i, out, p0);
      RotateStepT<kInterleaved, kInverse>(d, in, cos, sin, half, i + N, out, p1);
    }
    for (; i + N <= half; i += N) RotateStepT<kInterleaved, kInverse>(d, in, cos, sin, half, i, out, p0);
    for (; i < half; ++i) RotateStepT<kInterleaved, kInverse>(d1, in, cos, sin, half, i, out, pt);
    if (!ProbeFinite(d, hn::Add(p0, p1)) || !ProbeFinite(d1, pt)) CanonicalizeStoredNaNs(out, 2 * half);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_ROPE_INL_H_
