// RoPE benchmarks. Every row reports, besides time:
//   gbps             bytes read + written by the kernel (q and k, each element once each way)
//   baseline_gbps    an in-place scale over exactly the same buffers, same thread count, timed in
//                    the same benchmark right before the kernel (the bandwidth the machine gives
//                    this access pattern at this size)
//   pct_of_baseline  100 * gbps / baseline_gbps
//   x_reference      speed-up over posenc::reference (double, scalar), whose per-token time is
//                    measured once per shape on 8 tokens and scaled linearly (it is linear).
// Rows "baseline_memcpy" copy the same bytes once (read n, write n) for comparison.
#include "bench/rope_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "bench/bandwidth.h"
#include "bench/model_shapes.h"
#include "posenc/rope.h"
#include "posenc/targets.h"

namespace posenc {
namespace bench {
namespace {

using Clock = std::chrono::steady_clock;

enum class Source { kOnTheFly, kTable, kCache, kBaselineMemcpy };
const char* SourceName(Source s) {
  switch (s) {
    case Source::kOnTheFly: return "on_the_fly";
    case Source::kTable: return "table";
    case Source::kCache: return "cache";
    case Source::kBaselineMemcpy: return "baseline_memcpy";
  }
  return "?";
}

struct Case {
  const ModelShape* model;
  int64_t tokens;
  PairLayout pairs;
  Source source;
  std::string target;
  int threads;
  RotationArithmetic arithmetic = RotationArithmetic::kF64;
};

const char* ArithmeticName(RotationArithmetic a) {
  return a == RotationArithmetic::kF64 ? "f64" : "f32";
}

std::string CaseName(const Case& c) {
  return c.model->name + "/tokens:" + std::to_string(c.tokens) + "/f32/" + PairLayoutName(c.pairs) +
         "/" + SourceName(c.source) + "/arith:" + ArithmeticName(c.arithmetic) + "/" + c.target +
         "/threads:" + std::to_string(c.threads);
}

constexpr int64_t kDecodePosition = 4000;
constexpr int64_t kTablePositions = 8192;

// Tables are built once per (rotary_dim, theta) and shared by every row that uses them.
const RopeTable* TableFor(const ModelShape& m) {
  static std::map<std::pair<int64_t, double>, std::shared_ptr<const RopeTable>> tables;
  auto& t = tables[{m.rotary_dim, m.rope_theta}];
  if (!t) {
    Frequencies f;
    f.base = m.rope_theta;
    if (!RopeTable::Create(m.rotary_dim, f, kTablePositions, &t).ok()) return nullptr;
  }
  return t.get();
}

struct Tensors {
  std::vector<float> q, k;
  Tensors(const ModelShape& m, int64_t tokens)
      : q(static_cast<size_t>(tokens * m.q_heads * m.head_dim)),
        k(static_cast<size_t>(tokens * m.kv_heads * m.head_dim)) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (float& x : q) x = dist(rng);
    for (float& x : k) x = dist(rng);
  }
  double bytes_moved() const { return 2.0 * 4.0 * static_cast<double>(q.size() + k.size()); }
};

RopeParams ParamsFor(const Case& c) {
  RopeParams p;
  p.pairs = c.pairs;
  p.arithmetic = c.arithmetic;
  p.rotary_dim = c.model->rotary_dim;
  p.freqs.base = c.model->rope_theta;
  p.positions = Positions::Offset(c.tokens == 1 ? kDecodePosition : 0);
  p.exec.max_threads = c.threads == 1 ? 1 : 0;  // 0: the benchmark's arena of c.threads
  if (c.source == Source::kTable) p.source = CosSinSource::Table(TableFor(*c.model));
  if (c.source == Source::kCache) {
    const RopeTable* table = TableFor(*c.model);
    CosSinCache cache;
    cache.cos = table->cos_row(0);
    cache.sin = table->sin_row(0);
    cache.rows = table->max_positions();
    p.source = CosSinSource::Cache(cache);
  }
  return p;
}

// Seconds per call of `fn`, averaged over calls until ~20 ms have passed (after one warm-up).
template <class Fn>
double MeanSeconds(const Fn& fn) {
  fn();
  int reps = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  do {
    fn();
    ++reps;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < 0.02 || reps < 3);
  return elapsed / reps;
}

void ScaleBuffers(Tensors& t, int threads) {
  if (threads == 1) {
    ScaleInPlace(t.q.data(), t.q.size(), 1.0f);
    ScaleInPlace(t.k.data(), t.k.size(), 1.0f);
    return;
  }
  constexpr size_t kChunk = 16384;  // floats: 64 KiB per task, as the RoPE split
  for (std::vector<float>* v : {&t.q, &t.k}) {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, v->size(), kChunk),
                      [v](const tbb::blocked_range<size_t>& r) {
                        ScaleInPlace(v->data() + r.begin(), r.size(), 1.0f);
                      });
  }
}

