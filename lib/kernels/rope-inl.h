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
// are one load and an in-register swap with a per-token pair row (RotateInterleavedHead), the
// 1-lane SCALAR target and tails taking each pair's partner from a second load instead of
// Reverse2 (identity there: docs/highway-notes.md, Operations).

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

#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"
#include "lib/kernels/demote-inl.h"
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

// Non-temporal stores for the outputs of large out-of-place calls (RopeTokensT decides): the
// output lines are written without being read into the cache first, so such a call moves two
// streams instead of three. x86 only (hn::Stream on a partial x86 vector writes 16 bytes, and
// other architectures are not measured), full vectors at vector-aligned addresses only
// (StreamableHead); the values stored are the same, only the cache policy differs.
#undef POSENC_STREAM_STORES
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
#define POSENC_STREAM_STORES 1
#else
#define POSENC_STREAM_STORES 0
#endif

template <bool kStream, class DF>
HWY_INLINE void StoreOut(hn::Vec<DF> v, DF df, float* p) {
#if POSENC_STREAM_STORES
  if constexpr (kStream) {
    hn::Stream(v, df, p);
    return;
  }
#endif
  hn::StoreU(v, df, p);
}

// Whether a head's outputs can take streaming stores: every full-vector store of the head's
// loops (at out + k * Lanes and out + half + k * Lanes) is aligned, and the vector is a full
// x86 register of >= 16 bytes.
template <class DF>
HWY_INLINE bool StreamableHead(DF df, const float* out, size_t half) {
#if POSENC_STREAM_STORES
  const size_t bytes = hn::Lanes(df) * sizeof(float);
  return bytes >= 16 && reinterpret_cast<uintptr_t>(out) % bytes == 0 && half % hn::Lanes(df) == 0;
#else
  (void)df;
  (void)out;
  (void)half;
  return false;
#endif
}

