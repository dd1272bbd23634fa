// Per-target RoPE of f32 heads with RotationArithmetic::kFmaChain (docs/math.md section 9.7).
//
// Each token's cos / sin row comes as f32 hi and lo parts (ch = f32(C), cl = f32(C - ch) of the
// engine's double C = m * cos(theta), likewise sh, sl; caller caches: their values, lo 0), and
// each output of a pair (x, y) is
//   forward  ox = fma(x, ch, fma(-y, sh, fl(fl(x cl) - fl(y sl))))
//            oy = fma(y, ch, fma( x, sh, fl(fl(y cl) + fl(x sl))))
//   inverse  the same with sh, sl negated (exactly: ox's inner terms add, oy's subtract),
// five operations per output, no conversion, < 2 ulp of max(|x|, |y|) for pairs with
// max(|x|, |y|) >= 2^-124 (section 9.7's theorem). Every fma rounds once on every target
// (exact_fma-inl.h: the instruction, or its exact emulation through double where the target has
// none), the f32 products and sums are separate IEEE operations, so every target writes the same
// bits. Interleaved heads take the pair rows of the hi and lo parts (rope-inl.h, BuildPairRows):
//   o[j] = fma(v[j], C[j], fma(v[j ^ 1], S[j], fl(fl(v[j] Cl[j]) + fl(v[j ^ 1] Sl[j])))),
// the same operations on the same values as the half layout's (a + fl(b (-c)) is a - fl(b c) and
// fma(b, -c, a) is fma(-b, c, a), bit for bit), with the partner v[j ^ 1] swapped within the
// register (Reverse2) or, on 1-lane vectors, loaded.
//
// The guard (section 9.7): a head is rotated this way only when, with a, b the bit patterns of
// |x|, |y|, every pair has a | b >= 2 * bits(2^-124) (then every M > 2^-124) and a, b below the
// infinity's pattern (no Inf or NaN element). Other heads take kF64's operations on ch, sh
// (rope-inl.h, RotateHeadT with the widened hi rows): kF64's bits and its B = 2. The decision
// depends on the head's values alone, so it is the same on every target and thread.
// NaN outputs (caller caches with non-finite values) are canonicalised after a probe of the x
// outputs (half layout; every output interleaved): with finite inputs (the guard) and finite
// rows no output is NaN, and a non-finite row value makes both outputs of its pairs non-finite.

#if defined(POSENC_LIB_KERNELS_ROPE_CHAIN_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POSENC_LIB_KERNELS_ROPE_CHAIN_INL_H_
#undef POSENC_LIB_KERNELS_ROPE_CHAIN_INL_H_
#else
#define POSENC_LIB_KERNELS_ROPE_CHAIN_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "lib/kernels/exact_fma-inl.h"
#include "lib/kernels/rope-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One token's rows for the chain: half-layout rows (half values each) or, for interleaved heads,
// pair rows (2 * half values each, the direction in the signs of sh and sl).
struct ChainRows {
  const float* ch;
  const float* sh;
  const float* cl;
  const float* sl;
};

// 2 * bits(2^-124): a | b below it for every pair with M < 2^-124 (max(a, b) <= a | b <
// 2 max(a, b)), and for some up to M < 2^-121 (2 * bits(2^-124) is bits(2^-121)).
inline constexpr int32_t kChainGuardLeast = 2 * (3 << 23);
inline constexpr int32_t kChainGuardInf = 0x7F800000;

