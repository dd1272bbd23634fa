// posenc/rerope.h: attention scores with relative RoPE positions, exact or mapped beyond a window
// (ReRoPE and leaky ReRoPE, J. Su 2023; a logarithmic variant).
//
// Math (docs/rerope.md). For query i at position p_i and key j at position p_j, d = p_i - p_j
// (an exact int64), a RoPE rotation R of the given frequencies and a map f of distances:
//   scores[b, h, i, j] = scale * ( m^2 * sum_pairs q_i . R(-f(d) * w) k_j  +  sum_pass q_i k_j )
// with q [batch, q_len, heads, head_dim], k [batch, k_len, kv_heads, head_dim] UNROTATED (q head
// h reads kv head h / (heads / kv_heads), HF repeat_kv), w_t = inv_freq[t], m the attention factor
// and "pass" the elements past rotary_dim (they are not rotated and carry no m). For f(d) = d
// this is (R(p_i) q_i) . (R(p_j) k_j), the ordinary RoPE attention logit. The maps (a = |d|,
// f(-a) = -f(a): negative distances mirror; with `causal` they are masked to -inf instead):
//   kExact  f(a) = a
//   kCap    f(a) = min(a, w)                                         (ReRoPE)
//   kLeaky  f(a) = a for a <= w, else w + (a - w) / leak, leak > 1    (leaky ReRoPE)
//   kLog    f(a) = a for a <= w, else w * (1 + ln(a / w))            (continuous, slope 1 at w)
// Each angle is the double product f(a) * inv_freq[t] (one rounding, as in the 1-D path);
// reference::MappedDistance gives f exactly as posenc evaluates it (its ln is posenc's own, the
// same bits on every machine).
//
// Contracts (tested):
// - Accuracy (proved in docs/rerope.md): every score is within
//     0.5 ulp(score) + (floor(r/16) + floor((head_dim - r)/8) + 16) * 2^-53 * M
//   of the exact value, M = |scale| * (m^2 * sum_pairs (|qx|+|qy|)(|kx|+|ky|) + sum_pass |q k|),
//   r = rotary_dim, for angles up to 2^29 rad: correctly rounded up to ~2^-48 M for Llama
//   shapes. Products and sums are double; f32 is produced by one final rounding.
// - Reproducibility: bitwise identical on every SIMD target (a fixed summation order, the same on
//   every vector width), for every thread count, and between on-the-fly cos/sin and a
//   RelativeRopeTable. kCap with a window >= every distance equals kExact bit for bit.
// - Errors: everything is validated first; a failed call writes nothing and names the argument.
#ifndef POSENC_REROPE_H_
#define POSENC_REROPE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "posenc/aligned.h"
#include "posenc/export.h"
#include "posenc/freqs.h"
#include "posenc/rope.h"
#include "posenc/status.h"
#include "posenc/tensor.h"

namespace posenc {

// Declared here too: posenc/reference.h may bring this header in while posenc/freqs.h is still
// being read (freqs.h -> rope.h -> reference.h -> rerope.h).
struct RopeConfig;

enum class DistanceMode { kExact = 0, kCap = 1, kLeaky = 2, kLog = 3 };
POSENC_API const char* DistanceModeName(DistanceMode mode);  // "exact", "cap", "leaky", "log"

// The map f of distances to rotation angles (in units of the frequencies).
struct DistanceMap {
  DistanceMode mode = DistanceMode::kExact;
  int64_t window = 0;  // w > 0 for kCap, kLeaky, kLog (unused by kExact)
  double leak = 0.0;   // kLeaky: the slope beyond w is 1 / leak; finite and > 1
};

class RelativeRopeTable;

struct RelativeRopeTensors {
  Tensor q;       // [batch, q_len, heads, head_dim], f32 / bf16 / f16
  Tensor k;       // [batch, k_len, kv_heads, head_dim] unrotated, q's dtype; heads % kv_heads == 0
  Tensor scores;  // f32, shape [batch, heads, q_len, k_len] (strides free, last one 1)
};

struct RelativeRopeParams {
  DistanceMap map;
  PairLayout pairs = PairLayout::kHalf;
  int64_t rotary_dim = 0;  // 0 means head_dim; even and <= head_dim
  Frequencies freqs;       // base or inv_freq, attention factor (m); unused with a table
  Positions q_positions;   // position of query (b, i): as for RoPE, [batch, q_len] ids
  Positions k_positions;   // position of key (b, j): [batch, k_len] ids
  double scale = 1.0;      // multiplies every score (softmax scale, e.g. 1 / sqrt(head_dim))
  bool causal = false;     // scores with p_j > p_i become -inf
  // cos/sin rows by distance built once (decode loops over long contexts): its frequencies,
  // attention factor, map and rotary_dim are used; freqs is ignored.
  const RelativeRopeTable* table = nullptr;
  Execution exec;
};

// Computes every score with the best SIMD target of this CPU. Work is split over (batch, query
// block, key block) tiles with oneTBB; each tile computes its cos/sin rows once for all heads.
POSENC_API Status RelativeRopeScores(const RelativeRopeTensors& tensors,
                                     const RelativeRopeParams& params);

// With a model config's frequencies, attention factor and rotary_dim (params.freqs ignored,
// params.rotary_dim 0 or the config's, no table); for dynamic / longrope the sequence length is
// the largest query or key position + 1, as for ApplyRope(config).
POSENC_API Status RelativeRopeScores(const RelativeRopeTensors& tensors, const RopeConfig& config,
                                     const RelativeRopeParams& params);

// Double cos/sin rows (attention factor squared included) by distance |d| in [0, max_distance),
// built with the same engine as the on-the-fly path, so results are bitwise identical.
// Immutable, shareable between threads. kCap stores only rows 0..window (every distance beyond
// the window uses row window) but serves every |d| < max_distance the same way.
class POSENC_API RelativeRopeTable {
 public:
  static Status Create(int64_t rotary_dim, const Frequencies& freqs, const DistanceMap& map,
                       int64_t max_distance, std::shared_ptr<const RelativeRopeTable>* out);

  int64_t rotary_dim() const { return rotary_dim_; }
  int64_t max_distance() const { return max_distance_; }  // serves |d| < max_distance
  int64_t stored_rows() const { return stored_rows_; }
  const DistanceMap& map() const { return map_; }
  double attention_factor() const { return attention_factor_; }
  const std::vector<double>& inv_freq() const { return inv_freq_; }
  // Row a < stored_rows(): rotary_dim / 2 cosines then rotary_dim / 2 sines (times m^2).
  const double* cos_row(int64_t a) const { return rows_.data() + a * rotary_dim_; }
  const double* sin_row(int64_t a) const { return cos_row(a) + rotary_dim_ / 2; }

 private:
  RelativeRopeTable() = default;
  int64_t rotary_dim_ = 0;
  int64_t max_distance_ = 0;
  int64_t stored_rows_ = 0;
  DistanceMap map_;
  double attention_factor_ = 1.0;
  std::vector<double> inv_freq_;
  AlignedVector<double> rows_;  // rows start 64-byte aligned where rotary_dim % 8 == 0
};

}  // namespace posenc

// The double-precision oracles of this header's calls (posenc::reference).
#include "posenc/reference.h"

#endif  // POSENC_REROPE_H_
