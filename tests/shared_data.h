// Access to the reference data that lives outside the repository (golden outputs, ONNX
// conformance cases, Hugging Face configs and their outputs), read at test time from
// POSENC_SHARED_DIR (CMake cache variable; default ../shared beside the repository).
//
// This project's CI has that folder; a user's clone does not. A test that needs a shared file
// starts with POSENC_REQUIRE_SHARED("golden/hf_freqs.json"): without the file it is skipped with
// one line naming the missing path, so the rest of the suite still decides pass or fail.
#ifndef POSENC_TESTS_SHARED_DATA_H_
#define POSENC_TESTS_SHARED_DATA_H_

#include <sys/stat.h>

#include <string>

#include <gtest/gtest.h>

namespace posenc {
namespace test {

// Absolute path of `relative` under POSENC_SHARED_DIR.
inline std::string SharedPath(const std::string& relative) {
  return std::string(POSENC_SHARED_DIR) + "/" + relative;
}

// True when `relative` (a file or a folder) exists under POSENC_SHARED_DIR.
inline bool SharedExists(const std::string& relative) {
  struct stat st;
  return ::stat(SharedPath(relative).c_str(), &st) == 0;
}

}  // namespace test
}  // namespace posenc

// Skips the current test (one line, naming the path) when the shared file or folder is absent.
#define POSENC_REQUIRE_SHARED(relative)                                                      \
  do {                                                                                       \
    if (!::posenc::test::SharedExists(relative)) {                                           \
      GTEST_SKIP() << "needs " << ::posenc::test::SharedPath(relative)                       \
                   << " (reference data outside the repository; set POSENC_SHARED_DIR)";     \
    }                                                                                        \
  } while (0)

#endif  // POSENC_TESTS_SHARED_DATA_H_
