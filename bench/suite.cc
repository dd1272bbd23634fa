// Runs the registered rows and reports them as Google Benchmark's console, or as posenc's compact
// table, and optionally as a JSON list (keys model, tokens, dtype, pairs, source, arithmetic,
// target, threads, max_threads, default, out_of_place, prepared, bytes, gbps, baseline_gbps,
// pct_of_baseline, x_reference, us_per_call). "default": true marks the rows whose call uses the
// API's default settings (ApplyRope with RopeParams{} and the model's pair layout: on-the-fly
// cos/sin, kF64, exec.max_threads = 0); "prepared": true the rows that time RopeCall::Apply.
#include "bench/suite.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_common.h"

namespace posenc {
namespace bench {
namespace {

class RowCollector : public benchmark::ConsoleReporter {
 public:
  explicit RowCollector(bool print) : print_(print) {}
  bool ReportContext(const Context& context) override {
    return print_ ? benchmark::ConsoleReporter::ReportContext(context) : true;
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    if (print_) benchmark::ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (!r.error_occurred && r.run_type == Run::RT_Iteration) runs_.push_back(r);
    }
  }
  const std::vector<Run>& runs() const { return runs_; }

 private:
  bool print_;
  std::vector<Run> runs_;
};

double CounterOr(const benchmark::BenchmarkReporter::Run& r, const char* name) {
  auto it = r.counters.find(name);
  return it == r.counters.end() ? 0.0 : it->second.value;
}

}  // namespace

int RunBenchmarks(const BenchOptions& options, int argc, char** argv) {
  RegisterRopeBenchmarks(options.quick);
  RegisterSinusoidalBenchmarks(options.quick);
  RegisterReropeBenchmarks(options.quick);
  RegisterMRopeBenchmarks(options.quick);
  benchmark::Initialize(&argc, argv);
  RowCollector collector(!options.compact);
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::Shutdown();

  if (options.compact) {
    std::printf("%-22s %6s %5s %-11s %-15s %5s %-6s %7s %3s %3s %3s %9s %8s %10s %7s %3s\n",
                "model", "tokens", "dtype", "pairs", "source", "arith", "target", "threads", "max",
                "out", "prp", "us/call", "GB/s", "% baseline", "x ref", "dft");
  }
  std::string json = "[\n";
  bool first = true;
  for (const auto& r : collector.runs()) {
    auto it = Rows().find(r.run_name.function_name);
    if (it == Rows().end()) continue;
    const Row& row = it->second;
    const double gbps = CounterOr(r, "gbps"), pct = CounterOr(r, "pct_of_baseline");
    const double xref = CounterOr(r, "x_reference");
    const double us = gbps > 0 ? CounterOr(r, "bytes") / (gbps * 1e9) * 1e6 : 0.0;
    if (options.compact) {
      std::printf("%-22s %6lld %5s %-11s %-15s %5s %-6s %7d %3d %3s %3s %9.2f %8.2f %9.1f%% "
                  "%7.1f %3s\n",
                  row.model.c_str(), static_cast<long long>(row.tokens), row.dtype.c_str(),
                  row.pairs.c_str(), row.source.c_str(), row.arithmetic.c_str(),
                  row.target.c_str(), row.threads, row.max_threads, row.out_of_place ? "*" : "",
                  row.prepared ? "*" : "", us, gbps, pct, xref, row.is_default ? "*" : "");
    }
    char line[1024];
    std::snprintf(line, sizeof(line),
                  "  {\"model\": \"%s\", \"tokens\": %lld, \"dtype\": \"%s\", \"pairs\": \"%s\", "
                  "\"source\": \"%s\", \"arithmetic\": \"%s\", \"target\": \"%s\", \"threads\": %d, "
                  "\"max_threads\": %d, \"default\": %s, \"out_of_place\": %s, \"prepared\": %s, "
                  "\"bytes\": %.0f, \"gbps\": %.6g, \"baseline_gbps\": %.6g, "
                  "\"pct_of_baseline\": %.6g, \"x_reference\": %.6g, \"us_per_call\": %.6g}",
                  row.model.c_str(), static_cast<long long>(row.tokens), row.dtype.c_str(),
                  row.pairs.c_str(), row.source.c_str(), row.arithmetic.c_str(),
                  row.target.c_str(), row.threads, row.max_threads,
                  row.is_default ? "true" : "false", row.out_of_place ? "true" : "false",
                  row.prepared ? "true" : "false",
                  CounterOr(r, "bytes"), gbps,
                  CounterOr(r, "baseline_gbps"), pct, xref, us);
    json += (first ? "" : ",\n") + std::string(line);
    first = false;
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
