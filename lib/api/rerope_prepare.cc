#include "lib/api/rerope_prepare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "lib/api/positions.h"
#include "lib/api/rope_prepare.h"
#include "lib/api/tensor_checks.h"
#include "lib/freqs/inv_freq.h"

namespace posenc {
namespace api {
namespace {

constexpr auto kInvalid = StatusCode::kInvalidArgument;

// Smallest / largest position of batch row b and the s holding each.
struct RowExtremes {
  int64_t min = 0, max = 0, min_s = 0, max_s = 0;
};
RowExtremes ExtremesOf(const Positions& p, int64_t b, int64_t seq) {
  RowExtremes r;
  r.min = r.max = kernels::PositionOf(p, b, 0, seq);
  const bool monotonic =
      p.kind == Positions::Kind::kOffset || p.kind == Positions::Kind::kPerBatchOffsets;
  for (int64_t s = monotonic ? seq - 1 : 1; s < seq; ++s) {
    const int64_t v = kernels::PositionOf(p, b, s, seq);
    if (v < r.min) {
      r.min = v;
      r.min_s = s;
    }
    if (v > r.max) {
      r.max = v;
      r.max_s = s;
    }
  }
  return r;
}

// The largest |d| = |p_i - p_j| over the scores that are not masked (-1 if every score is), with
// the (b, i, j) that reaches it; errors when a distance overflows int64.
struct LargestDistance {
  int64_t a = -1, b = 0, i = 0, j = 0;
};
Status FindLargestDistance(const Positions& qp, const Positions& kp, int64_t batch, int64_t q_len,
                           int64_t k_len, bool causal, LargestDistance* out) {
  for (int64_t b = 0; b < batch; ++b) {
    const RowExtremes q = ExtremesOf(qp, b, q_len), k = ExtremesOf(kp, b, k_len);
    int64_t hi, lo;  // every d of this row lies in [lo, hi]
    const bool hi_over = __builtin_sub_overflow(q.max, k.min, &hi);
    const bool lo_over =
        __builtin_sub_overflow(q.min, k.max, &lo) || lo == std::numeric_limits<int64_t>::min();
    if (hi_over || lo_over) {
      const bool h = hi_over;
      return Err(kInvalid, "distance q_positions",
                 TokenName(b * q_len + (h ? q.max_s : q.min_s), q_len), " - k_positions",
                 TokenName(b * k_len + (h ? k.min_s : k.max_s), k_len), " = ", h ? q.max : q.min,
                 " - ", h ? k.min : k.max, " overflows int64");
    }
    if (hi >= 0 && hi > out->a) *out = {hi, b, q.max_s, k.min_s};
    if (!causal && lo < 0 && -lo > out->a) *out = {-lo, b, q.min_s, k.max_s};
  }
  return Status::Ok();
}

}  // namespace

Status CheckDistanceMap(const DistanceMap& map, const char* name) {
  const int mode = static_cast<int>(map.mode);
  if (mode < 0 || mode > static_cast<int>(DistanceMode::kLog)) {
    return Err(kInvalid, name, ".mode = ", mode, ": not a DistanceMode");
  }
  if (map.mode != DistanceMode::kExact && map.window <= 0) {
    return Err(kInvalid, name, ".window = ", map.window, ": must be > 0 for mode ",
               DistanceModeName(map.mode));
  }
  if (map.mode == DistanceMode::kLeaky && !(std::isfinite(map.leak) && map.leak > 1.0)) {
    return Err(kInvalid, name, ".leak = ", map.leak, ": must be finite and > 1 for mode leaky");
  }
  return Status::Ok();
}

Status CheckMappedAngle(const DistanceMap& map, int64_t max_distance, double max_freq,
                        const char* what) {
  return CheckAngle(kernels::MappedDistance(map, max_distance), max_freq, what, max_distance,
                    "|f(d) * inv_freq|");
}

Status PrepareRerope(const RelativeRopeTensors& t, const RelativeRopeParams& params,
                     PreparedRerope* out) {
  Status st;
  if (!(st = CheckView(t.q.data, t.q.dtype, t.q.shape, t.q.strides, 4, "q")).ok()) return st;
  if (!(st = CheckView(t.k.data, t.k.dtype, t.k.shape, t.k.strides, 4, "k")).ok()) return st;
  if (!(st =
            CheckView(t.scores.data, t.scores.dtype, t.scores.shape, t.scores.strides, 4, "scores"))
           .ok()) {
    return st;
  }
  if (t.k.dtype != t.q.dtype) {
    return Err(kInvalid, "k.dtype = ", DTypeName(t.k.dtype),
               ": must equal q.dtype = ", DTypeName(t.q.dtype));
  }
  if (t.scores.dtype != DType::kF32) {
    return Err(kInvalid, "scores.dtype = ", DTypeName(t.scores.dtype), ": must be f32");
  }
  const int64_t batch = t.q.shape[0], q_len = t.q.shape[1], heads = t.q.shape[2];
  const int64_t head_dim = t.q.shape[3], k_len = t.k.shape[1], kv_heads = t.k.shape[2];
  if (t.k.shape[0] != batch) {
    return Err(kInvalid, "k.shape[0] (batch) = ", t.k.shape[0],
               ": must equal q.shape[0] = ", batch);
  }
  if (t.k.shape[3] != head_dim) {
    return Err(kInvalid, "k.shape[3] (head_dim) = ", t.k.shape[3],
               ": must equal q.shape[3] = ", head_dim);
  }
  if (heads % kv_heads != 0) {
    return Err(kInvalid, "q.shape[2] (heads) = ", heads,
               " is not a multiple of k.shape[2] (kv_heads) = ", kv_heads);
  }
  const int64_t want[4] = {batch, heads, q_len, k_len};
  if (!std::equal(want, want + 4, t.scores.shape)) {
    return Err(kInvalid, "scores.shape = ", ShapeString(t.scores.shape, 4),
               ": must be [batch, heads, q_len, k_len] = ", ShapeString(want, 4));
  }
  if (!HasNoSelfOverlap(t.scores.shape, t.scores.strides, 4)) {
    return Err(kInvalid, "scores: strides ", ShapeString(t.scores.strides, 4), " for shape ",
               ShapeString(t.scores.shape, 4),
               " make elements alias each other; an output must not overlap itself");
  }
  if (ViewsOverlap(t.scores, t.q)) return Err(kInvalid, "scores overlaps q in memory");
  if (ViewsOverlap(t.scores, t.k)) return Err(kInvalid, "scores overlaps k in memory");

  const int64_t rotary_dim = params.rotary_dim == 0 ? head_dim : params.rotary_dim;
  if (params.rotary_dim < 0 || rotary_dim % 2 != 0 || rotary_dim > head_dim) {
    return Err(kInvalid, "rotary_dim = ", params.rotary_dim,
               ": must be even, > 0 (or 0 for head_dim) and <= head_dim = ", head_dim);
  }
  if (params.pairs != PairLayout::kHalf && params.pairs != PairLayout::kInterleaved) {
    return Err(kInvalid, "pairs = ", static_cast<int>(params.pairs), ": not a PairLayout");
  }
  if (!(st = CheckDistanceMap(params.map, "map")).ok()) return st;
  if (!std::isfinite(params.scale)) {
    return Err(kInvalid, "scale = ", params.scale, ": must be finite");
  }
  if (params.exec.max_threads < 0) {
    return Err(kInvalid, "exec.max_threads = ", params.exec.max_threads, ": must be >= 0");
  }
  PreparedRerope& prep = *out;
  // From here on only the copies of the positions are read (see PositionSnapshot).
  if (!(st = prep.q_positions.Take(params.q_positions, batch, q_len, "q_positions")).ok()) {
    return st;
  }
  if (!(st = prep.k_positions.Take(params.k_positions, batch, k_len, "k_positions")).ok()) {
    return st;
  }
  const Positions& q_positions = prep.q_positions.positions();
  const Positions& k_positions = prep.k_positions.positions();
  LargestDistance far;
  st = FindLargestDistance(q_positions, k_positions, batch, q_len, k_len,
                           params.causal, &far);
  if (!st.ok()) return st;
  const std::string far_name = "distance q_positions" + TokenName(far.b * q_len + far.i, q_len) +
                               " - k_positions" + TokenName(far.b * k_len + far.j, k_len);

  kernels::ReropePlan& plan = prep.plan;
  if (params.table != nullptr) {
    const RelativeRopeTable& table = *params.table;
    if (table.rotary_dim() != rotary_dim) {
      return Err(kInvalid, "table->rotary_dim() = ", table.rotary_dim(),
                 ": must equal rotary_dim = ", rotary_dim);
    }
    const DistanceMap& tm = table.map();
    if (tm.mode != params.map.mode ||
        (tm.mode != DistanceMode::kExact && tm.window != params.map.window) ||
        (tm.mode == DistanceMode::kLeaky && tm.leak != params.map.leak)) {
      return Err(kInvalid, "table->map() (mode ", DistanceModeName(tm.mode), ", window ", tm.window,
                 ", leak ", tm.leak, ") differs from map (mode ", DistanceModeName(params.map.mode),
                 ", window ", params.map.window, ", leak ", params.map.leak, ")");
    }
    if (far.a >= table.max_distance()) {
      return Err(StatusCode::kOutOfRange, far_name, " = ", far.a,
                 ": outside the table's distances [0, ", table.max_distance(), ")");
    }
    plan.table_rows = table.cos_row(0);
    plan.m2 = table.attention_factor() * table.attention_factor();
    prep.inv_freq = table.inv_freq().data();
    prep.attention_factor = table.attention_factor();
  } else {
    CheckedFrequencies f;
    if (!(st = CheckFrequencies(params.freqs, rotary_dim, &f)).ok()) return st;
    const double m = params.freqs.attention_factor;
    if (!std::isfinite(m * m)) {
      return Err(kInvalid, "freqs.attention_factor = ", m, ": its square overflows");
    }
    plan.inv_freq = f.inv_freq;
    prep.default_freqs = std::move(f.computed);
    if (far.a >= 0 &&
        !(st = CheckMappedAngle(params.map, far.a, f.max_freq, far_name.c_str())).ok()) {
      return st;
    }
    plan.m2 = m * m;
    prep.inv_freq = plan.inv_freq;
    prep.attention_factor = m;
  }

  plan.batch = batch;
  plan.q_len = q_len;
  plan.k_len = k_len;
  plan.heads = heads;
  plan.kv_heads = kv_heads;
  plan.head_dim = head_dim;
  plan.rotary_dim = rotary_dim;
  plan.dtype = t.q.dtype;
  plan.interleaved = params.pairs == PairLayout::kInterleaved;
  plan.map = params.map;
  plan.causal = params.causal;
  plan.scale = params.scale;
  plan.q = t.q.data;
  plan.k = t.k.data;
  plan.scores = static_cast<float*>(t.scores.data);
  for (int i = 0; i < 3; ++i) {
    plan.q_stride[i] = t.q.strides[i];
    plan.k_stride[i] = t.k.strides[i];
    plan.score_stride[i] = t.scores.strides[i];
  }
  plan.q_positions = q_positions;
  plan.k_positions = k_positions;
  kernels::ScoreTileSizes(q_len, k_len, &plan.tile_q, &plan.tile_k);
  return Status::Ok();
}

}  // namespace api
}  // namespace posenc