// posenc::reference seconds per token for the shape (8 tokens, measured once).
double ReferenceSecondsPerToken(const Case& c) {
  static std::map<std::string, double> cache;
  const std::string key = c.model->name + PairLayoutName(c.pairs) + SourceName(c.source) +
                          ArithmeticName(c.arithmetic);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  Case small = c;
  small.tokens = 8;
  Tensors t(*c.model, small.tokens);
  RopeTensors rt;
  rt.q = TensorBSHD(t.q.data(), 1, small.tokens, c.model->q_heads, c.model->head_dim);
  rt.k = TensorBSHD(t.k.data(), 1, small.tokens, c.model->kv_heads, c.model->head_dim);
  const RopeParams p = ParamsFor(small);
  const double s = MeanSeconds([&] { (void)reference::ApplyRope(rt, p); }) / 8.0;
  cache[key] = s;
  return s;
}

void RunCase(benchmark::State& state, const Case& c) {
  if (!SetMaxTarget(c.target).ok() || ChosenTarget() != c.target) {
    state.SkipWithError(("target " + c.target + " unavailable").c_str());
    return;
  }
  Tensors t(*c.model, c.tokens);
  std::vector<float> q_copy, k_copy;
  tbb::task_arena arena(c.threads);
  const double baseline = arena.execute([&] { return MeanSeconds([&] { ScaleBuffers(t, c.threads); }); });
  double x_reference = 0;
  if (c.source == Source::kBaselineMemcpy) {
    q_copy.resize(t.q.size());
    k_copy.resize(t.k.size());
    for (auto _ : state) {
      std::memcpy(q_copy.data(), t.q.data(), t.q.size() * 4);
      std::memcpy(k_copy.data(), t.k.data(), t.k.size() * 4);
      benchmark::ClobberMemory();
    }
  } else {
    RopeTensors rt;
    rt.q = TensorBSHD(t.q.data(), 1, c.tokens, c.model->q_heads, c.model->head_dim);
    rt.k = TensorBSHD(t.k.data(), 1, c.tokens, c.model->kv_heads, c.model->head_dim);
    const RopeParams p = ParamsFor(c);
    Status st = ApplyRope(rt, p);  // warm-up, and the error check outside the timed loop
    if (!st.ok()) {
      state.SkipWithError(st.message().c_str());
      return;
    }
    arena.execute([&] {
      for (auto _ : state) {
        st = ApplyRope(rt, p);
        benchmark::ClobberMemory();
      }
    });
    x_reference = ReferenceSecondsPerToken(c) * static_cast<double>(c.tokens);
  }
  (void)SetMaxTarget("");
  const double bytes = t.bytes_moved();
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
  state.SetItemsProcessed(static_cast<int64_t>(t.q.size() + t.k.size()) * state.iterations());
  state.counters["bytes"] = bytes;
  state.counters["baseline_gbps"] = bytes / baseline / 1e9;
  // Rates over the whole loop: Google Benchmark divides by the measured time.
  state.counters["gbps"] = benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["pct_of_baseline"] =
      benchmark::Counter(100.0 * baseline, benchmark::Counter::kIsIterationInvariantRate);
  if (x_reference > 0) {
    state.counters["x_reference"] =
        benchmark::Counter(x_reference, benchmark::Counter::kIsIterationInvariantRate);
  }
}

std::vector<Case> Cases(bool quick) {
  std::vector<Case> cases;
  const std::vector<std::string> targets = SupportedTargets();
  const RotationArithmetic kBoth[] = {RotationArithmetic::kF64, RotationArithmetic::kF32};
  if (quick) {
    const ModelShape* m = FindModelShape("llama3-8b");
    for (int64_t tokens : {1, 512, 4096})
      for (Source s : {Source::kOnTheFly, Source::kTable})
        for (RotationArithmetic a : kBoth)
          for (int threads : {1, 2}) {
            if (tokens == 1 && threads == 2) continue;  // a decode step never spawns tasks
            cases.push_back({m, tokens, PairLayout::kHalf, s, targets.front(), threads, a});
          }
    cases.push_back({m, 4096, PairLayout::kHalf, Source::kBaselineMemcpy, targets.front(), 1});
    return cases;
  }
  // Every target with the default (f64) arithmetic; f32 arithmetic on the chosen target.
  for (const ModelShape& m : ModelShapes())
    for (int64_t tokens : {1, 16, 512, 4096}) {
      for (const std::string& target : targets)
        for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
          for (Source s : {Source::kOnTheFly, Source::kTable, Source::kCache})
            for (RotationArithmetic a : kBoth)
              for (int threads : {1, 2}) {
                if (a == RotationArithmetic::kF32 && target != targets.front()) continue;
                cases.push_back({&m, tokens, pairs, s, target, threads, a});
              }
      cases.push_back({&m, tokens, m.pairs, Source::kBaselineMemcpy, targets.front(), 1});
    }
  return cases;
}

