// Per-target dot products of attention scores in a summation order that no vector width changes.
//
// A score against one key row is a sum of terms (a pair term t per rotary pair, an element term
// u = q_e * k_e per remaining element), all in double. The order is fixed by a virtual vector of
// kScoreLanes = 8 double lanes (docs/rerope.md §3):
//   lane l accumulates, starting from +0, in this order
//     1. pair terms t_i of the full chunks (i = 8c + l, c = 0, 1, ...; i < 8 floor(H / 8)),
//     2. element terms u_e of the full chunks of the element range (e = begin + 8c + l),
//     3. the one leftover pair term whose index within the last partial chunk is l (if any),
//     4. the one leftover element term likewise;
//   then a halving tree: b_l = a_l + a_(l+4), c_l = b_l + b_(l+2), score = c_0 + c_1.
// Every target evaluates exactly this with V = 8 / N vectors of N lanes per accumulator: AVX-512
// and SVE >= 512 bit one 8-lane vector, AVX2 and SVE-256 two 4-lane vectors, SSE4 / NEON /
// SVE-128 / EMU128 four 2-lane vectors, SCALAR eight 1-lane ones (WithScoreTag below; wider vectors
// are capped). Leftover terms go through 1-lane vectors and scalar double adds, the same IEEE
// operations. Eight lanes (not four) keep the dependency chain of each lane short enough that the
// adds' latency does not bound AVX2. Each term itself is fixed too:
#if defined(POSENC_LIB_KERNELS_SCORE_DOT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POSENC_LIB_KERNELS_SCORE_DOT_INL_H_
#undef POSENC_LIB_KERNELS_SCORE_DOT_INL_H_
#else
#define POSENC_LIB_KERNELS_SCORE_DOT_INL_H_
#endif

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "hwy/highway.h"
#include "lib/kernels/half-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr size_t kScoreLanes = 8;

// Calls fn(d) with this target's accumulator tag d: CappedTag<double, N>, N = 8, 4, 2 or 1 the
// largest power of two <= min(8, lanes). Scalable targets choose at run time (SVE has >= 2).
template <class Fn>
HWY_INLINE void WithScoreTag(const Fn& fn) {
#if HWY_HAVE_SCALABLE
  const size_t lanes = hn::Lanes(hn::CappedTag<double, kScoreLanes>());
  if (lanes >= 8) return fn(hn::CappedTag<double, 8>());
  if (lanes >= 4) return fn(hn::CappedTag<double, 4>());
  return fn(hn::CappedTag<double, 2>());
#else
  constexpr size_t kN = hn::MaxLanes(hn::CappedTag<double, kScoreLanes>());
  static_assert(kN == 1 || kN == 2 || kN == 4 || kN == 8, "lanes must divide kScoreLanes");
  fn(hn::CappedTag<double, kN>());
#endif
}

// Lanes of element type T at p as doubles (exact).
template <class D, class T>
HWY_INLINE hn::Vec<D> LoadF64(D d, const T* HWY_RESTRICT p) {
  const hn::Rebind<float, D> df;
  return hn::PromoteTo(d, LoadAsF32(df, p));
}
template <class D>
HWY_INLINE hn::Vec<D> LoadF64(D d, const double* HWY_RESTRICT p) {
  return hn::LoadU(d, p);
}

// Interleaved pairs (p[2i], p[2i + 1]) as doubles.
template <class D, class T>
HWY_INLINE void LoadPairsF64(D d, const T* HWY_RESTRICT p, hn::Vec<D>& x, hn::Vec<D>& y) {
  const hn::Rebind<float, D> df;
  if constexpr (std::is_same_v<T, float>) {
    hn::Vec<decltype(df)> fx, fy;
    hn::LoadInterleaved2(df, p, fx, fy);
    x = hn::PromoteTo(d, fx);
    y = hn::PromoteTo(d, fy);
  } else {
    const hn::Rebind<uint16_t, decltype(df)> du16;
    hn::Vec<decltype(du16)> a, b;
    hn::LoadInterleaved2(du16, reinterpret_cast<const uint16_t*>(p), a, b);
    x = hn::PromoteTo(d, BitsToF32(df, a, static_cast<T*>(nullptr)));
    y = hn::PromoteTo(d, BitsToF32(df, b, static_cast<T*>(nullptr)));
  }
}

