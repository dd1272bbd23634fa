// Internal: the validated, flattened description of one RelativeRopeScores call that the tile
// kernels, the parallel split and the reference read. Built only by lib/api (PrepareRerope).
#ifndef POSENC_LIB_CORE_REROPE_PLAN_H_
#define POSENC_LIB_CORE_REROPE_PLAN_H_

#include <cstdint>

#include "lib/core/distance_map.h"  // MappedDistance (the kernels and the reference)
#include "lib/core/rope_plan.h"     // PositionOf
#include "posenc/rerope.h"
#include "posenc/rope.h"

namespace posenc {
namespace kernels {

struct ReropePlan {
  int64_t batch = 0, q_len = 0, k_len = 0, heads = 0, kv_heads = 0, head_dim = 0, rotary_dim = 0;
  DType dtype = DType::kF32;  // of q and k
  bool interleaved = false;
  DistanceMap map;
  bool causal = false;
  double scale = 1.0;
  double m2 = 1.0;  // fl(m * m): multiplies the rotary rows

  // cos/sin rows by distance a: [cos(rotary_dim / 2) | sin(rotary_dim / 2)] doubles, m2 included.
  const double* inv_freq = nullptr;    // on the fly: rotary_dim / 2 frequencies
  const double* table_rows = nullptr;  // a RelativeRopeTable's rows (row a at a * rotary_dim)

  const void* q = nullptr;
  int64_t q_stride[3] = {0, 0, 0};  // batch, seq, head (elements)
  const void* k = nullptr;
  int64_t k_stride[3] = {0, 0, 0};
  float* scores = nullptr;
  int64_t score_stride[3] = {0, 0, 0};  // batch, head, query

  Positions q_positions, k_positions;

  // Tiles: (batch, query block, key block), all heads in each.
  int64_t tile_q = 1, tile_k = 1;
  int64_t q_tiles() const { return (q_len + tile_q - 1) / tile_q; }
  int64_t k_tiles() const { return (k_len + tile_k - 1) / tile_k; }
  int64_t tiles() const { return batch * q_tiles() * k_tiles(); }
};

// Tile sizes of a call (shared with the benchmark's baseline so both tile alike). Prefill:
// 16 queries x 32 keys, whose rows serve 16 * 32 scores per head. Decode (<= 4 queries): 8 keys,
// so the tile's rows (1 KB each for head_dim 128) stay in L1 across the kv heads while the
// keys stream past (measured: 1.3x faster than 32 keys on Zen 3).
inline void ScoreTileSizes(int64_t q_len, int64_t k_len, int64_t* tile_q, int64_t* tile_k) {
  *tile_q = q_len < 16 ? q_len : 16;
  const int64_t k = q_len <= 4 ? 8 : 32;
  *tile_k = k_len < k ? k_len : k;
}

}  // namespace kernels
}  // namespace posenc

#endif  // POSENC_LIB_CORE_REROPE_PLAN_H_
