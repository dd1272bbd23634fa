// The posenc command-line tool: one function per subcommand, registered in main.cc.
#ifndef POSENC_TOOLS_POSENC_CLI_H_
#define POSENC_TOOLS_POSENC_CLI_H_

#include <stdexcept>
#include <string>

#include "CLI/CLI.hpp"
#include "posenc/model.h"
#include "posenc/rope.h"
#include "tools/posenc/npy.h"

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

// The outputs of a q/k command (rope, vision-rope; cmd_rope.cc): arrays shaped like q and k,
// wired into *t as q_out and, when t->k is present, k_out.
struct QKOutputs {
  npy::Array q, k;
};
QKOutputs AttachOutputs(const npy::Array& q, const npy::Array& k, RopeTensors* t);
// Writes out.q to path_q and, when with_k, out.k to path_k. If the second write fails the first
// file is removed, so a failed command leaves no output file (main.cc's contract); the .npy
// writer's message is thrown as std::runtime_error.
void SaveOutputs(const QKOutputs& out, bool with_k, const std::string& path_q,
                 const std::string& path_k);

}  // namespace cli
}  // namespace posenc

#endif  // POSENC_TOOLS_POSENC_CLI_H_
