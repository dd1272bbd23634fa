// The posenc command-line tool: one function per subcommand, registered in main.cc.
#ifndef POSENC_TOOLS_POSENC_CLI_H_
#define POSENC_TOOLS_POSENC_CLI_H_

#include <stdexcept>
#include <string>

#include "CLI/CLI.hpp"
#include "posenc/model.h"

namespace posenc {
namespace cli {

// A user error. main prints "posenc: error: <message>" on one line and exits with code 2, as it
// does for every other failure (tools/posenc/main.cc).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Each Add* registers a subcommand on `app`; the callback runs it (throwing UsageError on bad
// input, before any output file is written).
void AddInfo(CLI::App& app);
void AddRope(CLI::App& app);
void AddDemo(CLI::App& app);
void AddFreqs(CLI::App& app);
void AddSinusoidal(CLI::App& app);
void AddRerope(CLI::App& app);
void AddVisionRope(CLI::App& app);
void AddBench(CLI::App& app);  // only when built with the benchmarks (POSENC_CLI_WITH_BENCH)

// The RoPE layer type `layer_type` of a model ("" = the model's only RoPE); a UsageError naming
// the valid types otherwise (cmd_freqs.cc).
const RopeLayerType& SelectLayerType(const ModelRope& model, const std::string& layer_type);

}  // namespace cli
}  // namespace posenc

#endif  // POSENC_TOOLS_POSENC_CLI_H_