// f32 rounding (nearest even) of a double: +-Inf beyond the f32 range (where a plain cast is
// undefined), NaN stays NaN.
HWY_INLINE float ScoreToF32(double s) {
  if (std::fabs(s) >= 0x1.ffffffp+127) return s > 0 ? HUGE_VALF : -HUGE_VALF;
  return static_cast<float>(s);
}

enum class PairTerms {
  kNone,     // no pair section (plain dot products over elements)
  kRotateK,  // t = q . R(-phi) k with phi's cos / sin from a row (sin negated when neg_sin)
  kPlain,    // t = qx*kx + qy*ky (q rotated beforehand)
};

// The key pair (kx, ky) at pair index p for the lanes of d, rotated by -phi for kRotateK.
template <PairTerms kPairs, bool kInterleaved, class D, class T>
HWY_INLINE void PairKey(D d, const T* HWY_RESTRICT k, const double* HWY_RESTRICT row,
                        hn::Vec<D> sign, size_t half, size_t p, hn::Vec<D>& kx, hn::Vec<D>& ky) {
  if constexpr (kInterleaved) {
    LoadPairsF64(d, k + 2 * p, kx, ky);
  } else {
    kx = LoadF64(d, k + p);
    ky = LoadF64(d, k + half + p);
  }
  if constexpr (kPairs == PairTerms::kRotateK) {
    const auto c = hn::LoadU(d, row + p);
    const auto s = hn::Xor(hn::LoadU(d, row + half + p), sign);
    const auto rx = hn::Add(hn::Mul(kx, c), hn::Mul(ky, s));
    const auto ry = hn::Sub(hn::Mul(ky, c), hn::Mul(kx, s));
    kx = rx;
    ky = ry;
  }
}

// Pair term t for one head's q (pairs in half order) and a (rotated) key pair.
template <class D>
HWY_INLINE hn::Vec<D> PairTerm(D d, const double* HWY_RESTRICT qh, size_t half, size_t p,
                               hn::Vec<D> kx, hn::Vec<D> ky) {
  return hn::Add(hn::Mul(hn::LoadU(d, qh + p), kx), hn::Mul(hn::LoadU(d, qh + half + p), ky));
}