// The guard's accumulation over vectors of pairs (x, y) (half layout), or of interleaved pairs
// (v: x, y, x, y, ...): least = min(a | b), most = max(a, b), a, b the magnitudes' bits.
template <class D, class VI = hn::Vec<hn::RebindToSigned<D>>>
HWY_INLINE void ChainGuardStep(D, hn::Vec<D> x, hn::Vec<D> y, VI& least, VI& most) {
  const hn::RebindToSigned<D> di;
  const auto magnitude = hn::Set(di, 0x7FFFFFFF);
  const auto a = hn::And(hn::BitCast(di, x), magnitude);
  const auto b = hn::And(hn::BitCast(di, y), magnitude);
  least = hn::Min(least, hn::Or(a, b));
  most = hn::Max(most, hn::Max(a, b));
}
#if HWY_TARGET != HWY_SCALAR
template <class D, class VI = hn::Vec<hn::RebindToSigned<D>>>
HWY_INLINE void ChainGuardPairStep(D, hn::Vec<D> v, VI& least, VI& most) {
  const hn::RebindToSigned<D> di;
  const auto a = hn::And(hn::BitCast(di, v), hn::Set(di, 0x7FFFFFFF));
  least = hn::Min(least, hn::Or(a, hn::Reverse2(di, a)));
  most = hn::Max(most, a);
}
#endif
// Whether the accumulated pairs fail the guard (least starts at 0x7FFFFFFF, most at 0).
template <class D, class VI = hn::Vec<hn::RebindToSigned<D>>>
HWY_INLINE bool ChainGuardFails(D, VI least, VI most) {
  const hn::RebindToSigned<D> di;
  return !hn::AllFalse(di, hn::Lt(least, hn::Set(di, kChainGuardLeast))) ||
         !hn::AllFalse(di, hn::Gt(most, hn::Set(di, kChainGuardInf - 1)));
}

// Whether every pair of the head may take the chain (see the file comment): per two input vectors
// two ANDs, an OR, a minimum and two maxima. (The OR cannot serve the infinity test: 2 | 0.5
// has every exponent bit set.)
template <bool kInterleaved>
HWY_INLINE bool ChainGuardPasses(const float* HWY_RESTRICT in, size_t half) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const size_t N = hn::Lanes(d);
  const auto magnitude = hn::Set(di, 0x7FFFFFFF);
  auto least = magnitude;
  auto most = hn::Zero(di);
  size_t j = 0;  // pairs (half layout) or elements (interleaved) done by vectors
  if constexpr (kInterleaved) {
#if HWY_TARGET != HWY_SCALAR
    for (; j + N <= 2 * half; j += N) ChainGuardPairStep(d, hn::LoadU(d, in + j), least, most);
#endif
  } else {
    for (; j + N <= half; j += N) {
      ChainGuardStep(d, hn::LoadU(d, in + j), hn::LoadU(d, in + half + j), least, most);
    }
  }
  if (ChainGuardFails(d, least, most)) return false;
  // The pairs the vectors left: (in[j], in[j + half]) or (in[j], in[j + 1]).
  const size_t step = kInterleaved ? 2 : 1, end = kInterleaved ? 2 * half : half;
  const size_t partner = kInterleaved ? 1 : half;
  for (; j < end; j += step) {
    uint32_t a, b;
    std::memcpy(&a, in + j, 4);
    std::memcpy(&b, in + j + partner, 4);
    a &= 0x7FFFFFFFu;
    b &= 0x7FFFFFFFu;
    if ((a | b) < static_cast<uint32_t>(kChainGuardLeast) ||
        std::max(a, b) >= static_cast<uint32_t>(kChainGuardInf)) {
      return false;
    }
  }
  return true;
}

// The half layout's outputs of pairs (x, y) (file comment).
template <bool kInverse, class D, class V = hn::Vec<D>>
HWY_INLINE void ChainRotate(D d, V x, V y, V ch, V sh, V cl, V sl, V& ox, V& oy) {
  if constexpr (kInverse) {
    ox = MulAddExact(d, x, ch, MulAddExact(d, y, sh, hn::Add(hn::Mul(x, cl), hn::Mul(y, sl))));
    oy = MulAddExact(d, y, ch, NegMulAddExact(d, x, sh, hn::Sub(hn::Mul(y, cl), hn::Mul(x, sl))));
  } else {
    ox = MulAddExact(d, x, ch, NegMulAddExact(d, y, sh, hn::Sub(hn::Mul(x, cl), hn::Mul(y, sl))));
    oy = MulAddExact(d, y, ch, MulAddExact(d, x, sh, hn::Add(hn::Mul(y, cl), hn::Mul(x, sl))));
  }
}

// An interleaved output: v the element, w its partner, the pair rows' values at v's index.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V ChainPairOut(D d, V v, V w, V ch, V sh, V cl, V sl) {
  return MulAddExact(d, v, ch, MulAddExact(d, w, sh, hn::Add(hn::Mul(v, cl), hn::Mul(w, sl))));
}

