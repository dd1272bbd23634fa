// Per-target PE rows of a block of consecutive positions p0, p0 + 1, ..., p0 + n - 1 with the
// bits of the angle engine (lib/kernels/sincos-inl.h) at a fraction of its cost.
//
// Row 0 of the block is the engine itself: f32(cos(fl(p0 * w))), f32(sin(...)). Each later row
// rotates the previous row's double (c, s) by the engine's (cos w, sin w):
//   c' = c * C - s * S,  s' = s * C + c * S      (MulSub / MulAdd over s * S and c * S: fused
//                                                 where the target has FMA, one rounding fewer;
//                                                 docs/math.md §9.6 bounds either form)
// and is kept only where it provably rounds to the engine's f32: with eps[j] >= the proved
// distance between the rotated double and the engine's double at position p0 + j
// (docs/math.md §9.6), f32(c' - eps) == f32(c' + eps) means every value in between, the engine's
// included, rounds to that f32 (round to nearest even is monotone). Lanes where that fails
// (~1 in 10^4 here) are recomputed with the engine. So the output is the engine's bits on every
// target whatever the lane count or the block split; only the speed depends on them.

#if defined(POSENC_LIB_KERNELS_SINUSOIDAL_ROTATE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POSENC_LIB_KERNELS_SINUSOIDAL_ROTATE_INL_H_
#undef POSENC_LIB_KERNELS_SINUSOIDAL_ROTATE_INL_H_
#else
#define POSENC_LIB_KERNELS_SINUSOIDAL_ROTATE_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"
#include "lib/kernels/demote-inl.h"
#include "lib/kernels/sincos-inl.h"
#include "posenc/sinusoidal.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Most rows of one block (a power of two: eps[j] grows by 8u a row, docs/math.md §9.6).
constexpr size_t kSinusoidalBlockRows = 64;

// The rows a block may rotate to: every angle |(p0 + j) * w| <= 2^20 (inside Lemma 1's 2^29)
// and |p0 + j| <= 2^40 (exact in double).
constexpr double kRotateMaxAngle = 1048576.0;
constexpr double kRotateMaxPosition = 1099511627776.0;

struct SinusoidalBlock {
  double p0 = 0;                    // position of row 0 (pos + position_offset), exact in double
  size_t n = 1;                     // rows, 1 <= n <= kSinusoidalBlockRows
  float* const* rows = nullptr;     // rows[j]: the d_model floats of position p0 + j
  const double* eps = nullptr;      // eps[j] (j >= 1): docs/math.md §9.6's bound for row j
  const double* w = nullptr;        // the half frequencies
  const double* rot_cos = nullptr;  // the engine's cos w[i], sin w[i] (RotationSteps), n > 1
  const double* rot_sin = nullptr;
  size_t half = 0;
  SinusoidalLayout layout = SinusoidalLayout::kInterleaved;
};

// eps[j] for a block whose largest |angle| is at most max_angle (docs/math.md §9.6):
// (16 + 8j) u + 4 u max_angle, u = 2^-53.
inline double RotatedRowBound(size_t j, double max_angle) {
  return std::ldexp(16.0 + 8.0 * static_cast<double>(j), -53) + std::ldexp(max_angle, -51);
}

// The engine's cos w[i], sin w[i] for i < half: the rotation of one position step.
HWY_INLINE void RotationSteps(const double* HWY_RESTRICT w, size_t half, double* HWY_RESTRICT c,
                              double* HWY_RESTRICT s) {
  const hn::ScalableTag<double> d;
  const hn::CappedTag<double, 1> d1;
  size_t i = 0;
  auto one = [&](auto dd) {
    hn::Vec<decltype(dd)> vc, vs;
    CosSinF64(dd, hn::LoadU(dd, w + i), vc, vs);
    hn::StoreU(vc, dd, c + i);
    hn::StoreU(vs, dd, s + i);
  };
  for (; i + hn::Lanes(d) <= half; i += hn::Lanes(d)) one(d);
  for (; i < half; ++i) one(d1);
}

// The f32 sin / cos lanes of pairs i.. of one row, in layout L.
template <SinusoidalLayout L, class DF>
HWY_INLINE void StorePairs(DF df, size_t half, hn::Vec<DF> s, hn::Vec<DF> c, size_t i, float* row) {
  if constexpr (L == SinusoidalLayout::kInterleaved) {
    hn::StoreInterleaved2(s, c, df, row + 2 * i);
  } else if constexpr (L == SinusoidalLayout::kConcatSinCos) {
    hn::StoreU(s, df, row + i);
    hn::StoreU(c, df, row + half + i);
  } else {
    hn::StoreU(c, df, row + i);
    hn::StoreU(s, df, row + half + i);
  }
}

