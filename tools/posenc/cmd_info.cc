// posenc info: version, compiled targets, targets this CPU supports, the chosen one.
#include <cstdio>
#include <string>
#include <vector>

#include "posenc/targets.h"
#include "tools/posenc/cli.h"

namespace posenc {
namespace cli {
namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

void RunInfo() {
  const Status env = TargetEnvironmentStatus();
  if (!env.ok()) throw UsageError(env.message());
  std::printf("posenc %s\n", Version());
  std::printf("compiled targets:  %s\n", Join(CompiledTargets()).c_str());
  std::printf("supported targets: %s\n", Join(SupportedTargets()).c_str());
  std::printf("chosen target:     %s\n", ChosenTarget().c_str());
}

}  // namespace

void AddInfo(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("info", "Version and SIMD targets (POSENC_MAX_TARGET caps them)");
  cmd->callback(RunInfo);
}

}  // namespace cli
}  // namespace posenc
