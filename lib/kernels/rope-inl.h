// Per-target RoPE row kernels: rotate the pairs of one head with one token's cos/sin row.
//
//   forward:  (x, y) -> (x*c - y*s, y*c + x*s)
//   inverse:  (x, y) -> (x*c + y*s, y*c - x*s)      (rotation by -theta)
// x, y, c, s are f32 in memory. Two arithmetic variants for f32 tensors here (RotationArithmetic
// in posenc/rope.h; the third, kFmaChain, is lib/kernels/rope_chain-inl.h): kF64 promotes, rotates in double and rounds once (per 4 pairs 2 promotions and
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
// Bitwise reproducibility: f32 products and sums are separate Mul and Add/Sub (never MulAdd: FMA
// exists on some targets only and fusing an f32 product would change bits relative to
// SSE4/SSSE3/SCALAR; the build also passes -ffp-contract=off). kF64 may fuse (Rotate): its
// double products of f32 values are exact, so fusing leaves every bit as it was. Tails run the
// same code on 1-lane vectors, so every element gets identical arithmetic wherever it falls in a
// vector. Every NaN output is the
// canonical quiet NaN (CanonicalizeStoredNaNs after a probe; bf16 stores write it directly,
// F32ToBF16CanonicalHigh, so the same bits): which of two NaN operands an Add returns depends
// on the operand order each target's compiler picked, and Inf * 0 differs in sign between x86
// and Arm.
// Half-layout pairs (x[i], x[i + r/2]) are two plain loads; interleaved pairs (x[2i], x[2i+1])
// are one load and an in-register swap with a per-token pair row (PairLanes), the
// 1-lane SCALAR target and tails taking each pair's partner from a second load instead of
// Reverse2 (identity there: docs/highway-notes.md, Operations).

