// posenc bench: the RoPE benchmark suite as one compact table (and optionally JSON rows).
#include <memory>
#include <string>

#include "bench/suite.h"
#include "tools/posenc/cli.h"

namespace posenc {
namespace cli {

void AddBench(CLI::App& app) {
  auto options = std::make_shared<bench::BenchOptions>();
  options->compact = true;
  CLI::App* cmd = app.add_subcommand(
      "bench", "RoPE throughput vs the same-run memory bandwidth baseline and the reference");
  cmd->add_flag("--quick", options->quick,
                "Llama-3-8B f32 only, 1/512/4096 tokens, 1 and 2 threads, chosen target (< 1 min)");
  cmd->add_option("--json", options->json_path, "also write the rows as a JSON list to FILE");
  cmd->callback([options] {
    char arg0[] = "posenc";
    char* argv[] = {arg0, nullptr};
    if (bench::RunBenchmarks(*options, 1, argv) != 0) throw UsageError("bench failed");
  });
}

}  // namespace cli
}  // namespace posenc