// Rotates the first 2 * half elements of one f32 head with the chain (the guard passed); `in`
// may equal `out` (in place), else no overlap. kStream: streaming stores for the full vectors
// (only where StreamableHead(out) holds).
template <bool kInterleaved, bool kInverse, bool kStream, bool kProbe = true>
HWY_INLINE void ChainHead(const float* in, const ChainRows& r, size_t half, float* out) {
  const hn::ScalableTag<float> d;
  const hn::CappedTag<float, 1> d1;
  const size_t N = hn::Lanes(d);
  auto probe = hn::Zero(d);
  auto probe1 = hn::Zero(d1);
  size_t j = 0;
  if constexpr (kInterleaved) {
#if HWY_TARGET != HWY_SCALAR
    for (; j + N <= 2 * half; j += N) {
      const auto v = hn::LoadU(d, in + j);
      const auto o = ChainPairOut(d, v, hn::Reverse2(d, v), hn::LoadU(d, r.ch + j),
                                  hn::LoadU(d, r.sh + j), hn::LoadU(d, r.cl + j),
                                  hn::LoadU(d, r.sl + j));
      StoreOut<kStream>(o, d, out + j);
      if constexpr (kProbe) probe = hn::Add(probe, o);
    }
#endif
    for (; j < 2 * half; j += 2) {
      const auto x = hn::LoadU(d1, in + j), y = hn::LoadU(d1, in + j + 1);
      const auto ox = ChainPairOut(d1, x, y, hn::LoadU(d1, r.ch + j), hn::LoadU(d1, r.sh + j),
                                   hn::LoadU(d1, r.cl + j), hn::LoadU(d1, r.sl + j));
      const auto oy = ChainPairOut(d1, y, x, hn::LoadU(d1, r.ch + j + 1),
                                   hn::LoadU(d1, r.sh + j + 1), hn::LoadU(d1, r.cl + j + 1),
                                   hn::LoadU(d1, r.sl + j + 1));
      hn::StoreU(ox, d1, out + j);
      hn::StoreU(oy, d1, out + j + 1);
      probe1 = hn::Add(probe1, hn::Add(ox, oy));
    }
  } else {
    for (; j + N <= half; j += N) {
      hn::Vec<decltype(d)> ox, oy;
      ChainRotate<kInverse>(d, hn::LoadU(d, in + j), hn::LoadU(d, in + half + j),
                            hn::LoadU(d, r.ch + j), hn::LoadU(d, r.sh + j), hn::LoadU(d, r.cl + j),
                            hn::LoadU(d, r.sl + j), ox, oy);
      if constexpr (kProbe) ProbeX(probe, ox);
      StoreOut<kStream>(ox, d, out + j);
      StoreOut<kStream>(oy, d, out + half + j);
    }
    for (; j < half; ++j) {
      hn::Vec<decltype(d1)> ox, oy;
      ChainRotate<kInverse>(d1, hn::LoadU(d1, in + j), hn::LoadU(d1, in + half + j),
                            hn::LoadU(d1, r.ch + j), hn::LoadU(d1, r.sh + j),
                            hn::LoadU(d1, r.cl + j), hn::LoadU(d1, r.sl + j), ox, oy);
      ProbeX(probe1, ox);
      hn::StoreU(ox, d1, out + j);
      hn::StoreU(oy, d1, out + half + j);
    }
  }
  if (kProbe && (!ProbeFinite(d, probe) || !ProbeFinite(d1, probe1))) {
    CanonicalizeStoredNaNs(out, 2 * half);
  }
}

// The f32 rows kF64's fallback reads for a token, widened (RotationRows) on first use.
struct ChainFallbackRows {
  const float* cos;  // the token's hi rows (half layout)
  const float* sin;
  double* scratch;   // 4 * half doubles
  const double* wide_cos = nullptr;
  const double* wide_sin = nullptr;
};

// One head with kF64's operations on the token's hi rows (widened on first use). Not inlined:
// in the register-row loop its code cost the row vectors their registers (1.26 against 0.79 us a
// decode step, Zen 4).
template <bool kInterleaved, bool kInverse>
HWY_NOINLINE void ChainFallbackHead(ChainFallbackRows& fallback, size_t half, const float* in,
                                    float* out) {
  if (fallback.wide_cos == nullptr) {
    RotationRows<float, true, kInterleaved, kInverse>(fallback.cos, fallback.sin, half,
                                                      fallback.scratch, fallback.wide_cos,
                                                      fallback.wide_sin);
  }
  RotateHeadT<float, true, kInterleaved, kInverse>(in, fallback.wide_cos, fallback.wide_sin, half,
                                                   out);
}

