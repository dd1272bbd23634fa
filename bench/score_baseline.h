// The baseline of the ReRoPE benchmarks: ordinary attention scores from q and k that were rotated
// beforehand (what a runtime with a rotated-K cache computes), written with the same care as
// posenc's RelativeRopeScores: double products and sums in the same fixed 4-lane order
// (lib/kernels/score_dot-inl.h), the same (batch, query block, key block) tiles, loop order,
// prefetching and thread split. So the ratio of the two is the price of ReRoPE itself.
#ifndef POSENC_BENCH_SCORE_BASELINE_H_
#define POSENC_BENCH_SCORE_BASELINE_H_

#include <cstdint>

namespace posenc {
namespace bench {

// One call's arguments and tiles (internal: read by the per-target code).
struct BaselineArgs {
  const float* q;
  const float* k;
  float* scores;
  int64_t q_len, k_len, heads, kv_heads, head_dim, q_offset;
  bool causal;
  double scale;
  int64_t tile_q, tile_k;
};

// scores[h, i, j] = scale * q[i, h] . k[j, h / (heads / kv_heads)] for contiguous f32
// q [q_len, heads, head_dim], k [k_len, kv_heads, head_dim], scores [heads, q_len, k_len] (batch
// 1); with `causal`, j > q_offset + i gives -inf. threads: 1 serial, else the current TBB arena.
void RotatedKScores(const float* q, const float* k, float* scores, int64_t q_len, int64_t k_len,
                    int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t q_offset,
                    bool causal, double scale, int threads);

}  // namespace bench
}  // namespace posenc

#endif  // POSENC_BENCH_SCORE_BASELINE_H_
