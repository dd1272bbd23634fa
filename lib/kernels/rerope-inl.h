// Per-target RelativeRopeScores tiles: for each (batch, query block, key block) tile, the cos/sin
// rows of the distances it needs (computed once for all heads, or read from a table), then every
// score of every head in the fixed order of score_dot-inl.h.
//
// Per score (docs/rerope.md §2): a = |p_i - p_j| (exact int64), phi_t = f(a) * inv_freq[t]
// (double), a row holds m^2 cos(phi_t) and m^2 sin(phi_t) (double, the exact engine of
// sincos-inl.h). Three ways to a score, all exact in the sense of the contract:
//   masked  (causal and p_j > p_i): -inf
//   per key (|d| <= w, or every d for kExact / kLeaky / kLog): k' = R(-phi) k for each
//           (query, key, kv head) in registers, shared by the kv head's q heads (GQA), then
//           q . k'; a negative d negates sin (f(-a) = -f(a)).
//   capped  (kCap and |d| > w): every such key has the same angle w, so q' = R(+-w) q is
//           rotated once per query and head and dotted with the unrotated key: the price of an
//           ordinary attention score.
// Loop order per tile: kv head, query, key, so one query's q for the kv head's heads (in double)
// stays in L1 while the tile's keys stream past.

#if defined(POSENC_LIB_KERNELS_REROPE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POSENC_LIB_KERNELS_REROPE_INL_H_
#undef POSENC_LIB_KERNELS_REROPE_INL_H_
#else
#define POSENC_LIB_KERNELS_REROPE_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "hwy/aligned_allocator.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "lib/kernels/half-inl.h"
#include "lib/core/rerope_plan.h"
#include "lib/kernels/score_dot-inl.h"
#include "lib/kernels/sincos-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// row[t] = m2 * cos(f * inv_freq[t]), row[half + t] = m2 * sin(f * inv_freq[t]) for the lanes of d.
template <class D>
HWY_INLINE void DistanceRowLanes(D d, double f, const double* HWY_RESTRICT inv_freq, double m2,
                                 double* HWY_RESTRICT cos, double* HWY_RESTRICT sin) {
  const auto theta = hn::Mul(hn::Set(d, f), hn::LoadU(d, inv_freq));
  hn::Vec<D> c, s;
  CosSinF64(d, theta, c, s);
  const auto vm = hn::Set(d, m2);
  hn::StoreU(hn::Mul(c, vm), d, cos);
  hn::StoreU(hn::Mul(s, vm), d, sin);
}

// The row of mapped distance f (2 * half doubles). Element-wise, so any vector width gives the
// same bits; the tail uses 1-lane vectors.
HWY_INLINE void DistanceRow(double f, const double* HWY_RESTRICT inv_freq, size_t half, double m2,
                            double* HWY_RESTRICT row) {
  const hn::ScalableTag<double> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= half; i += N) DistanceRowLanes(d, f, inv_freq + i, m2, row + i, row + half + i);
  const hn::CappedTag<double, 1> d1;
  for (; i < half; ++i) DistanceRowLanes(d1, f, inv_freq + i, m2, row + i, row + half + i);
}

HWY_INLINE void DistanceRows(const double* inv_freq, size_t half, double m2, const DistanceMap& map,
                             int64_t first, int64_t count, double* rows) {
  for (int64_t j = 0; j < count; ++j) {
    DistanceRow(kernels::MappedDistance(map, first + j), inv_freq, half, m2,
                rows + static_cast<size_t>(j) * 2 * half);
  }
}

// q of one (query, head) in double: x of pair t at [t], y at [half + t], element e >= rotary at
// [e].
template <class T>
HWY_INLINE void PrepareQuery(const T* HWY_RESTRICT src, size_t half, size_t head_dim,
                             bool interleaved, float* HWY_RESTRICT f32, double* HWY_RESTRICT dst) {
  ConvertToF32(src, head_dim, f32);  // exact
  for (size_t t = 0; t < half; ++t) {
    dst[t] = f32[interleaved ? 2 * t : t];
    dst[half + t] = f32[interleaved ? 2 * t + 1 : half + t];
  }
  for (size_t e = 2 * half; e < head_dim; ++e) dst[e] = f32[e];
}

