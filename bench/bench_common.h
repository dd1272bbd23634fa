// Shared pieces of the benchmark suite: the row registry the reporter reads, timing helpers and
// the counters every row carries.
//
// Counters of every row:
//   gbps             bytes read + written by the kernel per call / time per call
//   baseline_gbps    the same bytes / time of the baseline pass: an in-place scale over exactly the
//                    same buffers with the same thread count (for a fused add from a table, x += t):
//                    the bandwidth this machine gives this access pattern at this size
//   pct_of_baseline  100 * baseline time / call time, both timed in the same round
//   x_reference      speed-up over posenc::reference (scalar double), where measured
//
// RoPE, M-RoPE and sinusoidal rows are timed in alternating rounds (TimeRounds): each round times
// the baseline pass, then the call. The call time is the median over the rounds of the round's
// mean, the baseline time likewise, and pct_of_baseline the median of the rounds' own ratios, so
// a change of the host's speed between rows, or within one, moves a row's time but hardly its
// ratio (docs/performance.md section 3.22). ReRoPE rows time their own baseline once before the
// call (RegisterRow, SetRowCounters with seconds).
#ifndef POSENC_BENCH_BENCH_COMMON_H_
#define POSENC_BENCH_BENCH_COMMON_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <tbb/task_arena.h>

#include "posenc/aligned.h"

