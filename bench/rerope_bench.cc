// ReRoPE rows of the suite (full suite only): RelativeRopeScores for Llama-3-8B shapes (32 q
// heads, 8 kv heads, head_dim 128, theta 5e5, half pairs, f32), causal.
//   decode   one query at position k_len - 1 against k_len keys, k_len = 4096, 32768, 131072
//   prefill  4096 queries x 4096 keys
// for each distance mode (window 2048, leak 16), cos/sin on the fly or from a RelativeRopeTable,
// 1 and 2 threads. Each row also times, in the same benchmark right before, the plain rotated-K
// dot-product kernel (bench/score_baseline.h) on the same shapes: the price of ReRoPE over
// ordinary attention scores is time / baseline time (counter time_vs_baseline; "% baseline" in
// the compact table is its inverse). gbps counts the bytes of k read once per call. The
// rotated_k_dot rows time the baseline kernel itself against an in-place scale over k's bytes
// (the memory roof).
#include <tbb/task_arena.h>

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "bench/model_shapes.h"
#include "bench/score_baseline.h"
#include "posenc/rerope.h"
#include "posenc/rope.h"
#include "posenc/targets.h"

namespace posenc {
namespace bench {
namespace {

constexpr int64_t kWindow = 2048;
constexpr double kLeak = 16.0;

enum class Kernel { kRerope, kRotatedKDot };

struct Case {
  const ModelShape* model;
  int64_t q_len, k_len;
  Kernel kernel;
  DistanceMode mode;
  bool table;
  std::string target;
  int threads;
};

// q, k (unrotated, for ReRoPE) and their rotated copies (for the baseline), made once per shape.
struct Inputs {
  std::vector<float> q, k, q_rot, k_rot;
};
const Inputs& InputsFor(const ModelShape& m, int64_t q_len, int64_t k_len) {
  static std::map<std::pair<int64_t, int64_t>, std::unique_ptr<Inputs>> cache;
  auto& in = cache[{q_len, k_len}];
  if (in) return *in;
  in.reset(new Inputs);
  in->q.resize(static_cast<size_t>(q_len * m.q_heads * m.head_dim));
  in->k.resize(static_cast<size_t>(k_len * m.kv_heads * m.head_dim));
  uint32_t s = 17;
  for (std::vector<float>* v : {&in->q, &in->k})
    for (float& x : *v) {
      s = s * 1664525u + 1013904223u;
      x = static_cast<float>(static_cast<int32_t>(s >> 8) - (1 << 23)) * (1.0f / (1 << 23));
    }
  in->q_rot = in->q;
  in->k_rot = in->k;
  RopeParams p;  // rotated as the model would (queries are the last q_len tokens)
  p.freqs.base = m.rope_theta;
  p.positions = Positions::Offset(k_len - q_len);
  RopeTensors tq;
  tq.q = TensorBSHD(in->q_rot.data(), 1, q_len, m.q_heads, m.head_dim);
  (void)ApplyRope(tq, p);
  p.positions = Positions::Offset(0);
  RopeTensors tk;
  tk.k = TensorBSHD(in->k_rot.data(), 1, k_len, m.kv_heads, m.head_dim);
  (void)ApplyRope(tk, p);
  return *in;
}

// Tables by distance, built once per (mode, max distance).
const RelativeRopeTable* TableFor(const ModelShape& m, const DistanceMap& map,
                                  int64_t max_distance) {
  static std::map<std::pair<int, int64_t>, std::shared_ptr<const RelativeRopeTable>> tables;
  auto& t = tables[{static_cast<int>(map.mode), max_distance}];
  if (!t) {
    Frequencies f;
    f.base = m.rope_theta;
    if (!RelativeRopeTable::Create(m.head_dim, f, map, max_distance, &t).ok()) return nullptr;
  }
  return t.get();
}

// Mean seconds of fn: MeanSeconds for fast calls; one timed call after a warm-up for slow ones
// (a 4096 x 4096 prefill takes seconds).
template <class Fn>
double Seconds(const Fn& fn) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  fn();
  const double first = std::chrono::duration<double>(Clock::now() - start).count();
  if (first < 0.05) return MeanSeconds(fn);
  const auto again = Clock::now();
  fn();
  return std::chrono::duration<double>(Clock::now() - again).count();
}

void RunCase(benchmark::State& state, const Case& c) {
  if (!SelectTarget(state, c.target)) return;
  const ModelShape& m = *c.model;
  const Inputs& in = InputsFor(m, c.q_len, c.k_len);
  std::vector<float> scores(static_cast<size_t>(m.q_heads * c.q_len * c.k_len));
  const double k_bytes = static_cast<double>(in.k.size()) * 4;
  tbb::task_arena arena(c.threads);
  auto baseline_kernel = [&] {
    RotatedKScores(in.q_rot.data(), in.k_rot.data(), scores.data(), c.q_len, c.k_len, m.q_heads,
                   m.kv_heads, m.head_dim, c.k_len - c.q_len, true, 1.0, c.threads);
  };
  double baseline = 0;
  if (c.kernel == Kernel::kRotatedKDot) {
    Floats k_copy(in.k_rot.begin(), in.k_rot.end());
    baseline = BaselineSeconds({&k_copy}, c.threads);  // the memory roof for k's bytes
    arena.execute([&] {
      for (auto _ : state) {
        baseline_kernel();
        benchmark::ClobberMemory();
      }
    });
  } else {
    baseline = arena.execute([&] { return Seconds(baseline_kernel); });
    RelativeRopeTensors t;
    t.q = TensorBSHD(in.q.data(), 1, c.q_len, m.q_heads, m.head_dim);
    t.k = TensorBSHD(in.k.data(), 1, c.k_len, m.kv_heads, m.head_dim);
    t.scores = TensorBSHD(scores.data(), 1, m.q_heads, c.q_len, c.k_len);
    RelativeRopeParams p;
    p.map = {c.mode, kWindow, kLeak};
    p.freqs.base = m.rope_theta;
    p.q_positions = Positions::Offset(c.k_len - c.q_len);
    p.causal = true;
    p.exec.max_threads = c.threads == 1 ? 1 : 0;  // 0: the benchmark's arena of c.threads
    if (c.table) p.table = TableFor(m, p.map, c.k_len);
    Status st = RelativeRopeScores(t, p);  // warm-up, and the error check outside the timed loop
    if (!st.ok()) {
      state.SkipWithError(st.message().c_str());
      return;
    }
    arena.execute([&] {
      for (auto _ : state) {
        st = RelativeRopeScores(t, p);
        benchmark::ClobberMemory();
      }
    });
    state.counters["time_vs_baseline"] = benchmark::Counter(
        baseline, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  }
  (void)SetMaxTarget("");
  SetRowCounters(state, k_bytes, static_cast<double>(in.k.size()), baseline, 0.0);
}

void Register(const Case& c) {
  Row row;
  row.model = std::string(c.q_len == 1 ? "rerope-decode:" : "rerope-prefill:") + c.model->name;
  row.tokens = c.k_len;
  row.pairs = PairLayoutName(PairLayout::kHalf);
  row.source = c.kernel == Kernel::kRotatedKDot
                   ? "rotated_k_dot"
                   : std::string(DistanceModeName(c.mode)) + (c.table ? "/table" : "/on_the_fly");
  row.target = c.target;
  row.threads = c.threads;
  RegisterRow(row, 0.1, [c](benchmark::State& s) { RunCase(s, c); });
}

}  // namespace

void RegisterReropeBenchmarks(bool quick) {
  if (quick) return;  // seconds per row at 128k keys and 4096 x 4096: full suite only
  const ModelShape* m = FindModelShape("llama3-8b");
  const std::string target = SupportedTargets().front();
  const DistanceMode kModes[] = {DistanceMode::kExact, DistanceMode::kCap, DistanceMode::kLeaky,
                                 DistanceMode::kLog};
  for (int threads : {1, 2}) {
    for (int64_t k_len : {4096, 32768, 131072}) {
      Register({m, 1, k_len, Kernel::kRotatedKDot, DistanceMode::kExact, false, target, threads});
      for (DistanceMode mode : kModes)
        for (bool table : {false, true}) {
          Register({m, 1, k_len, Kernel::kRerope, mode, table, target, threads});
        }
    }
    Register({m, 4096, 4096, Kernel::kRotatedKDot, DistanceMode::kExact, false, target, threads});
    for (DistanceMode mode : {DistanceMode::kExact, DistanceMode::kCap}) {
      Register({m, 4096, 4096, Kernel::kRerope, mode, false, target, threads});
    }
  }
}

}  // namespace bench
}  // namespace posenc
