// Per-case output digests, read from a reviewed data file (tests/data/rope_digests.txt): each
// case of the cross-architecture batteries (tests/hash_cases.h, the list hash_test folds) is
// hashed on its own (FNV-1a 64 of its output bytes, tests/hash_util.h), and every SIMD target
// this CPU runs must give every case's recorded digest.
// When one changes, the test names the cases that moved (with their parameters), not just one
// battery hash. The file records the parameters of each case too, so a changed case definition
// is caught as well as a changed output.
//   POSENC_WRITE_DIGESTS=1 tests/digest_test   rewrites the file from the dispatched target
// (then checks every target against it); review the diff as the file's header says.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hwy/targets.h"
#include "tests/hash_cases.h"

namespace posenc {
namespace {

using test::AllHashCases;
using test::Case;
using test::Hasher;

const char* kDigestFile = POSENC_SOURCE_DIR "/tests/data/rope_digests.txt";

uint64_t Digest(const Case& c) {
  Hasher h;
  c.run(h);
  return h.h;
}

struct Recorded {
  std::string params;
  uint64_t digest = 0;
};

// name \t params \t 0x digest; '#' lines are comments.
std::map<std::string, Recorded> ReadDigests(std::vector<std::string>* order) {
  std::map<std::string, Recorded> out;
  std::ifstream f(kDigestFile);
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t a = line.find('\t'), b = line.rfind('\t');
    if (a == std::string::npos || a == b) {
      ADD_FAILURE() << kDigestFile << ": malformed line: " << line;
      continue;
    }
    const std::string name = line.substr(0, a);
    EXPECT_EQ(out.count(name), 0u) << "duplicate case " << name;
    out[name] = {line.substr(a + 1, b - a - 1), std::strtoull(line.c_str() + b + 1, nullptr, 16)};
    if (order) order->push_back(name);
  }
  return out;
}

void WriteDigests(const std::vector<Case>& cases) {
  std::ofstream f(kDigestFile);
  f << "# Per-case FNV-1a 64 digests of posenc outputs (tests/digest_test.cc; hasher and inputs:\n"
       "# tests/hash_util.h). One line per case: name<TAB>parameters<TAB>digest. Every SIMD target\n"
       "# of every architecture (x86 AVX3/AVX2/SSE4/SSSE3/SCALAR/EMU128, aarch64 NEON/SVE/SVE2) and\n"
       "# both compilers must produce each digest bit for bit.\n"
       "# Regenerate: POSENC_WRITE_DIGESTS=1 build/release/tests/digest_test (digests from the\n"
       "# dispatched target; the run then checks every target against them).\n"
       "# Review: a changed digest means posenc's output bits changed for that case. The commit that\n"
       "# changes a line must say why (which kernel or rounding changed, and that the accuracy tests\n"
       "# still hold), and the diff of this file shows exactly which cases moved; a change in only\n"
       "# some targets' output is never recorded here (the test fails on the targets that differ).\n"
       "# tests/hash_test.cc keeps the whole-battery hashes of the same inputs.\n";
  for (const Case& c : cases) {
    char hex[24];
    std::snprintf(hex, sizeof(hex), "0x%016llx", static_cast<unsigned long long>(Digest(c)));
    f << c.name << '\t' << c.params << '\t' << hex << '\n';
  }
  ASSERT_TRUE(f.good()) << "could not write " << kDigestFile;
  std::printf("digest_test: wrote %zu cases to %s\n", cases.size(), kDigestFile);
}

TEST(DigestTest, EveryTargetReproducesEveryCase) {
  const std::vector<Case> cases = AllHashCases();
  const char* write = std::getenv("POSENC_WRITE_DIGESTS");
  if (write != nullptr && std::strcmp(write, "1") == 0) WriteDigests(cases);

  std::vector<std::string> order;
  const std::map<std::string, Recorded> recorded = ReadDigests(&order);
  ASSERT_FALSE(recorded.empty()) << kDigestFile << " is missing or empty";
  // The file and the code list the same cases with the same parameters.
  EXPECT_EQ(recorded.size(), cases.size()) << "cases in " << kDigestFile << " vs in the test";
  for (const Case& c : cases) {
    auto it = recorded.find(c.name);
    if (it == recorded.end()) {
      ADD_FAILURE() << "case " << c.name << " is not in " << kDigestFile;
      continue;
    }
    EXPECT_EQ(it->second.params, c.params) << "case " << c.name << ": parameters changed";
  }

  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    std::vector<std::string> differing;
    for (const Case& c : cases) {
      auto it = recorded.find(c.name);
      if (it == recorded.end()) continue;
      const uint64_t d = Digest(c);
      if (d != it->second.digest) {
        char line[64];
        std::snprintf(line, sizeof(line), ": 0x%016llx, recorded 0x%016llx",
                      static_cast<unsigned long long>(d),
                      static_cast<unsigned long long>(it->second.digest));
        differing.push_back(c.name + " (" + c.params + ")" + line);
      }
    }
    std::printf("digest %s: %zu of %zu cases differ\n", hwy::TargetName(target), differing.size(),
                cases.size());
    for (const std::string& d : differing) std::printf("  differs on %s: %s\n", hwy::TargetName(target), d.c_str());
    EXPECT_TRUE(differing.empty()) << hwy::TargetName(target) << ": " << differing.size()
                                   << " cases differ (listed above)";
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
}  // namespace posenc
