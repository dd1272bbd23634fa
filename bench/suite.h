// The benchmark suite (Google Benchmark), shared by posenc_bench and `posenc bench`.
#ifndef POSENC_BENCH_SUITE_H_
#define POSENC_BENCH_SUITE_H_

#include <string>

namespace posenc {
namespace bench {

struct BenchOptions {
  bool quick = false;       // Llama-3-8B f32 at 1/512/4096 tokens, 1 and 2 threads, chosen target
                            // (plus one sinusoidal table and fused-add row)
  bool compact = false;     // print the compact table instead of Google Benchmark's console
  std::string json_path;    // write the rows as a JSON list here (optional)
};

// Registers the suite, runs it (argv may carry --benchmark_* flags) and reports. Returns 0 on
// success.
int RunBenchmarks(const BenchOptions& options, int argc, char** argv);

}  // namespace bench
}  // namespace posenc

#endif  // POSENC_BENCH_SUITE_H_