// q' = R(+phi) q (pair-wise, double) for the capped keys; elements past the pairs copied.
HWY_INLINE void RotateQuery(const double* HWY_RESTRICT q, const double* HWY_RESTRICT row,
                            bool neg_sin, size_t half, size_t head_dim, double* HWY_RESTRICT out) {
  const hn::ScalableTag<double> d;
  const hn::CappedTag<double, 1> d1;
  const size_t N = hn::Lanes(d);
  size_t t = 0;
  auto lanes = [&](auto dd, size_t i) HWY_ATTR {
    const auto sign = hn::Set(dd, neg_sin ? -0.0 : 0.0);
    const auto x = hn::LoadU(dd, q + i), y = hn::LoadU(dd, q + half + i);
    const auto c = hn::LoadU(dd, row + i);
    const auto s = hn::Xor(hn::LoadU(dd, row + half + i), sign);
    hn::StoreU(hn::Sub(hn::Mul(x, c), hn::Mul(y, s)), dd, out + i);
    hn::StoreU(hn::Add(hn::Mul(x, s), hn::Mul(y, c)), dd, out + half + i);
  };
  for (; t + N <= half; t += N) lanes(d, t);
  for (; t < half; ++t) lanes(d1, t);
  for (size_t e = 2 * half; e < head_dim; ++e) out[e] = q[e];
}

// Tile codes: which of the three ways each (query, key) of a tile takes.
constexpr int64_t kMasked = -1;
constexpr int64_t kCappedPos = -2;  // d > w: angle +w
constexpr int64_t kCappedNeg = -3;  // d < -w: angle -w
// Otherwise code = the row (slot) of the tile's rows, or of the table; neg[n] = (d < 0).