// Collects finished runs for the compact table and the JSON file.
class RowCollector : public benchmark::ConsoleReporter {
 public:
  explicit RowCollector(bool print) : print_(print) {}
  bool ReportContext(const Context& context) override {
    return print_ ? benchmark::ConsoleReporter::ReportContext(context) : true;
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    if (print_) benchmark::ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.error_occurred || r.run_type != Run::RT_Iteration) continue;
      rows_.push_back(r);
    }
  }
  const std::vector<Run>& rows() const { return rows_; }

 private:
  bool print_;
  std::vector<Run> rows_;
};

double CounterOr(const benchmark::BenchmarkReporter::Run& r, const char* name, double fallback) {
  auto it = r.counters.find(name);
  return it == r.counters.end() ? fallback : it->second.value;
}

}  // namespace

int RunRopeBenchmarks(const BenchOptions& options, int argc, char** argv) {
  std::map<std::string, Case> by_name;
  for (const Case& c : Cases(options.quick)) {
    const std::string name = CaseName(c);
    by_name[name] = c;
    benchmark::RegisterBenchmark(name.c_str(), [c](benchmark::State& s) { RunCase(s, c); })
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond)
        ->MinTime(options.quick ? 0.05 : 0.1);
  }
  benchmark::Initialize(&argc, argv);
  RowCollector collector(!options.compact);
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::Shutdown();

  std::string json = "[\n";
  if (options.compact) {
    std::printf("%-10s %6s %5s %-11s %-15s %5s %-7s %7s %8s %10s %9s\n", "model", "tokens", "dtype",
                "pairs", "source", "arith", "target", "threads", "GB/s", "% baseline", "x ref");
  }
  for (const auto& r : collector.rows()) {
    auto it = by_name.find(r.run_name.function_name);
    if (it == by_name.end()) continue;
    const Case& c = it->second;
    const double gbps = CounterOr(r, "gbps", 0), base = CounterOr(r, "baseline_gbps", 0);
    const double pct = CounterOr(r, "pct_of_baseline", 0), xref = CounterOr(r, "x_reference", 0);
    if (options.compact) {
      std::printf("%-10s %6lld %5s %-11s %-15s %5s %-7s %7d %8.2f %9.1f%% %9.1f\n",
                  c.model->name.c_str(), static_cast<long long>(c.tokens), "f32",
                  PairLayoutName(c.pairs), SourceName(c.source), ArithmeticName(c.arithmetic),
                  c.target.c_str(), c.threads, gbps, pct, xref);
    }
    char row[768];
    std::snprintf(row, sizeof(row),
                  "  {\"model\": \"%s\", \"tokens\": %lld, \"dtype\": \"f32\", \"pairs\": \"%s\", "
                  "\"source\": \"%s\", \"arithmetic\": \"%s\", \"target\": \"%s\", \"threads\": %d, "
                  "\"bytes\": %.0f, "
                  "\"gbps\": %.6g, \"baseline_gbps\": %.6g, \"pct_of_baseline\": %.6g, "
                  "\"x_reference\": %.6g}",
                  c.model->name.c_str(), static_cast<long long>(c.tokens), PairLayoutName(c.pairs),
                  SourceName(c.source), ArithmeticName(c.arithmetic), c.target.c_str(), c.threads,
                  CounterOr(r, "bytes", 0), gbps,
                  base, pct, xref);
    json += (json.size() > 2 ? ",\n" : "") + std::string(row);
  }
  json += "\n]\n";
  if (!options.json_path.empty()) {
    std::ofstream f(options.json_path);
    f << json;
    if (!f) {
      std::fprintf(stderr, "posenc: error: cannot write %s\n", options.json_path.c_str());
      return 2;
    }
  }
  return 0;
}

}  // namespace bench
}  // namespace posenc
