#include "bench/score_baseline.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstddef>
#include <limits>

#include "lib/core/rerope_plan.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/score_baseline.cc"
#include "hwy/aligned_allocator.h"
#include "hwy/cache_control.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/kernels/score_dot-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

template <class D>
void BaselineTiles(const bench::BaselineArgs& a, int64_t begin, int64_t end) {
  const size_t head_dim = static_cast<size_t>(a.head_dim);
  const int64_t group = a.heads / a.kv_heads;
  const int64_t k_tiles = (a.k_len + a.tile_k - 1) / a.tile_k;
  const size_t row = static_cast<size_t>(a.heads) * head_dim;  // q / token
  auto qd = hwy::AllocateAligned<double>(static_cast<size_t>(a.tile_q) * row);
  int64_t prepared = -1;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const int64_t kv_row = a.kv_heads * a.head_dim;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t qt = t / k_tiles, kt = t % k_tiles;
    const int64_t i0 = qt * a.tile_q, j0 = kt * a.tile_k;
    const int64_t ni = std::min(a.tile_q, a.q_len - i0), nj = std::min(a.tile_k, a.k_len - j0);
    if (prepared != qt) {
      for (size_t n = 0; n < static_cast<size_t>(ni) * row; ++n) {
        qd[n] = a.q[static_cast<size_t>(i0) * row + n];
      }
      prepared = qt;
    }
    const int64_t next_j0 = j0 + a.tile_k;
    const int64_t next_nj = next_j0 < a.k_len ? std::min(a.tile_k, a.k_len - next_j0) : 0;
    double sums[4];
    const double* qp[4];
    for (int64_t g = 0; g < a.kv_heads; ++g) {
      const float* k_head = a.k + g * a.head_dim;
      for (int64_t ii = 0; ii < ni; ++ii) {
        const int64_t i = i0 + ii;
        float* out_row = a.scores + (g * group * a.q_len + i) * a.k_len + j0;
        for (int64_t jj = 0; jj < nj; ++jj) {
          if (ii == 0 && jj < next_nj) {  // one key of the next block per key of this one
            const char* p = reinterpret_cast<const char*>(k_head + (next_j0 + jj) * kv_row);
            for (size_t off = 0; off < head_dim * 4; off += 64) hwy::Prefetch(p + off);
          }
          float* out = out_row + jj;
          if (a.causal && j0 + jj > a.q_offset + i) {
            for (int64_t h = 0; h < group; ++h) out[h * a.q_len * a.k_len] = neg_inf;
            continue;
          }
          const float* k_row = k_head + (j0 + jj) * kv_row;
          for (int64_t h0 = 0; h0 < group; h0 += 4) {
            const size_t hb = static_cast<size_t>(std::min<int64_t>(4, group - h0));
            for (size_t h = 0; h < hb; ++h) {
              qp[h] = qd.get() + static_cast<size_t>(ii) * row +
                      static_cast<size_t>(g * group + h0 + static_cast<int64_t>(h)) * head_dim;
            }
            // Pairs (x[i], x[i + D/2]) dotted plainly: the shortest dependency chains the fixed
            // order allows (the fastest form of the same sum), as in the capped ReRoPE path.
            ScoreSumsN<D, PairTerms::kPlain, false>(hb, k_row, nullptr, false, qp, head_dim / 2,
                                                    head_dim / 2 * 2, head_dim, sums);
            for (size_t h = 0; h < hb; ++h) {
              out[(h0 + static_cast<int64_t>(h)) * a.q_len * a.k_len] =
                  ScoreToF32(sums[h] * a.scale);
            }
          }
        }
      }
    }
  }
}

void BaselineTilesImpl(const bench::BaselineArgs& a, int64_t begin, int64_t end) {
  WithScoreTag([&](auto d) HWY_ATTR { BaselineTiles<decltype(d)>(a, begin, end); });
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_EXPORT(BaselineTilesImpl);
namespace bench {

void RotatedKScores(const float* q, const float* k, float* scores, int64_t q_len, int64_t k_len,
                    int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t q_offset,
                    bool causal, double scale, int threads) {
  BaselineArgs a{q,        k,        scores, q_len, k_len, heads, kv_heads,
                 head_dim, q_offset, causal, scale, 1,     1};
  kernels::ScoreTileSizes(q_len, k_len, &a.tile_q, &a.tile_k);  // the tiles of RelativeRopeScores
  const int64_t tiles = ((q_len + a.tile_q - 1) / a.tile_q) * ((k_len + a.tile_k - 1) / a.tile_k);
  if (threads == 1) {
    HWY_DYNAMIC_DISPATCH(BaselineTilesImpl)(a, 0, tiles);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, tiles, 1),
                    [&](const tbb::blocked_range<int64_t>& r) {
                      HWY_DYNAMIC_DISPATCH(BaselineTilesImpl)(a, r.begin(), r.end());
                    });
}

}  // namespace bench
}  // namespace posenc
#endif
