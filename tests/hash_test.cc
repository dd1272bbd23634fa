// Cross-architecture reproducibility: the hash cases (tests/hash_cases.h: RoPE in both pair
// layouts, partial rotary, inverse, both arithmetics, positions up to 2^24, tables, f32 / bf16 /
// f16, every sinusoidal convention and spacing; and a battery of special values) folded, in list
// order, into two FNV-1a 64 hashes of their output bits. The same hashes must come out on every
// SIMD target of every architecture and with either compiler: x86 (AVX3, AVX2, SSE4, SSSE3, and
// the SCALAR (g++) or EMU128 (clang) fallback) and aarch64 (NEON, SVE at any vector length, SVE2)
// alike. digest_test checks the same cases one by one against tests/data/rope_digests.txt.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <gtest/gtest.h>

#include "hwy/targets.h"
#include "tests/hash_cases.h"

namespace posenc {
namespace {

// Measured on x86 (every target agrees); any target, anywhere, must reproduce them. The cases'
// output bytes are those rope_digests.txt records case by case.
constexpr uint64_t kExpectedHash = 0xfe359ad0ad74edbaULL;
constexpr uint64_t kExpectedSpecialHash = 0xc5281273557e978fULL;

// The output bytes of every case of one battery (special or not), in list order, as one stream.
uint64_t FoldedHash(const std::vector<test::Case>& cases, bool special) {
  test::Hasher hash;
  for (const test::Case& c : cases) {
    if (test::IsSpecialCase(c) == special) c.run(hash);
  }
  return hash.h;
}

TEST(CrossArchHashTest, EveryTargetProducesTheExpectedHash) {
  const std::vector<test::Case> cases = test::AllHashCases();
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    const uint64_t h = FoldedHash(cases, false);
    std::printf("hash %s = 0x%016llx\n", hwy::TargetName(target), static_cast<unsigned long long>(h));
    EXPECT_EQ(h, kExpectedHash) << hwy::TargetName(target);
    const uint64_t special = FoldedHash(cases, true);
    std::printf("hash %s special values = 0x%016llx\n", hwy::TargetName(target),
                static_cast<unsigned long long>(special));
    EXPECT_EQ(special, kExpectedSpecialHash) << hwy::TargetName(target) << " (special values)";
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
}  // namespace posenc