#if POSENC_REGISTER_ROW_VECTORS
// The vectors of each of the four rows ChainTokenHeads keeps in registers at once for V vectors
// per head: half of RegisterRowChunkVectors' budget (four rows where the other arithmetics keep
// two), V itself where it fits, else (with `chunks`) the largest divisor of V in [2, that
// budget]; 0 if it declines.
inline size_t ChainRowChunkVectors(size_t V, bool chunks) {
  constexpr size_t kMax = kMaxRegisterRowVectors / 2;
  if (V <= kMax) return V;
  if (!chunks) return 0;
  for (size_t K = kMax; K >= 2; --K) {
    if (V % K == 0) return K;
  }
  return 0;
}

// K vectors of one head (elements [first, first + K * Lanes) of the row) with the chunk's row
// vectors held in registers.
template <bool kInterleaved, bool kInverse, bool kProbe, bool kStream, size_t K, class D,
          class V = hn::Vec<D>>
HWY_INLINE void ChainRegisterRowHead(D d, const V (&ch)[K], const V (&sh)[K], const V (&cl)[K],
                                     const V (&sl)[K], size_t half, const float* in, float* out,
                                     V& probe) {
  const size_t N = hn::Lanes(d);
  HWY_UNROLL(4)
  for (size_t k = 0; k < K; ++k) {
    if constexpr (kInterleaved) {
      const auto v = hn::LoadU(d, in + k * N);
      const auto o = ChainPairOut(d, v, hn::Reverse2(d, v), ch[k], sh[k], cl[k], sl[k]);
      StoreOut<kStream>(o, d, out + k * N);
      if constexpr (kProbe) probe = hn::Add(probe, o);
    } else {
      V ox, oy;
      ChainRotate<kInverse>(d, hn::LoadU(d, in + k * N), hn::LoadU(d, in + half + k * N), ch[k],
                            sh[k], cl[k], sl[k], ox, oy);
      if constexpr (kProbe) ProbeX(probe, ox);
      StoreOut<kStream>(ox, d, out + k * N);
      StoreOut<kStream>(oy, d, out + half + k * N);
    }
  }
}

// Every head whose rotated elements are K vectors (the whole row in registers): each head's
// 2K (half layout) or K (interleaved) input vectors are loaded once, the guard tested on them,
// and the chain computed from them, or the head handed to ChainFallbackHead. Returns whether a
// streaming store was issued.
template <bool kInterleaved, bool kInverse, bool kProbe, size_t K>
HWY_INLINE bool ChainWholeRowHeads(const ChainRows& r, ChainFallbackRows& fallback, size_t half,
                                   const float* in, int64_t in_stride, float* out,
                                   int64_t out_stride, int64_t heads, bool stream,
                                   const HeadPrefetch& prefetch,
                                   hn::Vec<hn::ScalableTag<float>>& probe) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  using V = hn::Vec<decltype(d)>;
  const size_t N = hn::Lanes(d);
  V ch[K], sh[K], cl[K], sl[K];
  for (size_t k = 0; k < K; ++k) {
    ch[k] = hn::LoadU(d, r.ch + k * N);
    sh[k] = hn::LoadU(d, r.sh + k * N);
    cl[k] = hn::LoadU(d, r.cl + k * N);
    sl[k] = hn::LoadU(d, r.sl + k * N);
  }
  constexpr size_t kLoads = kInterleaved ? K : 2 * K;
  bool streamed = false;
  for (int64_t h = 0; h < heads; ++h) {
    const float* hi = in + h * in_stride;
    float* ho = out + h * out_stride;
    if (prefetch.Any()) PrefetchForHead(prefetch, in, in_stride, out, out_stride, heads, h, 2 * half);
    V v[kLoads];
    auto least = hn::Set(di, 0x7FFFFFFF);
    auto most = hn::Zero(di);
    for (size_t k = 0; k < K; ++k) {
      v[k] = hn::LoadU(d, hi + k * N);
      if constexpr (kInterleaved) {
        ChainGuardPairStep(d, v[k], least, most);
      } else {
        v[K + k] = hn::LoadU(d, hi + half + k * N);
        ChainGuardStep(d, v[k], v[K + k], least, most);
      }
    }
    if (HWY_UNLIKELY(ChainGuardFails(d, least, most))) {
      ChainFallbackHead<kInterleaved, kInverse>(fallback, half, hi, ho);
      continue;
    }
    const bool stream_head = stream && StreamableHead(d, ho, kInterleaved ? 0 : half);
    streamed = streamed || stream_head;
    for (size_t k = 0; k < K; ++k) {
      if constexpr (kInterleaved) {
        const V o = ChainPairOut(d, v[k], hn::Reverse2(d, v[k]), ch[k], sh[k], cl[k], sl[k]);
        if (stream_head) {
          StoreOut<true>(o, d, ho + k * N);
        } else {
          hn::StoreU(o, d, ho + k * N);
        }
        if constexpr (kProbe) probe = hn::Add(probe, o);
      } else {
        V ox, oy;
        ChainRotate<kInverse>(d, v[k], v[K + k], ch[k], sh[k], cl[k], sl[k], ox, oy);
        if constexpr (kProbe) ProbeX(probe, ox);
        if (stream_head) {
          StoreOut<true>(ox, d, ho + k * N);
          StoreOut<true>(oy, d, ho + half + k * N);
        } else {
          hn::StoreU(ox, d, ho + k * N);
          hn::StoreU(oy, d, ho + half + k * N);
        }
      }
    }
  }
  return streamed;
}