#if defined(POSENC_LIB_KERNELS_ROPE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POSENC_LIB_KERNELS_ROPE_INL_H_
#undef POSENC_LIB_KERNELS_ROPE_INL_H_
#else
#define POSENC_LIB_KERNELS_ROPE_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hwy/aligned_allocator.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "lib/kernels/cpu_features.h"
#include "lib/kernels/demote-inl.h"
#include "lib/kernels/half-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Double lanes (kF64 f32 heads) only ever hold f32 values here: heads are promoted from f32 and
// rows widened from f32 rows (RowOf). A product of two f32 values is exact in double, so a fused
// multiply-add rounds once at the sum exactly as Mul then Add/Sub does: the same bits on targets
// with FMA (AVX2, AVX3, NEON, SVE: one instruction fewer per output vector) and without (SSE4,
// SSSE3, EMU128, SCALAR: Highway's MulAdd is Mul then Add there). f32 lanes keep separate
// Mul and Add/Sub: f32 products round, and fusing would change bits between targets.
template <bool kInverse, class V>
HWY_INLINE void Rotate(V x, V y, V c, V s, V& out_x, V& out_y) {
  if constexpr (sizeof(hn::TFromV<V>) == sizeof(double)) {
    if constexpr (kInverse) {
      out_x = hn::MulAdd(x, c, hn::Mul(y, s));
      out_y = hn::MulSub(y, c, hn::Mul(x, s));
    } else {
      out_x = hn::MulSub(x, c, hn::Mul(y, s));
      out_y = hn::MulAdd(y, c, hn::Mul(x, s));
    }
  } else if constexpr (kInverse) {
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
// other architectures are not measured), full vectors of >= 16 bytes at 16-byte aligned
// addresses only (StreamableHead, StreamBlocks); the values stored are the same, only the cache
// policy differs.
#undef POSENC_STREAM_STORES
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
#define POSENC_STREAM_STORES 1
#else
#define POSENC_STREAM_STORES 0
#endif

#if POSENC_STREAM_STORES
// A streaming store of v at a 16-byte aligned p: one store where p is aligned to the vector,
// else one per 16-byte block (buffers from malloc or numpy are 16-byte aligned, rarely 32 or 64).
template <class DF>
HWY_INLINE void StreamBlocks(hn::Vec<DF> v, DF df, float* p) {
  if constexpr (hn::MaxLanes(df) * sizeof(float) <= 16) {
    hn::Stream(v, df, p);
  } else {
    if (reinterpret_cast<uintptr_t>(p) % (hn::MaxLanes(df) * sizeof(float)) == 0) {
      hn::Stream(v, df, p);
      return;
    }
    const hn::Half<DF> dh;
    StreamBlocks(hn::LowerHalf(dh, v), dh, p);
    StreamBlocks(hn::UpperHalf(dh, v), dh, p + hn::MaxLanes(dh));
  }
}
#endif

template <bool kStream, class DF>
HWY_INLINE void StoreOut(hn::Vec<DF> v, DF df, float* p) {
#if POSENC_STREAM_STORES
  if constexpr (kStream) {
    StreamBlocks(v, df, p);
    return;
  }
#endif
  hn::StoreU(v, df, p);
}

// Whether a head's outputs can take streaming stores: every full-vector store of the head's
// loops (at out + k * Lanes and out + half + k * Lanes) is 16-byte aligned (StreamBlocks), no
// element is left to the 1-lane tail, and the vector is a full x86 register of >= 16 bytes.
template <class DF>
HWY_INLINE bool StreamableHead(DF df, const float* out, size_t half) {
#if POSENC_STREAM_STORES
  const size_t bytes = hn::Lanes(df) * sizeof(float);
  return bytes >= 16 && reinterpret_cast<uintptr_t>(out) % 16 == 0 && half % hn::Lanes(df) == 0;
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
// A half-layout step may probe its x outputs alone, because whenever a pair's y output is NaN its
// x output (x c - y s, or x c + y s for the inverse) is NaN or infinite, so the probe is not finite:
// (1) a NaN or infinite operand (x, y, c or s) makes a product of x or y with c or s NaN or
//     infinite (Inf * 0 = NaN), and so the x output, as a sum keeps them;
// (2) with finite operands y c + x s can be NaN only if y c and x s both overflow (f32 products:
//     a caller's cache may hold |c|, |s| > 1; kF64 products of f32 values never overflow), and
//     then |x c| |y s| = |x s| |y c| exceeds the overflow threshold squared, so x c or y s
//     overflows as well and the x output is infinite or NaN.
template <class V>
HWY_INLINE void ProbeX(V& probe, V ox) {
  probe = hn::Add(probe, ox);
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

// How a head's lanes move between storage type T and the arithmetic lanes of D (float; double
// for kF64 f32 heads, kWide): loads widen exactly (f32 -> f64 PromoteTo, bf16 / f16 exact), a
// store rounds once (DemoteF64ToF32, round to nearest even to bf16 / f16) and returns the f32
// values the probe reads. kProbe: whether NaN outputs are canonicalised after the head (the
// probe); bf16 stores write the canonical NaN themselves (F32ToBF16CanonicalHigh), f32 and f16
// ones do not. kPairedStores: Store2 writes two vectors' lanes to 2 * Lanes(d) consecutive
// elements with one store; without it two vectors are rotated and stored one after the other.
// kStoresInput: Store returns v itself, so the half-layout step probes before it stores (GCC 12
// then emits the f32 step as tight as a hand-written loop; probing after the stores cost two
// reloads per 2-vector step, measured on the AVX2 loop when both outputs were probed).
template <class T, bool kWide>
struct HeadStorage {
  static_assert(!kWide || std::is_same_v<T, float>, "kF64 arithmetic: f32 heads only");
  static constexpr bool kProbe = true;
  static constexpr bool kPairedStores = false;
  static constexpr bool kStoresInput = !kWide;
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const T* p) {
    if constexpr (kWide) {
      return hn::PromoteTo(d, hn::LoadU(hn::Rebind<float, D>(), p));
    } else {
      return LoadAsF32(d, p);
    }
  }
  template <bool kStream, class D>
  static HWY_INLINE hn::Vec<hn::Rebind<float, D>> Store(D d, hn::Vec<D> v, T* p) {
    static_assert(!kStream || std::is_same_v<T, float>, "streaming stores: f32 heads only");
    if constexpr (kWide) {
      const auto f = DemoteF64ToF32(d, v);
      StoreOut<kStream>(f, hn::Rebind<float, D>(), p);
      return f;
    } else if constexpr (std::is_same_v<T, float>) {
      StoreOut<kStream>(v, d, p);
      return v;
    } else {
      StoreFromF32(v, d, p);
      return v;
    }
  }
};

// bf16 heads: two vectors narrow into one full vector of 16-bit lanes and one store
// (StoreBF16Pair: one ConcatOdd, or with kAvx512Bf16 AVX512_BF16's conversion; not on SCALAR,
// whose vectors have 1 lane). Every NaN is stored as 0x7FC0 directly: no probe.
// HeadStorage<bf16, false> is the integer rounding; RotateTokenHeads picks BF16HeadStorage<true>
// once per token where kernels::Avx512Bf16Stores() holds (the same bits, bf16_store_test.cc).
template <bool kAvx512Bf16>
struct BF16HeadStorage {
  using T = hwy::bfloat16_t;
  static constexpr bool kProbe = false;
  static constexpr bool kPairedStores = HWY_TARGET != HWY_SCALAR;
  static constexpr bool kStoresInput = true;
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const T* p) {
    return LoadAsF32(d, p);
  }
  template <bool kStream, class D>
  static HWY_INLINE hn::Vec<D> Store(D d, hn::Vec<D> v, T* p) {
    static_assert(!kStream, "streaming stores: f32 heads only");
    hn::StoreU(U32ToU16Bits(d, hn::ShiftRight<16>(F32ToBF16CanonicalHigh(d, v))),
               hn::Rebind<uint16_t, D>(), reinterpret_cast<uint16_t*>(p));
    return v;
  }
#if HWY_TARGET != HWY_SCALAR
  template <bool kStream, class D>
  static HWY_INLINE void Store2(D d, hn::Vec<D> v0, hn::Vec<D> v1, T* p) {
    static_assert(!kStream, "streaming stores: f32 heads only");
    StoreBF16Pair<kAvx512Bf16>(d, v0, v1, reinterpret_cast<uint16_t*>(p));
  }
#endif
};
template <>
struct HeadStorage<hwy::bfloat16_t, false> : BF16HeadStorage<false> {};

// The HeadStorage of T heads whose arithmetic lanes are RowOf<T, kF64> (the default policy of
// the head loops below).
template <class T, bool kF64>
using HeadStorageOf = HeadStorage<T, std::is_same_v<RowOf<T, kF64>, double>>;

// The steps of a head for the half layout (pairs (in[i], in[i + half]) -> (out[i], out[i + half]))
// on the lanes of d, with the row's vectors c, s given (loaded by HeadLoop, or held in registers
// by RegisterRowChunks): OneWith and Tail (a 1-lane d, loading its row values) rotate Lanes(d)
// pairs, TwoWith 2 * Lanes(d) pairs (with paired stores all loads come first, else two OneWith).
template <class IO, bool kInverse, bool kStream>
struct HalfSteps {
  template <bool kStreamThis = kStream, class T, class D>
  static HWY_INLINE void OneWith(D d, const T* in, hn::Vec<D> c, hn::Vec<D> s, size_t half, T* out,
                                 hn::Vec<hn::Rebind<float, D>>& probe) {
    hn::Vec<D> ox, oy;
    Rotate<kInverse>(IO::Load(d, in), IO::Load(d, in + half), c, s, ox, oy);
    // The probe reads the x outputs only (ProbeX): one add per step instead of two.
    if constexpr (IO::kStoresInput) {
      if constexpr (IO::kProbe) ProbeX(probe, ox);
      IO::template Store<kStreamThis>(d, ox, out);
      IO::template Store<kStreamThis>(d, oy, out + half);
    } else {
      const auto fx = IO::template Store<kStreamThis>(d, ox, out);
      IO::template Store<kStreamThis>(d, oy, out + half);
      if constexpr (IO::kProbe) ProbeX(probe, fx);
    }
  }
  template <class T, class D1>
  static HWY_INLINE void Tail(D1 d1, const T* in, const hn::TFromD<D1>* HWY_RESTRICT cos,
                              const hn::TFromD<D1>* HWY_RESTRICT sin, size_t half, T* out,
                              hn::Vec<hn::Rebind<float, D1>>& probe) {
    OneWith<false>(d1, in, hn::LoadU(d1, cos), hn::LoadU(d1, sin), half, out, probe);
  }
  // c0, s0: the row's vectors for the first Lanes(d) pairs, c1, s1 for the next.
  template <bool kStreamThis = kStream, class T, class D>
  static HWY_INLINE void TwoWith(D d, const T* in, hn::Vec<D> c0, hn::Vec<D> s0, hn::Vec<D> c1,
                                 hn::Vec<D> s1, size_t half, T* out,
                                 hn::Vec<hn::Rebind<float, D>>& p0,
                                 hn::Vec<hn::Rebind<float, D>>& p1) {
    const size_t N = hn::Lanes(d);
    if constexpr (IO::kPairedStores) {
      static_assert(!IO::kProbe, "paired stores feed no probe");
      hn::Vec<D> ox0, oy0, ox1, oy1;
      Rotate<kInverse>(IO::Load(d, in), IO::Load(d, in + half), c0, s0, ox0, oy0);
      Rotate<kInverse>(IO::Load(d, in + N), IO::Load(d, in + half + N), c1, s1, ox1, oy1);
      IO::template Store2<kStreamThis>(d, ox0, ox1, out);
      IO::template Store2<kStreamThis>(d, oy0, oy1, out + half);
    } else {
      OneWith<kStreamThis>(d, in, c0, s0, half, out, p0);
      OneWith<kStreamThis>(d, in + N, c1, s1, half, out + N, p1);
    }
  }
};

// The steps of an interleaved head (elements [j, j + Lanes(d)) with the pair rows, BuildPairRows):
// OneWith and TwoWith (the pair rows' vectors given) on vectors with an even number of lanes
// (never the SCALAR target), Tail one pair (elements j, j + 1) on 1-lane vectors, the partner
// loaded, not swapped. `half` is unused.
template <class IO, bool kStream>
struct PairSteps {
  template <class D>
  static HWY_INLINE hn::Vec<D> RotatedWith(D d, hn::Vec<D> v, hn::Vec<D> pair_c, hn::Vec<D> pair_s) {
    if constexpr (sizeof(hn::TFromD<D>) == sizeof(double)) {  // exact products: see Rotate
      return hn::MulAdd(v, pair_c, hn::Mul(hn::Reverse2(d, v), pair_s));
    }
    return hn::Add(hn::Mul(v, pair_c), hn::Mul(hn::Reverse2(d, v), pair_s));
  }
  template <bool kStreamThis = kStream, class T, class D>
  static HWY_INLINE void OneWith(D d, const T* in, hn::Vec<D> pair_c, hn::Vec<D> pair_s, size_t,
                                 T* out, hn::Vec<hn::Rebind<float, D>>& probe) {
    const auto f =
        IO::template Store<kStreamThis>(d, RotatedWith(d, IO::Load(d, in), pair_c, pair_s), out);
    if constexpr (IO::kProbe) probe = hn::Add(probe, f);
  }
  // c0, s0: the pair rows' vectors for the first Lanes(d) elements, c1, s1 for the next.
  template <bool kStreamThis = kStream, class T, class D>
  static HWY_INLINE void TwoWith(D d, const T* in, hn::Vec<D> c0, hn::Vec<D> s0, hn::Vec<D> c1,
                                 hn::Vec<D> s1, size_t half, T* out,
                                 hn::Vec<hn::Rebind<float, D>>& p0,
                                 hn::Vec<hn::Rebind<float, D>>& p1) {
    const size_t N = hn::Lanes(d);
    if constexpr (IO::kPairedStores) {
      static_assert(!IO::kProbe, "paired stores feed no probe");
      const auto o0 = RotatedWith(d, IO::Load(d, in), c0, s0);
      const auto o1 = RotatedWith(d, IO::Load(d, in + N), c1, s1);
      IO::template Store2<kStreamThis>(d, o0, o1, out);
    } else {
      OneWith<kStreamThis>(d, in, c0, s0, half, out, p0);
      OneWith<kStreamThis>(d, in + N, c1, s1, half, out + N, p1);
    }
  }
  template <class T, class D1>
  static HWY_INLINE void Tail(D1 d1, const T* in, const hn::TFromD<D1>* HWY_RESTRICT pair_cos,
                              const hn::TFromD<D1>* HWY_RESTRICT pair_sin, size_t, T* out,
                              hn::Vec<hn::Rebind<float, D1>>& probe) {
    const auto x = IO::Load(d1, in);
    const auto y = IO::Load(d1, in + 1);
    const auto ox = hn::Add(hn::Mul(x, hn::LoadU(d1, pair_cos)), hn::Mul(y, hn::LoadU(d1, pair_sin)));
    const auto oy =
        hn::Add(hn::Mul(y, hn::LoadU(d1, pair_cos + 1)), hn::Mul(x, hn::LoadU(d1, pair_sin + 1)));
    const auto fx = IO::template Store<false>(d1, ox, out);
    const auto fy = IO::template Store<false>(d1, oy, out + 1);
    if constexpr (IO::kProbe) Probe(probe, fx, fy);
  }
};

// The loop skeleton of every head, both layouts and every storage type: n positions, full
// vectors of Lanes(d) two at a time (two probes, so their adds do not form one dependency
// chain), then one, then 1-lane Tail steps of tail_step positions (kVectors false: only those).
// Returns whether the probes stayed finite (no output needs canonicalising). Steps is
// HalfSteps or PairSteps over a HeadStorage policy.
template <class Steps, bool kVectors, class D, class D1, class T>
HWY_INLINE bool HeadLoop(D d, D1 d1, size_t n, size_t tail_step, const T* in,
                         const hn::TFromD<D>* HWY_RESTRICT cos, const hn::TFromD<D>* HWY_RESTRICT sin,
                         size_t half, T* out) {
  const hn::Rebind<float, D> df;
  const hn::Rebind<float, D1> df1;
  auto p0 = hn::Zero(df), p1 = hn::Zero(df);
  auto pt = hn::Zero(df1);
  size_t j = 0;
  if constexpr (kVectors) {
    const size_t N = hn::Lanes(d);
    for (; j + 2 * N <= n; j += 2 * N) {
      Steps::TwoWith(d, in + j, hn::LoadU(d, cos + j), hn::LoadU(d, sin + j),
                     hn::LoadU(d, cos + j + N), hn::LoadU(d, sin + j + N), half, out + j, p0, p1);
    }
    for (; j + N <= n; j += N) {
      Steps::OneWith(d, in + j, hn::LoadU(d, cos + j), hn::LoadU(d, sin + j), half, out + j, p0);
    }
  }
  for (; j < n; j += tail_step) Steps::Tail(d1, in + j, cos + j, sin + j, half, out + j, pt);
  return ProbeFinite(df, hn::Add(p0, p1)) && ProbeFinite(df1, pt);
}

// The lanes of the f32 probes of heads whose arithmetic lanes are R (RowOf).
template <class R>
using HeadProbeTag = hn::Rebind<float, hn::ScalableTag<R>>;

// Register-resident rows. Every head of a token reads the same row, so where a head's rotated
// elements are a whole number V of full vectors (half layout: V = half / Lanes pairs; interleaved:
// V = 2 * half / Lanes elements of the pair rows), the row's V cos and V sin vectors are loaded
// once and stay in registers while every head of the token is rotated, so each vector of outputs
// costs the loads of its inputs only (half layout: two instead of four). Where V exceeds
// kMaxRegisterRowVectors, small calls (`chunks`: kernels::ChunksRegisterRows of the plan) take
// the row in chunks of K vectors (K the largest divisor of V in [2, kMaxRegisterRowVectors]), each
// chunk over every head in turn; on data that no longer sit in L1/L2 that order took 1.13-1.29x
// the plain head loop's time (AVX2, 512 Llama-3-8B tokens), so larger calls take the plain loop.
// The arithmetic is the steps' OneWith / TwoWith, the same operations on the same values as the
// loop skeleton's (HeadLoop), so the bits are those of RotateHeadT.
// Measured in docs/performance.md section 3.13.
// kMaxRegisterRowVectors leaves registers for the work (2 V row vectors: 16 of the 32 on AVX3, 8
// of 16 or 32 on the other x86 targets, EMU128 and NEON); 0 (never) on SCALAR (1 lane) and the
// SVE targets, whose sizeless vector types cannot form arrays.
#undef POSENC_REGISTER_ROW_VECTORS
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
#define POSENC_REGISTER_ROW_VECTORS 8
#elif (HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR) || HWY_TARGET == HWY_NEON || \
    HWY_TARGET == HWY_EMU128
#define POSENC_REGISTER_ROW_VECTORS 4
#else
#define POSENC_REGISTER_ROW_VECTORS 0
#endif
inline constexpr size_t kMaxRegisterRowVectors = POSENC_REGISTER_ROW_VECTORS;

// The vectors of the row RegisterRowTokenHeads keeps in registers at once for V vectors per head:
// V itself up to kMaxRegisterRowVectors, else (with `chunks`) the chunk size K; 0 if it declines.
inline size_t RegisterRowChunkVectors(size_t V, bool chunks) {
  if (V <= kMaxRegisterRowVectors) return V;
  if (!chunks) return 0;
  for (size_t K = kMaxRegisterRowVectors; K >= 2; --K) {
    if (V % K == 0) return K;
  }
  return 0;
}

// What RotateTokenHeads asks the caches for while it rotates head h of a token (measured in
// docs/performance.md sections 3.15 and 3.16):
// - in_next_token != 0 (kernels::PrefetchesHeads: large calls): the input lines of the head
//   in_heads_ahead heads further on in the loop's order (the token's heads, then the next
//   token's, in_next_token elements on), with prefetcht1 (into L2) where in_to_l2, else
//   prefetcht0 (hints on x86; other architectures get the compiler's equivalent);
// - out_next_head (kernels::PrefetchesOutputs: out of place, no streaming): the output lines of
//   head h + 1 into L1, so that its stores, split across two lines where the output is not
//   64-byte aligned, find them there.
// Addresses are formed as integers: a head ahead may lie past the end of a tensor (a prefetch
// never faults), where a pointer may not point.
struct HeadPrefetch {
  int64_t in_next_token = 0;
  int64_t in_heads_ahead = 1;  // >= 1
  bool in_to_l2 = false;
  bool out_next_head = false;

  bool Any() const { return in_next_token != 0 || out_next_head; }
};

// Asks for the lines of [first, first + bytes): into L1, or with kL2 into L2.
template <bool kL2 = false>
HWY_INLINE void PrefetchLines(uintptr_t first, size_t bytes) {
  for (uintptr_t line = first & ~uintptr_t{63}; line < first + bytes; line += 64) {
    const char* p = reinterpret_cast<const char*>(line);
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p, /*rw=*/0, /*locality=*/kL2 ? 2 : 3);  // prefetcht1 / prefetcht0
#else
    hwy::Prefetch(p);
#endif
  }
}

template <class T>
HWY_INLINE void PrefetchForHead(const HeadPrefetch& pf, const T* in, int64_t in_stride,
                                const T* out, int64_t out_stride, int64_t heads, int64_t h,
                                size_t elements) {
  const size_t bytes = elements * sizeof(T);
  if (pf.in_next_token != 0) {
    const int64_t ahead = h + pf.in_heads_ahead;
    const int64_t offset = (ahead / heads) * pf.in_next_token + (ahead % heads) * in_stride;
    const uintptr_t first =
        reinterpret_cast<uintptr_t>(in) + static_cast<uintptr_t>(offset) * sizeof(T);
    if (pf.in_to_l2) {
      PrefetchLines<true>(first, bytes);
    } else {
      PrefetchLines(first, bytes);
    }
  }
  if (pf.out_next_head) {
    PrefetchLines(reinterpret_cast<uintptr_t>(out) +
                      static_cast<uintptr_t>((h + 1) * out_stride) * sizeof(T),
                  bytes);
  }
}

#if POSENC_REGISTER_ROW_VECTORS
// The K steps of one head (RegisterRowChunks) with the chunk's row vectors c, s. A function, not
// a lambda capturing them: GCC 12 kept a capturing lambda's row vectors and probes on the stack,
// reloading the row for every head and passing each probe add through memory.
template <class Steps, size_t K, bool kStreamThis, class D, class T>
HWY_INLINE void RegisterRowHead(D d, const hn::Vec<D> (&c)[K], const hn::Vec<D> (&s)[K],
                                size_t half, const T* hi, T* ho,
                                hn::Vec<hn::Rebind<float, D>>& p0,
                                hn::Vec<hn::Rebind<float, D>>& p1) {
  const size_t N = hn::Lanes(d);
  HWY_UNROLL(4)
  for (size_t k = 0; k + 2 <= K; k += 2) {
    Steps::template TwoWith<kStreamThis>(d, hi + k * N, c[k], s[k], c[k + 1], s[k + 1], half,
                                         ho + k * N, p0, p1);
  }
  if constexpr (K % 2 == 1) {
    Steps::template OneWith<kStreamThis>(d, hi + (K - 1) * N, c[K - 1], s[K - 1], half,
                                         ho + (K - 1) * N, p0);
  }
}

// The first `elements` (a multiple of K * Lanes(d)) of every head (half layout: pairs;
// interleaved: elements of the pair rows cos / sin) of `heads` heads of storage type T at
// in + h * in_stride, out + h * out_stride, K vectors of the row at a time: each chunk's K cos and
// K sin vectors are loaded once for all heads. The steps go two vectors at a time (TwoWith: the
// paired bf16 stores) as the loop skeleton's do. Outputs are added into p0, p1 (not
// canonicalised here). Returns whether a streaming store was issued (stream, f32 only: for the
// heads where StreamableHead holds). kPrefetch: whether to apply `prefetch` at all; a separate
// instantiation keeps the test out of the head loop of the calls that prefetch nothing (decode:
// ~25 ns of 0.47 us per Llama-3-8B token on AVX3, docs/performance.md section 3.16).
template <class T, size_t K, bool kF64, bool kInterleaved, bool kInverse, bool kPrefetch, class IO>
HWY_INLINE bool RegisterRowChunks(const RowOf<T, kF64>* HWY_RESTRICT cos,
                                  const RowOf<T, kF64>* HWY_RESTRICT sin, size_t half,
                                  size_t elements, const T* in, int64_t in_stride, T* out,
                                  int64_t out_stride, int64_t heads, bool stream,
                                  const HeadPrefetch& prefetch,
                                  hn::Vec<HeadProbeTag<RowOf<T, kF64>>>& p0,
                                  hn::Vec<HeadProbeTag<RowOf<T, kF64>>>& p1) {
  static_assert(K >= 1 && K <= kMaxRegisterRowVectors, "row vectors must fit the registers");
  using R = RowOf<T, kF64>;
  using Steps =
      std::conditional_t<kInterleaved, PairSteps<IO, false>, HalfSteps<IO, kInverse, false>>;
  const hn::ScalableTag<R> d;
  const HeadProbeTag<R> df;
  const size_t N = hn::Lanes(d);
  bool streamed = false;
  for (size_t first = 0; first < elements; first += K * N) {
    hn::Vec<decltype(d)> c[K], s[K];
    for (size_t k = 0; k < K; ++k) {
      c[k] = hn::LoadU(d, cos + first + k * N);
      s[k] = hn::LoadU(d, sin + first + k * N);
    }
    for (int64_t h = 0; h < heads; ++h) {
      const T* hi = in + h * in_stride + first;
      T* ho = out + h * out_stride + first;
      if constexpr (kPrefetch) {
        if (first == 0) {
          PrefetchForHead(prefetch, in, in_stride, out, out_stride, heads, h, 2 * half);
        }
      }
      if constexpr (std::is_same_v<T, float>) {
        if (stream && StreamableHead(df, out + h * out_stride, kInterleaved ? 0 : half)) {
          streamed = true;
          RegisterRowHead<Steps, K, true>(d, c, s, half, hi, ho, p0, p1);
          continue;
        }
      }
      RegisterRowHead<Steps, K, false>(d, c, s, half, hi, ho, p0, p1);
    }
  }
  return streamed;
}
#endif  // POSENC_REGISTER_ROW_VECTORS

// RotateHeadT for each of `heads` heads of storage type T of one token and tensor (head h at
// in + h * in_stride, out + h * out_stride; `in` == `out` in place, else no overlap; cos / sin:
// RotationRows's rows) with register-resident rows, the NaN check once for all heads; the
// head_dim tail past 2 * half is not touched. Returns false, having done nothing, where
// RegisterRowChunkVectors declines.
// chunks: whether a row of more than kMaxRegisterRowVectors vectors may be taken in chunks.
// stream (f32 only): streaming stores for the heads where StreamableHead holds, as
// RotateHeadT<..., kStream> would; `streamed` becomes true if one was issued.
template <class T, bool kF64, bool kInterleaved, bool kInverse, class IO = HeadStorageOf<T, kF64>>
HWY_INLINE bool RegisterRowTokenHeads(const RowOf<T, kF64>* HWY_RESTRICT cos,
                                      const RowOf<T, kF64>* HWY_RESTRICT sin, size_t half,
                                      const T* in, int64_t in_stride, T* out, int64_t out_stride,
                                      int64_t heads, bool chunks, bool stream,
                                      const HeadPrefetch& prefetch, bool& streamed) {
#if !POSENC_REGISTER_ROW_VECTORS
  (void)cos, (void)sin, (void)half, (void)in, (void)in_stride, (void)out, (void)out_stride;
  (void)heads, (void)chunks, (void)stream, (void)prefetch, (void)streamed;
  return false;
#else
  const size_t N = hn::Lanes(hn::ScalableTag<RowOf<T, kF64>>());
  const size_t elements = kInterleaved ? 2 * half : half;  // of the row, per head
  if (elements % N != 0) return false;
  const size_t K = RegisterRowChunkVectors(elements / N, chunks);
  if (K == 0) return false;
  auto p0 = hn::Zero(HeadProbeTag<RowOf<T, kF64>>()), p1 = p0;
  bool s = false;
  switch (K) {
#define POSENC_REGISTER_ROW_CASE(KK)                                                       \
  case KK:                                                                                 \
    if constexpr (KK <= kMaxRegisterRowVectors) {                                          \
      s = prefetch.Any()                                                                   \
              ? RegisterRowChunks<T, KK, kF64, kInterleaved, kInverse, true, IO>(          \
                    cos, sin, half, elements, in, in_stride, out, out_stride, heads,       \
                    stream, prefetch, p0, p1)                                              \
              : RegisterRowChunks<T, KK, kF64, kInterleaved, kInverse, false, IO>(         \
                    cos, sin, half, elements, in, in_stride, out, out_stride, heads,       \
                    stream, prefetch, p0, p1);                                             \
    }                                                                                      \
    break;
    POSENC_REGISTER_ROW_CASE(1)
    POSENC_REGISTER_ROW_CASE(2)
    POSENC_REGISTER_ROW_CASE(3)
    POSENC_REGISTER_ROW_CASE(4)
    POSENC_REGISTER_ROW_CASE(5)
    POSENC_REGISTER_ROW_CASE(6)
    POSENC_REGISTER_ROW_CASE(7)
    POSENC_REGISTER_ROW_CASE(8)
#undef POSENC_REGISTER_ROW_CASE
    default:
      return false;
  }
  if (IO::kProbe && !ProbeFinite(HeadProbeTag<RowOf<T, kF64>>(), hn::Add(p0, p1))) {
    for (int64_t h = 0; h < heads; ++h) CanonicalizeStoredNaNs(out + h * out_stride, 2 * half);
  }
  streamed = streamed || s;
  return true;
#endif
}

// Rotates the first 2 * half elements of one head of storage type T. `in` may equal `out` (in
// place); otherwise they must not overlap. Elements past 2 * half are not touched. cos/sin:
// RotationRows's rows (RowOf<T, kF64>: double for kF64 f32 heads, else f32; for interleaved
// pairs the pair rows, 2 * half values each, the direction already in their signs). f32 heads
// honour kF64; bf16 / f16 heads use f32 arithmetic and round each output once to nearest even.
// kStream (f32 heads only): streaming stores for the full vectors, only where
// StreamableHead(out) holds. Interleaved heads on SCALAR take only the 1-lane pair steps.
template <class T, bool kF64, bool kInterleaved, bool kInverse, bool kStream = false,
          class IO = HeadStorageOf<T, kF64>>
HWY_INLINE void RotateHeadT(const T* in, const RowOf<T, kF64>* HWY_RESTRICT cos,
                            const RowOf<T, kF64>* HWY_RESTRICT sin, size_t half, T* out) {
  using R = RowOf<T, kF64>;
  const hn::ScalableTag<R> d;
  const hn::CappedTag<R, 1> d1;
  const bool finite =
      kInterleaved
          ? HeadLoop<PairSteps<IO, kStream>, HWY_TARGET != HWY_SCALAR>(d, d1, 2 * half, 2, in, cos,
                                                                      sin, half, out)
          : HeadLoop<HalfSteps<IO, kInverse, kStream>, true>(d, d1, half, 1, in, cos, sin, half, out);
  if (IO::kProbe && !finite) CanonicalizeStoredNaNs(out, 2 * half);
}

// Every head of one token of one tensor (q or k, or a KV cache's k): head h at in + h * in_stride,
// out + h * out_stride (`in` == `out` in place, else no overlap), its first 2 * half elements
// rotated with the token's rows (RotationRows) and, out of place, the `tail` elements after them
// copied. Register-resident rows where RegisterRowTokenHeads takes them (in place, or no tail to
// copy; `chunks` as there), else RotateHeadT head by head. stream (f32 outputs out of place
// only): streaming stores for the heads where StreamableHead holds; `streamed` becomes true if
// one was issued (the caller fences once after its tokens). prefetch: what to ask the caches for
// (HeadPrefetch). IO: the storage policy of the heads (RotateTokenHeads chooses it).
template <class T, bool kF64, bool kInterleaved, bool kInverse, class IO>
HWY_INLINE void RotateTokenHeadsWith(const RowOf<T, kF64>* HWY_RESTRICT cos,
                                     const RowOf<T, kF64>* HWY_RESTRICT sin, size_t half,
                                     size_t tail, const T* in, int64_t in_stride, T* out,
                                     int64_t out_stride, int64_t heads, bool chunks, bool stream,
                                     const HeadPrefetch& prefetch, bool& streamed) {
  const bool in_place = in == out;
  if ((in_place || tail == 0) &&
      RegisterRowTokenHeads<T, kF64, kInterleaved, kInverse, IO>(cos, sin, half, in, in_stride,
                                                                 out, out_stride, heads, chunks,
                                                                 stream, prefetch, streamed)) {
    return;
  }
  const hn::Rebind<float, hn::ScalableTag<RowOf<T, kF64>>> df_out;
  for (int64_t h = 0; h < heads; ++h) {
    const T* head_in = in + h * in_stride;
    T* head_out = out + h * out_stride;
    PrefetchForHead(prefetch, in, in_stride, out, out_stride, heads, h, 2 * half);
    bool streamed_head = false;
    if constexpr (std::is_same_v<T, float>) {
      if (stream && !in_place && StreamableHead(df_out, head_out, kInterleaved ? 0 : half)) {
        RotateHeadT<T, kF64, kInterleaved, kInverse, true, IO>(head_in, cos, sin, half, head_out);
        streamed = streamed_head = true;
      }
    }
    if (!streamed_head) {
      RotateHeadT<T, kF64, kInterleaved, kInverse, false, IO>(head_in, cos, sin, half, head_out);
    }
    if (!in_place && tail != 0) {
      std::memcpy(head_out + 2 * half, head_in + 2 * half, tail * sizeof(T));
    }
  }
}

// RotateTokenHeadsWith the heads' storage policy: bf16 heads on AVX3 take AVX512_BF16's
// conversion where kernels::Avx512Bf16Stores() holds, read here once per token and tensor rather
// than at every store.
template <class T, bool kF64, bool kInterleaved, bool kInverse>
HWY_INLINE void RotateTokenHeads(const RowOf<T, kF64>* HWY_RESTRICT cos,
                                 const RowOf<T, kF64>* HWY_RESTRICT sin, size_t half, size_t tail,
                                 const T* in, int64_t in_stride, T* out, int64_t out_stride,
                                 int64_t heads, bool chunks, bool stream,
                                 const HeadPrefetch& prefetch, bool& streamed) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (std::is_same_v<T, hwy::bfloat16_t>) {
    if (kernels::Avx512Bf16Stores()) {
      RotateTokenHeadsWith<T, kF64, kInterleaved, kInverse, BF16HeadStorage<true>>(
          cos, sin, half, tail, in, in_stride, out, out_stride, heads, chunks, stream, prefetch,
          streamed);
      return;
    }
  }
#endif
  RotateTokenHeadsWith<T, kF64, kInterleaved, kInverse, HeadStorageOf<T, kF64>>(
      cos, sin, half, tail, in, in_stride, out, out_stride, heads, chunks, stream, prefetch,
      streamed);
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_ROPE_INL_H_
