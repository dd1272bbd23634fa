// Shared pieces of the benchmark suite: the row registry the reporter reads, timing helpers and
// the counters every row carries.
//
// Counters of every row:
//   gbps             bytes read + written by the kernel per call / time
//   baseline_gbps    an in-place scale over exactly the same buffers with the same thread count,
//                    timed in the same benchmark right before the kernel: the bandwidth this
//                    machine gives this access pattern at this size
//   pct_of_baseline  100 * gbps / baseline_gbps
//   x_reference      speed-up over posenc::reference (scalar double), where measured
#ifndef POSENC_BENCH_BENCH_COMMON_H_
#define POSENC_BENCH_BENCH_COMMON_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

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
};

// Registered rows by benchmark function name.
std::map<std::string, Row>& Rows();

// Registers `fn` under a name derived from `row` and records the row.
template <class Fn>
void RegisterRow(const Row& row, double min_time, Fn fn) {
  std::string name = row.model + "/tokens:" + std::to_string(row.tokens) + "/" + row.dtype + "/" +
                     row.pairs + "/" + row.source + "/" +
                     (row.arithmetic.empty() ? "" : "arith:" + row.arithmetic + "/") + row.target +
                     "/threads:" + std::to_string(row.threads) +
                     (row.max_threads != 0 ? "/max_threads:" + std::to_string(row.max_threads) : "") +
                     (row.out_of_place ? "/out_of_place" : "");
  Rows()[name] = row;
  benchmark::RegisterBenchmark(name.c_str(), fn)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond)
      ->MinTime(min_time);
}

// Seconds per call of `fn`, averaged over calls until ~20 ms have passed (after one warm-up).
template <class Fn>
double MeanSeconds(const Fn& fn) {
  using Clock = std::chrono::steady_clock;
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

// Mean seconds of the in-place scale baseline over `buffers` with `threads` threads (64 KiB tasks
// as in posenc's own split).
double BaselineSeconds(const std::vector<std::vector<float>*>& buffers, int threads);

// Mean seconds of the add baseline x += t (t.size() == x.size()) with `threads` threads: the same
// three streams as a fused add from a table of x's size.
double AddBaselineSeconds(std::vector<float>* x, const std::vector<float>& t, int threads);

// Sets the counters above. `bytes` moved per call; `reference_seconds` per call (0: not measured).
void SetRowCounters(benchmark::State& state, double bytes, double elements,
                    double baseline_seconds, double reference_seconds);

// Caps dispatch at `target`; false (and the benchmark skipped) if that target cannot be chosen.
bool SelectTarget(benchmark::State& state, const std::string& target);

void RegisterRopeBenchmarks(bool quick);
void RegisterSinusoidalBenchmarks(bool quick);
void RegisterReropeBenchmarks(bool quick);  // full suite only (quick: none)
void RegisterMRopeBenchmarks(bool quick);   // quick: 6 rows at 1 thread (bench/mrope_bench.cc)

}  // namespace bench
}  // namespace posenc

#endif  // POSENC_BENCH_BENCH_COMMON_H_