// The first `elements` (a multiple of K * Lanes) of each head h with chain[h] set,
// K row vectors of each row at a time, loaded once for all heads. Returns whether a streaming
// store was issued.
template <bool kInterleaved, bool kInverse, bool kProbe, size_t K>
HWY_INLINE bool ChainRegisterRowChunks(const ChainRows& r, size_t half, size_t elements,
                                       const float* in, int64_t in_stride, float* out,
                                       int64_t out_stride, int64_t heads, const bool* chain,
                                       bool stream, hn::Vec<hn::ScalableTag<float>>& probe) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  bool streamed = false;
  for (size_t first = 0; first < elements; first += K * N) {
    hn::Vec<decltype(d)> ch[K], sh[K], cl[K], sl[K];
    for (size_t k = 0; k < K; ++k) {
      ch[k] = hn::LoadU(d, r.ch + first + k * N);
      sh[k] = hn::LoadU(d, r.sh + first + k * N);
      cl[k] = hn::LoadU(d, r.cl + first + k * N);
      sl[k] = hn::LoadU(d, r.sl + first + k * N);
    }
    for (int64_t h = 0; h < heads; ++h) {
      if (!chain[h]) continue;
      const float* hi = in + h * in_stride + first;
      float* ho = out + h * out_stride + first;
      if (stream && StreamableHead(d, out + h * out_stride, kInterleaved ? 0 : half)) {
        streamed = true;
        ChainRegisterRowHead<kInterleaved, kInverse, kProbe, true, K>(d, ch, sh, cl, sl, half, hi,
                                                                     ho, probe);
      } else {
        ChainRegisterRowHead<kInterleaved, kInverse, kProbe, false, K>(d, ch, sh, cl, sl, half,
                                                                      hi, ho, probe);
      }
    }
  }
  return streamed;
}
#endif  // POSENC_REGISTER_ROW_VECTORS