namespace posenc {
namespace bench {

// What the compact table and the JSON list say about one benchmark.
struct Row {
  std::string model;   // model shape, or "sinusoidal_table" / "sinusoidal_add:d=768"
  int64_t tokens = 0;
  std::string dtype = "f32";
  std::string pairs;   // RoPE pair layout, or the sinusoidal convention
  std::string source;  // on_the_fly | table | cache | baseline_memcpy
  std::string arithmetic;
  std::string target;
  int threads = 1;      // threads of the arena the call runs in
  int max_threads = 0;  // exec.max_threads of the call: 0 = the caller's arena (the default)
  bool is_default = false;  // every setting of the call is the API's default ("default": true)
  bool out_of_place = false;  // writes separate output buffers (memcpy rows: always)
  bool prepared = false;      // a RopeCall made once, Apply(positions) timed ("prepared": true)
};

// Registered rows by benchmark function name.
std::map<std::string, Row>& Rows();

// The suite's buffers: 64-byte aligned, as runtimes' tensor allocators give them (posenc/aligned.h:
// with std::vector's own every 64-byte vector access would straddle two cache lines, and a row's
// speed would depend on where malloc put it).
using Floats = AlignedVector<float>;

// The benchmark's name for `row`, recorded in Rows().
std::string RecordRow(const Row& row);

// Registers `fn` under the row's name, timed by Google Benchmark's loop for at least `min_time`
// seconds (ReRoPE rows).
template <class Fn>
void RegisterRow(const Row& row, double min_time, Fn fn) {
  benchmark::RegisterBenchmark(RecordRow(row).c_str(), fn)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond)
      ->MinTime(min_time);
}

// Registers `fn` under the row's name as one iteration whose time `fn` sets (TimeRow).
template <class Fn>
void RegisterRoundsRow(const Row& row, Fn fn) {
  benchmark::RegisterBenchmark(RecordRow(row).c_str(), fn)
      ->UseManualTime()
      ->Iterations(1)
      ->Unit(benchmark::kMicrosecond);
}

// Seconds per call of `fn`, averaged over calls until `min_seconds` have passed and at least
// `min_calls` were made (after one untimed warm-up call).
// (Clock: a std::chrono clock; tests pass one whose time the calls advance.)
template <class Clock = std::chrono::steady_clock, class Fn>
double MeanSeconds(const Fn& fn, double min_seconds = 0.02, int min_calls = 3) {
  fn();
  int reps = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  do {
    fn();
    ++reps;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < min_seconds || reps < min_calls);
  return elapsed / reps;
}

// The median of `v` (the mean of the middle two for an even count); v is not empty.
double Median(std::vector<double> v);

// How many rounds TimeRounds alternates, and how long each side of a round runs at least.
struct Rounds {
  int rounds;
  double side_seconds;
};
// 5 rounds for the quick suite, 7 for the full one; 10 ms a side (2-3 calls of a 4096-token row).
inline Rounds RoundsFor(bool quick) { return {quick ? 5 : 7, 0.01}; }

// What TimeRounds measured; see the counters above.
struct RowTimes {
  double call_seconds = 0;      // median over the rounds of the call's mean seconds
  double baseline_seconds = 0;  // median over the rounds of the baseline pass's mean seconds
  double pct_of_baseline = 0;   // median over the rounds of 100 * baseline / call seconds
};

// `plan.rounds` rounds, each MeanSeconds(baseline) then MeanSeconds(call) for plan.side_seconds
// (one call at least), run by the calling thread (inside the row's arena), after one round that
// is not counted: a row's first milliseconds can run at another speed (without it, the suite's
// first row read half its usual baseline in one of three runs, docs/performance.md section 3.22).
template <class Clock = std::chrono::steady_clock, class Baseline, class Call>
RowTimes TimeRounds(const Rounds& plan, const Baseline& baseline, const Call& call) {
  std::vector<double> base, calls, pct;
  for (int i = -1; i < plan.rounds; ++i) {
    const double b = MeanSeconds<Clock>(baseline, plan.side_seconds, 1);
    const double c = MeanSeconds<Clock>(call, plan.side_seconds, 1);
    if (i < 0) continue;
    base.push_back(b);
    calls.push_back(c);
    pct.push_back(100.0 * b / c);
  }
  RowTimes t;
  t.call_seconds = Median(calls);
  t.baseline_seconds = Median(base);
  t.pct_of_baseline = Median(pct);
  return t;
}

// The body of a RegisterRoundsRow benchmark: TimeRounds in an arena of `threads` (a runtime's own
// arena: posenc runs inside it), the call's median as the iteration's time.
template <class Baseline, class Call>
RowTimes TimeRow(benchmark::State& state, const Rounds& plan, int threads,
                 const Baseline& baseline, const Call& call) {
  RowTimes t;
  tbb::task_arena arena(threads);
  for (auto _ : state) {
    t = arena.execute([&] { return TimeRounds(plan, baseline, call); });
    state.SetIterationTime(t.call_seconds);
  }
  return t;
}

// One in-place scale pass over `buffers` (the baseline), serially for 1 thread, else in 64 KiB
// tasks as posenc's own split, in the calling thread's arena.
void ScalePass(const std::vector<Floats*>& buffers, int threads);

// One pass of x += t (t.size() == x.size()) as ScalePass: the same three streams as a fused add
// from a table of x's size.
void AddPass(Floats* x, const Floats& t, int threads);

// Mean seconds of ScalePass over `buffers` in an arena of `threads`, timed once (ReRoPE rows).
double BaselineSeconds(const std::vector<Floats*>& buffers, int threads);

// Sets the counters above for a row timed by Google Benchmark's loop. `bytes` moved per call;
// `reference_seconds` per call (0: not measured).
void SetRowCounters(benchmark::State& state, double bytes, double elements,
                    double baseline_seconds, double reference_seconds);

// Sets the counters above for a row timed in rounds (TimeRow).
void SetRowCounters(benchmark::State& state, double bytes, double elements, const RowTimes& t,
                    double reference_seconds);

// Caps dispatch at `target`; false (and the benchmark skipped) if that target cannot be chosen.
bool SelectTarget(benchmark::State& state, const std::string& target);

void RegisterRopeBenchmarks(bool quick);
void RegisterSinusoidalBenchmarks(bool quick);
void RegisterReropeBenchmarks(bool quick);  // full suite only (quick: none)
void RegisterMRopeBenchmarks(bool quick);   // quick: 6 rows at 1 thread (bench/mrope_bench.cc)

}  // namespace bench
}  // namespace posenc

#endif  // POSENC_BENCH_BENCH_COMMON_H_
