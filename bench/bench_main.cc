// posenc_bench: the whole benchmark suite (RoPE, sinusoidal) with Google Benchmark's own flags and output
// (e.g. --benchmark_filter=llama3-8b/tokens:4096 --benchmark_format=json).
#include "bench/suite.h"

int main(int argc, char** argv) {
  posenc::bench::BenchOptions options;
  return posenc::bench::RunBenchmarks(options, argc, argv);
}
