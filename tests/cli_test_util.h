// What the CLI tests (cli_test, cli_rerope_test, cli_hostile_test) share: running the posenc
// binary (POSENC_CLI_PATH, defined for them by tests/CMakeLists.txt) and looking at what it left.
#ifndef POSENC_TESTS_CLI_TEST_UTIL_H_
#define POSENC_TESTS_CLI_TEST_UTIL_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace posenc {
namespace test {

struct CliResult {
  int code;            // the exit status, or -1 if the tool did not exit normally
  std::string output;  // stdout and stderr together
};

// Runs `env posenc args` through the shell (env: assignments such as "POSENC_MAX_TARGET=SSE4").
inline CliResult RunCli(const std::string& args, const std::string& env = "") {
  const std::string cmd = env + " " + std::string(POSENC_CLI_PATH) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  CliResult r{-1, ""};
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// $TMPDIR (or /tmp) / <prefix>_<pid>_<name>: one name per test binary and process.
inline std::string CliTempPath(const std::string& prefix, const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + prefix + "_" + std::to_string(getpid()) + "_" +
         name;
}

inline bool FileExists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

inline int CountLines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace test
}  // namespace posenc

#endif  // POSENC_TESTS_CLI_TEST_UTIL_H_