// The heads of one token of one tensor (head h at in + h * in_stride, out + h * out_stride; `in`
// == `out` in place, else no overlap) with the chain's rows r. Each head's guard is tested (and
// its lines prefetched) right before the head is rotated, while its lines are in L1: a head that
// fails it is rotated with kF64's operations (rope-inl.h, RotateHeadT: kF64's bits), the others
// with the chain. Register-resident rows where they fit (ChainRowChunkVectors; `chunks` as
// RegisterRowTokenHeads') and the call is in place or has no tail to copy: the whole row, or with
// chunks every head's guard first, then the chunks over the heads that passed; else head by head.
// (A pass of guards over all heads before rotating any, where the whole row fits, took 0.79
// against 0.60 us a decode step without guards, Zen 4: 40 KiB of heads left L1 in between.)
// Out of place, the `tail` elements after the rotated ones are copied. kProbe: whether NaN
// outputs may occur (caller caches) and must be made canonical. stream: streaming stores where
// StreamableHead holds; `streamed` then becomes true.
template <bool kInterleaved, bool kInverse, bool kProbe>
HWY_INLINE void ChainTokenHeads(const ChainRows& r, ChainFallbackRows& fallback, size_t half,
                                size_t tail, const float* in, int64_t in_stride, float* out,
                                int64_t out_stride, int64_t heads, bool chunks, bool stream,
                                const HeadPrefetch& prefetch, bool& streamed) {
  const hn::ScalableTag<float> d;
  const bool in_place = in == out;
  // Whether head h takes the chain: its guard (the prefetch first); kF64 at once if not.
  auto guard = [&](int64_t h) {
    const float* head_in = in + h * in_stride;
    if (prefetch.Any()) {
      PrefetchForHead(prefetch, in, in_stride, out, out_stride, heads, h, 2 * half);
    }
    if (HWY_LIKELY(ChainGuardPasses<kInterleaved>(head_in, half))) return true;
    ChainFallbackHead<kInterleaved, kInverse>(fallback, half, head_in, out + h * out_stride);
    return false;
  };
#if POSENC_REGISTER_ROW_VECTORS
  const size_t N = hn::Lanes(d);
  const size_t elements = kInterleaved ? 2 * half : half;  // of the row, per head
  const size_t K = elements % N == 0 ? ChainRowChunkVectors(elements / N, chunks) : 0;
  // With chunks the guards come first, their results on the stack (kMaxHeads: every model we
  // know; more heads go head by head).
  constexpr int64_t kMaxHeads = 256;
  if (K != 0 && (in_place || tail == 0) && (K * N == elements || heads <= kMaxHeads)) {
    bool chain[kMaxHeads];
    const bool whole = K * N == elements;
    if (!whole) {
      for (int64_t h = 0; h < heads; ++h) chain[h] = guard(h);
    }
    auto probe = hn::Zero(d);
    bool s = false;
    switch (K) {
#define POSENC_CHAIN_ROW_CASE(KK)                                                              \
  case KK:                                                                                     \
    if constexpr (KK <= kMaxRegisterRowVectors / 2) {                                          \
      s = whole ? ChainWholeRowHeads<kInterleaved, kInverse, kProbe, KK>(                      \
                      r, fallback, half, in, in_stride, out, out_stride, heads, stream,        \
                      prefetch, probe)                                                         \
                : ChainRegisterRowChunks<kInterleaved, kInverse, kProbe, KK>(                  \
                      r, half, elements, in, in_stride, out, out_stride, heads, chain, stream, \
                      probe);                                                                  \
    }                                                                                          \
    break;
      POSENC_CHAIN_ROW_CASE(1)
      POSENC_CHAIN_ROW_CASE(2)
      POSENC_CHAIN_ROW_CASE(3)
      POSENC_CHAIN_ROW_CASE(4)
#undef POSENC_CHAIN_ROW_CASE
      default:
        break;
    }
    if (kProbe && !ProbeFinite(d, probe)) {
      for (int64_t h = 0; h < heads; ++h) CanonicalizeStoredNaNs(out + h * out_stride, 2 * half);
    }
    streamed = streamed || s;
    return;
  }
#else
  (void)chunks;
#endif
  for (int64_t h = 0; h < heads; ++h) {
    const float* head_in = in + h * in_stride;
    float* head_out = out + h * out_stride;
    if (guard(h)) {
      if (stream && !in_place && StreamableHead(d, head_out, kInterleaved ? 0 : half)) {
        streamed = true;
        ChainHead<kInterleaved, kInverse, true, kProbe>(head_in, r, half, head_out);
      } else {
        ChainHead<kInterleaved, kInverse, false, kProbe>(head_in, r, half, head_out);
      }
    }
    if (!in_place && tail != 0) {
      std::memcpy(head_out + 2 * half, head_in + 2 * half, tail * sizeof(float));
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_ROPE_CHAIN_INL_H_