// The engine's f32 pairs i.. at position p (CosSinLanes' arithmetic with m = 1: x * 1 == x);
// its double (c, s) for the rotation.
template <SinusoidalLayout L, class D>
HWY_INLINE void EnginePairs(D d, size_t half, double p, hn::Vec<D> w, size_t i, float* row,
                            hn::Vec<D>& c, hn::Vec<D>& s) {
  CosSinF64(d, hn::Mul(hn::Set(d, p), w), c, s);
  StorePairs<L>(hn::Rebind<float, D>(), half, DemoteF64ToF32(d, s), DemoteF64ToF32(d, c), i, row);
}

// One row more for one vector of pairs: (c, s) rotated by (rc, rs); true (and the row's f32
// lanes in s_out, c_out) when every lane provably rounds as the engine's does.
template <class D, class DF = hn::Rebind<float, D>>
HWY_INLINE bool RotatePairs(D d, hn::Vec<D>& c, hn::Vec<D>& s, hn::Vec<D> rc, hn::Vec<D> rs,
                            hn::Vec<D> eps, hn::Vec<DF>& s_out, hn::Vec<DF>& c_out) {
  const hn::RebindToUnsigned<DF> du;
  const auto c_next = hn::MulSub(c, rc, hn::Mul(s, rs));
  s = hn::MulAdd(s, rc, hn::Mul(c, rs));
  c = c_next;
  s_out = DemoteF64ToF32(d, hn::Sub(s, eps));
  c_out = DemoteF64ToF32(d, hn::Sub(c, eps));
  const auto s_hi = DemoteF64ToF32(d, hn::Add(s, eps));
  const auto c_hi = DemoteF64ToF32(d, hn::Add(c, eps));
  return hn::AllTrue(du, hn::And(hn::Eq(hn::BitCast(du, s_out), hn::BitCast(du, s_hi)),
                                 hn::Eq(hn::BitCast(du, c_out), hn::BitCast(du, c_hi))));
}

// Pairs i.. of every row of the block: `kVectors` (1 or 2) vectors of D side by side, so two
// independent rotation chains hide each other's latency.
template <SinusoidalLayout L, int kVectors, class D>
HWY_INLINE void BlockPairs(D d, const SinusoidalBlock& b, size_t i) {
  const hn::Rebind<float, D> df;
  const size_t N = hn::Lanes(d), i1 = i + (kVectors - 1) * N;  // i1 == i for one vector
  const auto w0 = hn::LoadU(d, b.w + i), w1 = hn::LoadU(d, b.w + i1);
  hn::Vec<D> c0, s0, c1, s1;
  EnginePairs<L>(d, b.half, b.p0, w0, i, b.rows[0], c0, s0);
  if constexpr (kVectors == 2) EnginePairs<L>(d, b.half, b.p0, w1, i1, b.rows[0], c1, s1);
  if (b.n == 1) return;
  const auto rc0 = hn::LoadU(d, b.rot_cos + i), rs0 = hn::LoadU(d, b.rot_sin + i);
  const auto rc1 = hn::LoadU(d, b.rot_cos + i1), rs1 = hn::LoadU(d, b.rot_sin + i1);
  for (size_t j = 1; j < b.n; ++j) {
    const auto eps = hn::Set(d, b.eps[j]);
    hn::Vec<D> ce, se;  // on a miss: the engine's values; the rotation goes on from its own (c, s)
    hn::Vec<decltype(df)> sf, cf;
    if (HWY_LIKELY(RotatePairs(d, c0, s0, rc0, rs0, eps, sf, cf))) {
      StorePairs<L>(df, b.half, sf, cf, i, b.rows[j]);
    } else {
      EnginePairs<L>(d, b.half, b.p0 + static_cast<double>(j), w0, i, b.rows[j], ce, se);
    }
    if constexpr (kVectors == 1) continue;
    if (HWY_LIKELY(RotatePairs(d, c1, s1, rc1, rs1, eps, sf, cf))) {
      StorePairs<L>(df, b.half, sf, cf, i1, b.rows[j]);
    } else {
      EnginePairs<L>(d, b.half, b.p0 + static_cast<double>(j), w1, i1, b.rows[j], ce, se);
    }
  }
}