// Orders streaming stores before what follows (they are weakly ordered on x86).
HWY_INLINE void FenceStreamingStores() {
#if POSENC_STREAM_STORES
  _mm_sfence();
#endif
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
template <bool kF64, bool kInverse, bool kStream = false, class D>
HWY_INLINE void RotateHalfLanes(D d, const float* in, const RotationRow<kF64>* HWY_RESTRICT cos,
                                const RotationRow<kF64>* HWY_RESTRICT sin, size_t half, float* out,
                                hn::Vec<hn::Rebind<float, D>>& probe) {
  const hn::Rebind<float, D> df;
  hn::Vec<decltype(df)> ox, oy;
  Lanes<kF64, D>::template Rotate2<kInverse>(d, hn::LoadU(df, in), hn::LoadU(df, in + half),
                                             hn::LoadU(d, cos), hn::LoadU(d, sin), ox, oy);
  Probe(probe, ox, oy);
  StoreOut<kStream>(ox, df, out);
  StoreOut<kStream>(oy, df, out + half);
}

// Interleaved pairs (x[2i], x[2i + 1]) read a pair row (BuildPairRows): for element j of a head
//   out[j] = in[j] * C[j] + in[j ^ 1] * S[j],   C = (c_0, c_0, c_1, c_1, ...),
//   S = (-s_0, s_0, -s_1, s_1, ...) forward, (s_0, -s_0, ...) inverse,
// i.e. (x c + y (-s), y c + x s) = (x c - y s, y c + x s): y (-s) is exactly -(y s) and a + (-b)
// is the IEEE definition of a - b, so the bits equal the rotation formula's. Per vector: one
// load, one in-register pair swap (Reverse2), two multiplies, one add, one store. The partner
// in[j ^ 1] comes from Reverse2 within a vector, or, on 1-lane vectors (the SCALAR target, where
// Reverse2 is the identity, docs/highway-notes.md, and every tail), from a second load:
// the same two products and the same sum, so every element gets the same bits on every target.
template <bool kInverse, class R>
HWY_INLINE void BuildPairRows(const float* HWY_RESTRICT cos, const float* HWY_RESTRICT sin,
                              size_t half, R* HWY_RESTRICT pair_cos, R* HWY_RESTRICT pair_sin) {
  for (size_t i = 0; i < half; ++i) {
    const R c = static_cast<R>(cos[i]), s = static_cast<R>(sin[i]);  // exact (f32 -> f32/f64)
    pair_cos[2 * i] = c;
    pair_cos[2 * i + 1] = c;
    pair_sin[2 * i] = kInverse ? s : -s;  // negation: exact, a sign flip
    pair_sin[2 * i + 1] = kInverse ? -s : s;
  }
}

// Lanes of d (f32 arithmetic: float; kF64 f32 heads: double) from / to storage type T; the store
// returns the f32 values for the probe.
template <bool kWide, class T, class D>
HWY_INLINE hn::Vec<D> LoadPairLanes(D d, const T* p) {
  if constexpr (kWide) {
    return hn::PromoteTo(d, hn::LoadU(hn::Rebind<float, D>(), p));
  } else {
    return LoadAsF32(d, p);
  }
}
template <bool kWide, bool kStream = false, class T, class D>
HWY_INLINE hn::Vec<hn::Rebind<float, D>> StorePairLanes(D d, hn::Vec<D> v, T* p) {
  if constexpr (kWide) {
    const auto f = DemoteF64ToF32(d, v);
    StoreOut<kStream>(f, hn::Rebind<float, D>(), p);
    return f;
  } else if constexpr (kStream && std::is_same_v<T, float>) {
    StoreOut<kStream>(v, d, p);
    return v;
  } else {
    StoreFromF32(v, d, p);
    return v;
  }
}

// Elements [j, j + Lanes(d)) of an interleaved head, Lanes(d) even (never the SCALAR target).
template <bool kWide, bool kStream, class T, class D>
HWY_INLINE void RotatePairLanes(D d, const T* in, const hn::TFromD<D>* HWY_RESTRICT pair_cos,
                                const hn::TFromD<D>* HWY_RESTRICT pair_sin, T* out,
                                hn::Vec<hn::Rebind<float, D>>& probe) {
  const auto v = LoadPairLanes<kWide>(d, in);
  const auto o = hn::Add(hn::Mul(v, hn::LoadU(d, pair_cos)), hn::Mul(hn::Reverse2(d, v), hn::LoadU(d, pair_sin)));
  probe = hn::Add(probe, StorePairLanes<kWide, kStream>(d, o, out));
}

// One pair (elements j, j + 1) on 1-lane vectors: the partner is loaded, not swapped.
template <bool kWide, class T, class D1>
HWY_INLINE void RotatePairScalar(D1 d1, const T* in, const hn::TFromD<D1>* HWY_RESTRICT pair_cos,
                                 const hn::TFromD<D1>* HWY_RESTRICT pair_sin, T* out,
                                 hn::Vec<hn::Rebind<float, D1>>& probe) {
  const auto x = LoadPairLanes<kWide>(d1, in);
  const auto y = LoadPairLanes<kWide>(d1, in + 1);
  const auto ox = hn::Add(hn::Mul(x, hn::LoadU(d1, pair_cos)), hn::Mul(y, hn::LoadU(d1, pair_sin)));
  const auto oy =
      hn::Add(hn::Mul(y, hn::LoadU(d1, pair_cos + 1)), hn::Mul(x, hn::LoadU(d1, pair_sin + 1)));
  Probe(probe, StorePairLanes<kWide>(d1, ox, out), StorePairLanes<kWide>(d1, oy, out + 1));
}

// Rotates the 2 * half elements of an interleaved head with the token's pair rows (2 * half
// values each, type R: double for kF64 f32 heads, else float). In place or not, as RotateHead.
template <bool kWide, bool kStream, class T, class R>
HWY_INLINE void RotateInterleavedHead(const T* in, const R* HWY_RESTRICT pair_cos,
                                      const R* HWY_RESTRICT pair_sin, size_t half, T* out) {
  const hn::ScalableTag<R> d;
  const hn::CappedTag<R, 1> d1;
  const hn::Rebind<float, decltype(d)> df;
  const hn::Rebind<float, decltype(d1)> df1;
  const size_t n = 2 * half;
  auto p0 = hn::Zero(df), p1 = hn::Zero(df);
  auto pt = hn::Zero(df1);
  size_t j = 0;
#if HWY_TARGET != HWY_SCALAR
  const size_t N = hn::Lanes(d);  // even on every other target (>= 2 lanes of 64 bits)
  for (; j + 2 * N <= n; j += 2 * N) {
    RotatePairLanes<kWide, kStream>(d, in + j, pair_cos + j, pair_sin + j, out + j, p0);
    RotatePairLanes<kWide, kStream>(d, in + j + N, pair_cos + j + N, pair_sin + j + N, out + j + N, p1);
  }
  for (; j + N <= n; j += N) {
    RotatePairLanes<kWide, kStream>(d, in + j, pair_cos + j, pair_sin + j, out + j, p0);
  }
#endif
  for (; j < n; j += 2) RotatePairScalar<kWide>(d1, in + j, pair_cos + j, pair_sin + j, out + j, pt);
  if (!ProbeFinite(df, hn::Add(p0, p1)) || !ProbeFinite(df1, pt)) CanonicalizeStoredNaNs(out, n);
}

// Rotates the first 2 * half elements of one head. `in` may equal `out` (in place); otherwise
// they must not overlap. Elements past 2 * half are not touched. cos/sin: the token's row, in
// double for kF64 (WidenRowF64 of the f32 row), else f32; for interleaved pairs the pair rows
// (BuildPairRows, 2 * half values each, the direction already in their signs).
// kStream: streaming stores for the full vectors (only where StreamableHead(out) holds).
template <bool kF64, bool kInterleaved, bool kInverse, bool kStream = false>
HWY_INLINE void RotateHead(const float* in, const RotationRow<kF64>* HWY_RESTRICT cos,
                           const RotationRow<kF64>* HWY_RESTRICT sin, size_t half, float* out) {
  if constexpr (kInterleaved) {
    RotateInterleavedHead<kF64, kStream>(in, cos, sin, half, out);
  } else {
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
      RotateHalfLanes<kF64, kInverse, kStream>(d, in + i, cos + i, sin + i, half, out + i, p0);
      RotateHalfLanes<kF64, kInverse, kStream>(d, in + i + N, cos + i + N, sin + i + N, half,
                                               out + i + N, p1);
    }
    for (; i + N <= half; i += N) {
      RotateHalfLanes<kF64, kInverse, kStream>(d, in + i, cos + i, sin + i, half, out + i, p0);
    }
    for (; i < half; ++i) RotateHalfLanes<kF64, kInverse>(d1, in + i, cos + i, sin + i, half, out + i, pt);
    if (!ProbeFinite(df, hn::Add(p0, p1)) || !ProbeFinite(df1, pt)) CanonicalizeStoredNaNs(out, 2 * half);
  }
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

// One head of any storage type: f32 heads honour kF64 (and then read a double row, RowOf);
// half heads use f32 arithmetic.
template <class T, bool kF64>
using RowOf = RotationRow<kF64 && std::is_same_v<T, float>>;

// The rows RotateHeadT reads, from a token's f32 cos/sin row (half values each): the pair rows
// for interleaved heads (2 * half values each), the row widened to double for kF64 f32 heads,
// else the f32 row itself. `scratch` holds 4 * half values of RowOf<T, kF64> when interleaved,
// 2 * half when widened (unused otherwise). Compute once per token, use for every head of it.
template <class T, bool kF64, bool kInterleaved, bool kInverse>
HWY_INLINE void RotationRows(const float* HWY_RESTRICT cos, const float* HWY_RESTRICT sin,
                             size_t half, RowOf<T, kF64>* HWY_RESTRICT scratch,
                             const RowOf<T, kF64>*& row_cos, const RowOf<T, kF64>*& row_sin) {
  if constexpr (kInterleaved) {
    BuildPairRows<kInverse>(cos, sin, half, scratch, scratch + 2 * half);
    row_cos = scratch;
    row_sin = scratch + 2 * half;
  } else if constexpr (std::is_same_v<RowOf<T, kF64>, double>) {
    WidenRowF64(cos, half, scratch);
    WidenRowF64(sin, half, scratch + half);
    row_cos = scratch;
    row_sin = scratch + half;
  } else {
    (void)scratch;
    row_cos = cos;
    row_sin = sin;
  }
}
// The scratch RotationRows needs for up to `half` pairs (4 * half values of RowOf<T, kF64>): on
// the stack up to kStackPairs pairs (every model we know), else on the heap, so a decode step pays
// no allocation. For kernels that produce their own cos/sin rows (M-RoPE, re-rotation).
template <class T, bool kF64>
class RotationRowScratch {
 public:
  using Row = RowOf<T, kF64>;
  static constexpr size_t kStackPairs = 512;
  explicit RotationRowScratch(size_t half) {
    if (half > kStackPairs) {
      heap_ = hwy::AllocateAligned<Row>(4 * half);
      rows_ = heap_.get();
    }
  }
  RotationRowScratch(const RotationRowScratch&) = delete;
  RotationRowScratch& operator=(const RotationRowScratch&) = delete;
  Row* get() { return rows_; }

 private:
  HWY_ALIGN Row stack_[4 * kStackPairs];
  hwy::AlignedFreeUniquePtr<Row[]> heap_;
  Row* rows_ = stack_;
};

template <class T, bool kF64, bool kInterleaved, bool kInverse>
HWY_INLINE void RotateHeadT(const T* in, const RowOf<T, kF64>* HWY_RESTRICT cos,
                            const RowOf<T, kF64>* HWY_RESTRICT sin, size_t half, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    RotateHead<kF64, kInterleaved, kInverse>(in, cos, sin, half, out);
  } else if constexpr (kInterleaved) {
    RotateInterleavedHead<false, false>(in, cos, sin, half, out);
  } else {
    const hn::ScalableTag<float> d;
    const hn::CappedTag<float, 1> d1;
    const size_t N = hn::Lanes(d);
    auto p0 = hn::Zero(d), p1 = hn::Zero(d);
    auto pt = hn::Zero(d1);
    size_t i = 0;
    for (; i + 2 * N <= half; i += 2 * N) {
      RotateHalfLanesT<kInverse>(d, in + i, cos + i, sin + i, half, out + i, p0);
      RotateHalfLanesT<kInverse>(d, in + i + N, cos + i + N, sin + i + N, half, out + i + N, p1);
    }
    for (; i + N <= half; i += N) RotateHalfLanesT<kInverse>(d, in + i, cos + i, sin + i, half, out + i, p0);
    for (; i < half; ++i) RotateHalfLanesT<kInverse>(d1, in + i, cos + i, sin + i, half, out + i, pt);
    if (!ProbeFinite(d, hn::Add(p0, p1)) || !ProbeFinite(d1, pt)) CanonicalizeStoredNaNs(out, 2 * half);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_ROPE_INL_H_