template <class T, bool kInterleaved, class D>
void ReropeTilesT(const kernels::ReropePlan& plan, int64_t begin, int64_t end) {
  const size_t half = static_cast<size_t>(plan.rotary_dim / 2);
  const size_t row_len = 2 * half;
  const size_t head_dim = static_cast<size_t>(plan.head_dim);
  const size_t rotary = static_cast<size_t>(plan.rotary_dim);
  const int64_t heads = plan.heads;
  const int64_t group = plan.heads / plan.kv_heads;
  const bool cap = plan.map.mode == DistanceMode::kCap;
  const int64_t window = plan.map.window;
  const size_t tq = static_cast<size_t>(plan.tile_q), tk = static_cast<size_t>(plan.tile_k);
  const bool on_the_fly = plan.table_rows == nullptr;

  std::vector<int64_t> pq(tq), pk(tk), codes(tq * tk), need;
  std::vector<char> neg(tq * tk);
  hwy::AlignedFreeUniquePtr<double[]> rows;
  if (on_the_fly) rows = hwy::AllocateAligned<double>(tq * tk * row_len);
  // Prepared queries of the current (batch, query block): [query][head][head_dim], and the
  // capped rotations (+w, -w) for kCap.
  const size_t q_block = tq * static_cast<size_t>(heads) * head_dim;
  auto qd = hwy::AllocateAligned<double>(q_block);
  hwy::AlignedFreeUniquePtr<double[]> qcap;
  hwy::AlignedFreeUniquePtr<double[]> cap_row_buf;
  const double* cap_row = nullptr;  // the row of distance w, made when a tile first needs it
  auto f32 = hwy::AllocateAligned<float>(head_dim);
  int64_t prepared = -1;    // b * q_tiles + query block whose q sits in qd
  int64_t capped_for = -1;  // ... whose q' sits in qcap
  const T* q_base = static_cast<const T*>(plan.q);
  const T* k_base = static_cast<const T*>(plan.k);
  const int64_t q_tiles = plan.q_tiles(), k_tiles = plan.k_tiles();
  const float neg_inf = -std::numeric_limits<float>::infinity();

  for (int64_t t = begin; t < end; ++t) {
    const int64_t b = t / (q_tiles * k_tiles);
    const int64_t qt = (t / k_tiles) % q_tiles, kt = t % k_tiles;
    const int64_t i0 = qt * plan.tile_q, j0 = kt * plan.tile_k;
    const size_t ni = static_cast<size_t>(std::min(plan.tile_q, plan.q_len - i0));
    const size_t nj = static_cast<size_t>(std::min(plan.tile_k, plan.k_len - j0));
    for (size_t ii = 0; ii < ni; ++ii) {
      pq[ii] = kernels::PositionOf(plan.q_positions, b, i0 + static_cast<int64_t>(ii), plan.q_len);
    }
    for (size_t jj = 0; jj < nj; ++jj) {
      pk[jj] = kernels::PositionOf(plan.k_positions, b, j0 + static_cast<int64_t>(jj), plan.k_len);
    }

    // Classify every (query, key) of the tile; distances fit in int64 (validated).
    bool any_scored = false, any_capped = false;
    int64_t amin = std::numeric_limits<int64_t>::max(), amax = -1;
    for (size_t ii = 0; ii < ni; ++ii) {
      for (size_t jj = 0; jj < nj; ++jj) {
        const int64_t dist = pq[ii] - pk[jj];
        int64_t& code = codes[ii * nj + jj];
        if (plan.causal && dist < 0) {
          code = kMasked;
          continue;
        }
        any_scored = true;
        const int64_t a = dist < 0 ? -dist : dist;
        if (cap && a > window) {
          code = dist < 0 ? kCappedNeg : kCappedPos;
          any_capped = true;
          continue;
        }
        code = a;
        neg[ii * nj + jj] = dist < 0;
        amin = std::min(amin, a);
        amax = std::max(amax, a);
      }
    }
    float* const out_tile = plan.scores + b * plan.score_stride[0] + i0 * plan.score_stride[2] + j0;
    if (!any_scored) {
      for (int64_t h = 0; h < heads; ++h)
        for (size_t ii = 0; ii < ni; ++ii) {
          float* o =
              out_tile + h * plan.score_stride[1] + static_cast<int64_t>(ii) * plan.score_stride[2];
          for (size_t jj = 0; jj < nj; ++jj) o[jj] = neg_inf;
        }
      continue;
    }

    // Rows of the distances this tile needs: a table's own, or computed into `rows` with slots
    // a - amin (dense ranges: offsets, monotonic ids) or ranks among the sorted distinct values.
    const double* row_base = on_the_fly ? rows.get() : plan.table_rows;
    if (on_the_fly && amax >= 0) {
      const int64_t span = amax - amin + 1;
      if (span <= static_cast<int64_t>(ni * nj)) {
        DistanceRows(plan.inv_freq, half, plan.m2, plan.map, amin, span, rows.get());
        for (size_t n = 0; n < ni * nj; ++n) {
          if (codes[n] >= 0) codes[n] -= amin;
        }
      } else {
        need.clear();
        for (size_t n = 0; n < ni * nj; ++n) {
          if (codes[n] >= 0) need.push_back(codes[n]);
        }
        std::sort(need.begin(), need.end());
        need.erase(std::unique(need.begin(), need.end()), need.end());
        for (size_t s = 0; s < need.size(); ++s) {
          DistanceRows(plan.inv_freq, half, plan.m2, plan.map, need[s], 1,
                       rows.get() + s * row_len);
        }
        for (size_t n = 0; n < ni * nj; ++n) {
          int64_t& code = codes[n];
          if (code >= 0) code = std::lower_bound(need.begin(), need.end(), code) - need.begin();
        }
      }
    }

    // Queries of this block in double (once per block, reused by its key tiles).
    const int64_t block = b * q_tiles + qt;
    if (prepared != block) {
      for (size_t ii = 0; ii < ni; ++ii)
        for (int64_t h = 0; h < heads; ++h) {
          const T* src = q_base + b * plan.q_stride[0] +
                         (i0 + static_cast<int64_t>(ii)) * plan.q_stride[1] + h * plan.q_stride[2];
          PrepareQuery(
              src, half, head_dim, kInterleaved, f32.get(),
              qd.get() + (ii * static_cast<size_t>(heads) + static_cast<size_t>(h)) * head_dim);
        }
      prepared = block;
    }
    if (any_capped && capped_for != block) {
      if (cap_row == nullptr) {
        if (on_the_fly) {
          cap_row_buf = hwy::AllocateAligned<double>(row_len);
          DistanceRow(static_cast<double>(window), plan.inv_freq, half, plan.m2, cap_row_buf.get());
          cap_row = cap_row_buf.get();
        } else {
          cap_row = plan.table_rows + static_cast<size_t>(window) * row_len;
        }
        qcap = hwy::AllocateAligned<double>(2 * q_block);
      }
      for (size_t n = 0; n < ni * static_cast<size_t>(heads); ++n) {
        RotateQuery(qd.get() + n * head_dim, cap_row, false, half, head_dim,
                    qcap.get() + n * head_dim);
        RotateQuery(qd.get() + n * head_dim, cap_row, true, half, head_dim,
                    qcap.get() + q_block + n * head_dim);
      }
      capped_for = block;
    }

    // The next key block of this batch row, prefetched while this one computes: a head's slice of
    // consecutive keys lies a token row apart (a page for Llama shapes), which the hardware
    // prefetchers do not follow.
    const int64_t next_j0 = j0 + plan.tile_k;
    const size_t next_nj =
        next_j0 < plan.k_len ? static_cast<size_t>(std::min(plan.tile_k, plan.k_len - next_j0)) : 0;
    const size_t head_bytes = head_dim * sizeof(T);

    double sums[4];
    const double* qp[4];
    for (int64_t g = 0; g < plan.kv_heads; ++g) {
      const T* k_head = k_base + b * plan.k_stride[0] + g * plan.k_stride[2];
      for (size_t ii = 0; ii < ni; ++ii) {
        const size_t q_row =
            (ii * static_cast<size_t>(heads) + static_cast<size_t>(g * group)) * head_dim;
        float* out_row = out_tile + static_cast<int64_t>(ii) * plan.score_stride[2] +
                         g * group * plan.score_stride[1];
        for (size_t jj = 0; jj < nj; ++jj) {
          if (ii == 0 && jj < next_nj) {  // one key of the next block per key of this one
            const int64_t j_next = next_j0 + static_cast<int64_t>(jj);
            const char* p = reinterpret_cast<const char*>(k_head + j_next * plan.k_stride[1]);
            for (size_t off = 0; off < head_bytes; off += 64) hwy::Prefetch(p + off);
            if (!on_the_fly && g == 0) {  // and its table row (for the first query)
              const int64_t dist =
                  pq[0] - kernels::PositionOf(plan.k_positions, b, j_next, plan.k_len);
              const int64_t a = dist < 0 ? -dist : dist;
              if (!(plan.causal && dist < 0) && !(cap && a > window)) {
                const char* r = reinterpret_cast<const char*>(plan.table_rows +
                                                              static_cast<size_t>(a) * row_len);
                for (size_t off = 0; off < row_len * sizeof(double); off += 64)
                  hwy::Prefetch(r + off);
              }
            }
          }
          const int64_t code = codes[ii * nj + jj];
          float* out = out_row + jj;
          if (code == kMasked) {
            for (int64_t h = 0; h < group; ++h) out[h * plan.score_stride[1]] = neg_inf;
            continue;
          }
          const T* k_row = k_head + (j0 + static_cast<int64_t>(jj)) * plan.k_stride[1];
          for (int64_t h0 = 0; h0 < group; h0 += 4) {
            const size_t hb = static_cast<size_t>(std::min<int64_t>(4, group - h0));
            if (code >= 0) {
              for (size_t h = 0; h < hb; ++h)
                qp[h] = qd.get() + q_row + (static_cast<size_t>(h0) + h) * head_dim;
              ScoreSumsN<D, PairTerms::kRotateK, kInterleaved>(
                  hb, k_row, row_base + static_cast<size_t>(code) * row_len, neg[ii * nj + jj] != 0,
                  qp, half, rotary, head_dim, sums);
            } else {
              const double* qc = qcap.get() + (code == kCappedNeg ? q_block : 0) + q_row;
              for (size_t h = 0; h < hb; ++h) qp[h] = qc + (static_cast<size_t>(h0) + h) * head_dim;
              ScoreSumsN<D, PairTerms::kPlain, kInterleaved>(hb, k_row, nullptr, false, qp, half,
                                                             rotary, head_dim, sums);
            }
            for (size_t h = 0; h < hb; ++h) {
              out[(h0 + static_cast<int64_t>(h)) * plan.score_stride[1]] =
                  ScoreToF32(sums[h] * plan.scale);
            }
          }
        }
      }
    }
  }
}

template <class T, bool kInterleaved>
void ReropeTilesL(const kernels::ReropePlan& plan, int64_t begin, int64_t end) {
  WithScoreTag([&](auto d)
                   HWY_ATTR { ReropeTilesT<T, kInterleaved, decltype(d)>(plan, begin, end); });
}

template <class T>
void ReropeTiles(const kernels::ReropePlan& plan, int64_t begin, int64_t end) {
  if (plan.interleaved) return ReropeTilesL<T, true>(plan, begin, end);
  ReropeTilesL<T, false>(plan, begin, end);
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_REROPE_INL_H_