// Every row of the block: pairs of full vectors, a full vector, then 1-lane tails (the same
// per-lane arithmetic).
template <SinusoidalLayout L>
HWY_INLINE void BlockRowsIn(const SinusoidalBlock& b) {
  const hn::ScalableTag<double> d;
  const hn::CappedTag<double, 1> d1;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + 2 * N <= b.half; i += 2 * N) BlockPairs<L, 2>(d, b, i);
  for (; i + N <= b.half; i += N) BlockPairs<L, 1>(d, b, i);
  for (; i < b.half; ++i) BlockPairs<L, 1>(d1, b, i);
}

HWY_INLINE void SinusoidalBlockRows(const SinusoidalBlock& b) {
  switch (b.layout) {
    case SinusoidalLayout::kInterleaved: return BlockRowsIn<SinusoidalLayout::kInterleaved>(b);
    case SinusoidalLayout::kConcatSinCos: return BlockRowsIn<SinusoidalLayout::kConcatSinCos>(b);
    case SinusoidalLayout::kConcatCosSin: return BlockRowsIn<SinusoidalLayout::kConcatCosSin>(b);
  }
}

// How many tokens t, t + 1, ... (at most max_rows, none at or past end) have the positions p0,
// p0 + 1, ... with p0 = position(t): a run whose rows one block writes (no position past
// INT64_MAX).
template <class PositionOfToken>
HWY_INLINE size_t ConsecutiveRun(const PositionOfToken& position, int64_t t, int64_t end,
                                 size_t max_rows, int64_t p0) {
  size_t n = 1;
  int64_t next;
  while (n < max_rows && t + static_cast<int64_t>(n) < end &&
         !__builtin_add_overflow(p0, static_cast<int64_t>(n), &next) &&
         position(t + static_cast<int64_t>(n)) == next) {
    ++n;
  }
  return n;
}

// Rows of runs of consecutive positions for a caller that walks its tokens in order (the
// sinusoidal tokens, and RoPE's computed rows with attention factor 1, rope_tokens-inl.h): the
// rotation steps, computed for the first block of more than one row, and each block's bounds.
// The rows are the engine's bits however the runs are cut (docs/math.md §9.6).
class ConsecutiveRowBlocks {
 public:
  // w: the half frequencies (read, not copied); layout: where a row's c and s lanes go.
  ConsecutiveRowBlocks(const double* w, size_t half, SinusoidalLayout layout) {
    for (size_t i = 0; i < half; ++i) w_max_ = std::max(w_max_, std::fabs(w[i]));
    block_.eps = eps_;
    block_.w = w;
    block_.half = half;
    block_.layout = layout;
  }
  ConsecutiveRowBlocks(const ConsecutiveRowBlocks&) = delete;
  ConsecutiveRowBlocks& operator=(const ConsecutiveRowBlocks&) = delete;

  // Writes the rows of positions p0, p0 + 1, ..., p0 + n - 1 (1 <= n <= kSinusoidalBlockRows,
  // a ConsecutiveRun) to rows[0], ..., rows[n - 1]. Returns the rows written: n, or 1 (rows[0]
  // only, from the engine) where the block leaves the range the rotation is proved for.
  size_t Write(int64_t p0, size_t n, float* const* rows) {
    const double first = static_cast<double>(p0);
    const double last = first + static_cast<double>(n - 1);  // inexact only far past 2^40
    const double p_max = std::max(std::fabs(first), std::fabs(last));
    const double max_angle = p_max * w_max_;
    if (n > 1 && !(p_max <= kRotateMaxPosition && max_angle <= kRotateMaxAngle)) n = 1;
    if (n > 1 && rot_ == nullptr) {
      rot_ = hwy::AllocateAligned<double>(2 * block_.half);
      RotationSteps(block_.w, block_.half, rot_.get(), rot_.get() + block_.half);
      block_.rot_cos = rot_.get();
      block_.rot_sin = rot_.get() + block_.half;
    }
    for (size_t j = 0; j < n; ++j) eps_[j] = RotatedRowBound(j, max_angle);
    block_.p0 = first;
    block_.n = n;
    block_.rows = rows;
    SinusoidalBlockRows(block_);
    return n;
  }

 private:
  hwy::AlignedFreeUniquePtr<double[]> rot_;  // the engine's cos w, sin w
  double w_max_ = 0.0;
  double eps_[kSinusoidalBlockRows];
  SinusoidalBlock block_;
};

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_SINUSOIDAL_ROTATE_INL_H_
