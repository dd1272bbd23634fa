// posenc_bench: the whole RoPE benchmark suite with Google Benchmark's own flags and output
// (e.g. --benchmark_filter=llama3-8b/tokens:4096 --benchmark_format=json).
#include "bench/rope_bench.h"

int main(int argc, char** argv) {
  posenc::bench::BenchOptions options;
  return posenc::bench::RunRopeBenchmarks(options, argc, argv);
}