// sums[h] for HB <= 4 query heads q[h] (double, pairs in half order: x at [i], y at [half + i];
// elements at their own index) against one key row k (storage layout of T): pair terms for
// i < half when kPairs != kNone, element terms for e in [elem_begin, elem_end). D is the
// accumulator tag of WithScoreTag. The V vectors of a virtual accumulator are processed one
// after the other (v outer), each over the whole row: the same operations as interleaving them,
// with at most HB accumulator registers (SVE vectors cannot be array elements).
template <class D, size_t HB, PairTerms kPairs, bool kInterleaved, class T>
HWY_INLINE void ScoreSums(const T* HWY_RESTRICT k, const double* HWY_RESTRICT row, bool neg_sin,
                          const double* const* q, size_t half, size_t elem_begin, size_t elem_end,
                          double* sums) {
  static_assert(HB >= 1 && HB <= 4, "1..4 heads");
  const D d;
  constexpr size_t N = hn::MaxLanes(D());  // == Lanes(d) (WithScoreTag)
  constexpr size_t V = kScoreLanes / N;
  using VecD = hn::Vec<D>;
  const size_t full_pairs = kPairs == PairTerms::kNone ? 0 : half / kScoreLanes * kScoreLanes;
  const size_t full_elems = elem_begin + (elem_end - elem_begin) / kScoreLanes * kScoreLanes;
  const VecD sign = hn::Set(d, neg_sin ? -0.0 : 0.0);
  HWY_ALIGN double lanes[HB][kScoreLanes];
  for (size_t v = 0; v < V; ++v) {
    VecD a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
    for (size_t i = 0; i < full_pairs; i += kScoreLanes) {
      const size_t p = i + v * N;
      VecD kx, ky;
      PairKey<kPairs, kInterleaved>(d, k, row, sign, half, p, kx, ky);
      a0 = hn::Add(a0, PairTerm(d, q[0], half, p, kx, ky));
      if constexpr (HB > 1) a1 = hn::Add(a1, PairTerm(d, q[1], half, p, kx, ky));
      if constexpr (HB > 2) a2 = hn::Add(a2, PairTerm(d, q[2], half, p, kx, ky));
      if constexpr (HB > 3) a3 = hn::Add(a3, PairTerm(d, q[3], half, p, kx, ky));
    }
    for (size_t e = elem_begin; e < full_elems; e += kScoreLanes) {
      const size_t x = e + v * N;
      const VecD kv = LoadF64(d, k + x);
      a0 = hn::Add(a0, hn::Mul(hn::LoadU(d, q[0] + x), kv));
      if constexpr (HB > 1) a1 = hn::Add(a1, hn::Mul(hn::LoadU(d, q[1] + x), kv));
      if constexpr (HB > 2) a2 = hn::Add(a2, hn::Mul(hn::LoadU(d, q[2] + x), kv));
      if constexpr (HB > 3) a3 = hn::Add(a3, hn::Mul(hn::LoadU(d, q[3] + x), kv));
    }
    hn::StoreU(a0, d, lanes[0] + v * N);
    if constexpr (HB > 1) hn::StoreU(a1, d, lanes[1] + v * N);
    if constexpr (HB > 2) hn::StoreU(a2, d, lanes[2] + v * N);
    if constexpr (HB > 3) hn::StoreU(a3, d, lanes[3] + v * N);
  }

  // Leftovers, one lane each: the same per-lane operations on 1-lane vectors.
  const hn::CappedTag<double, 1> d1;
  if constexpr (kPairs != PairTerms::kNone) {
    const auto sign1 = hn::Set(d1, neg_sin ? -0.0 : 0.0);
    for (size_t i = full_pairs, l = 0; i < half; ++i, ++l) {
      hn::Vec<decltype(d1)> kx, ky;
      PairKey<kPairs, kInterleaved>(d1, k, row, sign1, half, i, kx, ky);
      for (size_t h = 0; h < HB; ++h)
        lanes[h][l] += hn::GetLane(PairTerm(d1, q[h], half, i, kx, ky));
    }
  }
  for (size_t e = full_elems, l = 0; e < elem_end; ++e, ++l) {
    const auto kv = LoadF64(d1, k + e);
    for (size_t h = 0; h < HB; ++h)
      lanes[h][l] += hn::GetLane(hn::Mul(hn::LoadU(d1, q[h] + e), kv));
  }
  for (size_t h = 0; h < HB; ++h) {
    const double* a = lanes[h];
    const double b0 = a[0] + a[4], b1 = a[1] + a[5], b2 = a[2] + a[6], b3 = a[3] + a[7];
    sums[h] = (b0 + b2) + (b1 + b3);
  }
}

// ScoreSums for hb = 1..4 heads chosen at run time.
template <class D, PairTerms kPairs, bool kInterleaved, class T>
HWY_INLINE void ScoreSumsN(size_t hb, const T* HWY_RESTRICT k, const double* HWY_RESTRICT row,
                           bool neg_sin, const double* const* q, size_t half, size_t elem_begin,
                           size_t elem_end, double* sums) {
  switch (hb) {
    case 1:
      return ScoreSums<D, 1, kPairs, kInterleaved>(k, row, neg_sin, q, half, elem_begin, elem_end,
                                                   sums);
    case 2:
      return ScoreSums<D, 2, kPairs, kInterleaved>(k, row, neg_sin, q, half, elem_begin, elem_end,
                                                   sums);
    case 3:
      return ScoreSums<D, 3, kPairs, kInterleaved>(k, row, neg_sin, q, half, elem_begin, elem_end,
                                                   sums);
    default:
      return ScoreSums<D, 4, kPairs, kInterleaved>(k, row, neg_sin, q, half, elem_begin, elem_end,
                                                   sums);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_SCORE_DOT_INL_H_
