// Per-target RoPE row kernels: rotate the pairs of one head with one token's cos/sin row.
//
//   forward:  (x, y) -> (x*c - y*s, y*c + x*s)
//   inverse:  (x, y) -> (x*c + y*s, y*c - x*s)      (rotation by -theta)
// x, y, c, s are f32 in memory; the rotation is evaluated in double and rounded once to f32.
// Error per output (M = max(|x|, |y|), c and s rounded to f32 with |c|, |s| <= 1):
//   |x|*|dc| + |y|*|ds| <= M * 2^-24 < 1 ulp(M), plus the final rounding <= 0.5 ulp(out) <= 1 ulp(M),
// so < 2 ulp(M) in all; f32 arithmetic would add two product roundings (measured 2.7 ulp).
// Products and sums are separate Mul and Add/Sub in double (never MulAdd: FMA exists on AVX2/AVX3
// only and fusing there would change bits relative to SSE4/SSSE3/SCALAR; the build also passes
// -ffp-contract=off). Tails run the same code on 1-lane vectors, so every element gets identical
// arithmetic wherever it falls in a vector. Half-layout pairs (x[i], x[i + r/2]) are two plain
// loads; interleaved pairs (x[2i], x[2i+1]) use LoadInterleaved2, which is correct on the 1-lane
// SCALAR target too (shuffle tricks such as Reverse2 are not: HIGHWAY-1.0.3.md pitfall 1).

#if defined(POSENC_LIB_KERNELS_ROPE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POSENC_LIB_KERNELS_ROPE_INL_H_
#undef POSENC_LIB_KERNELS_ROPE_INL_H_
#else
#define POSENC_LIB_KERNELS_ROPE_INL_H_
#endif

#include <cstddef>

#include "hwy/highway.h"
#include "lib/kernels/convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Rotates f32 lanes (vectors of Rebind<float, D64>) in double; returns f32 results.
template <bool kInverse, class D64, class VF>
HWY_INLINE void RotateLanes(D64 d64, VF xf, VF yf, VF cf, VF sf, VF& out_x, VF& out_y) {
  const auto x = hn::PromoteTo(d64, xf);
  const auto y = hn::PromoteTo(d64, yf);
  const auto c = hn::PromoteTo(d64, cf);
  const auto s = hn::PromoteTo(d64, sf);
  if (kInverse) {
    out_x = DemoteF64ToF32(d64, hn::Add(hn::Mul(x, c), hn::Mul(y, s)));
    out_y = DemoteF64ToF32(d64, hn::Sub(hn::Mul(y, c), hn::Mul(x, s)));
  } else {
    out_x = DemoteF64ToF32(d64, hn::Sub(hn::Mul(x, c), hn::Mul(y, s)));
    out_y = DemoteF64ToF32(d64, hn::Add(hn::Mul(y, c), hn::Mul(x, s)));
  }
}

// Pairs (in[i], in[i + half]) -> (out[i], out[i + half]) for the lanes of d64.
template <bool kInverse, class D64>
HWY_INLINE void RotateHalfLanes(D64 d64, const float* in, const float* HWY_RESTRICT cos,
                                const float* HWY_RESTRICT sin, size_t half, float* out) {
  const hn::Rebind<float, D64> df;
  const auto x = hn::LoadU(df, in);
  const auto y = hn::LoadU(df, in + half);
  hn::Vec<decltype(df)> ox, oy;
  RotateLanes<kInverse>(d64, x, y, hn::LoadU(df, cos), hn::LoadU(df, sin), ox, oy);
  hn::StoreU(ox, df, out);
  hn::StoreU(oy, df, out + half);
}

// Pairs (in[2i], in[2i + 1]) for the lanes of d64.
template <bool kInverse, class D64>
HWY_INLINE void RotateInterleavedLanes(D64 d64, const float* in, const float* HWY_RESTRICT cos,
                                       const float* HWY_RESTRICT sin, float* out) {
  const hn::Rebind<float, D64> df;
  hn::Vec<decltype(df)> x, y, ox, oy;
  hn::LoadInterleaved2(df, in, x, y);
  RotateLanes<kInverse>(d64, x, y, hn::LoadU(df, cos), hn::LoadU(df, sin), ox, oy);
  hn::StoreInterleaved2(ox, oy, df, out);
}

// Rotates the first 2 * half elements of one head. `in` may equal `out` (in place); otherwise
// they must not overlap. Elements past 2 * half are not touched.
template <bool kInterleaved, bool kInverse>
HWY_INLINE void RotateHead(const float* in, const float* HWY_RESTRICT cos,
                           const float* HWY_RESTRICT sin, size_t half, float* out) {
  const hn::ScalableTag<double> d;
  const hn::CappedTag<double, 1> d1;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  if (kInterleaved) {
    for (; i + N <= half; i += N) {
      RotateInterleavedLanes<kInverse>(d, in + 2 * i, cos + i, sin + i, out + 2 * i);
    }
    for (; i < half; ++i) {
      RotateInterleavedLanes<kInverse>(d1, in + 2 * i, cos + i, sin + i, out + 2 * i);
    }
  } else {
    for (; i + N <= half; i += N) {
      RotateHalfLanes<kInverse>(d, in + i, cos + i, sin + i, half, out + i);
    }
    for (; i < half; ++i) RotateHalfLanes<kInverse>(d1, in + i, cos + i, sin + i, half, out + i);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_ROPE_INL_H_
