// Large calls that prefetch their heads in software (lib/core/rope_plan.h, PrefetchesHeads; on
// Intel CPUs only, lib/kernels/cpu_features.h, SoftwareHeadPrefetch). The test switches the
// prefetching on whatever the CPU, so every machine (and QEMU) runs those loops: a call of at
// least 32 MiB of bf16 / f16 heads, or 56 MiB of f32 heads, asks for the heads ahead, and those
// prefetches may reach past the tensor's end. Its bits must be those of the same tokens rotated
// in calls of 512 tokens (which never prefetch), on every target: bf16 half pairs serially, f16
// interleaved pairs on 2 threads, f32 half pairs with the default arithmetic serially (one large
// call per target: this test also runs under QEMU). Internal: it sets a flag of lib/kernels.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <gtest/gtest.h>

#include "hwy/targets.h"
#include "lib/kernels/cpu_features.h"
#include "posenc/half.h"
#include "posenc/rope.h"
#include "tests/rope_test_util.h"

namespace posenc {
namespace {

// Restores the CPU's own choice when the test ends, failed assertions included.
class ForcedHeadPrefetch {
 public:
  ForcedHeadPrefetch() : was_(kernels::SetSoftwareHeadPrefetch(true)) {}
  ~ForcedHeadPrefetch() { kernels::SetSoftwareHeadPrefetch(was_); }

 private:
  bool was_;
};

TEST(RopePrefetchTest, LargeCallsEqualSmallCalls) {
  const ForcedHeadPrefetch forced;
  const int64_t tokens = 4096, heads = 32, dim = 128, step = 512;  // 32 / 64 MiB (16-bit / f32)
  struct Case {
    DType dtype;
    PairLayout pairs;
    int threads;
  };
  for (const Case& c : {Case{DType::kBF16, PairLayout::kHalf, 1},
                        Case{DType::kF16, PairLayout::kInterleaved, 2},
                        Case{DType::kF32, PairLayout::kHalf, 1}}) {
    const size_t bytes = DTypeSize(c.dtype);
    std::vector<float> values(static_cast<size_t>(tokens * heads * dim));
    test::FillNormal(values.data(), values.size(), 77);
    std::vector<uint8_t> q(values.size() * bytes);
    ASSERT_TRUE(ConvertFromF32(values.data(), values.size(), c.dtype, q.data()).ok());
    RopeParams p;
    p.pairs = c.pairs;
    p.freqs.base = 500000.0;
    std::vector<uint8_t> small = q;
    for (int64_t first = 0; first < tokens; first += step) {
      RopeTensors t;
      t.q = TensorBSHD(small.data() + first * heads * dim * bytes, c.dtype, 1, step, heads, dim);
      p.positions = Positions::Offset(first);
      ASSERT_TRUE(ApplyRope(t, p).ok());
    }
    p.positions = Positions::Offset(0);
    p.exec.max_threads = c.threads;
    for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
      hwy::SetSupportedTargetsForTest(target);
      std::vector<uint8_t> big = q;
      RopeTensors t;
      t.q = TensorBSHD(big.data(), c.dtype, 1, tokens, heads, dim);
      ASSERT_TRUE(ApplyRope(t, p).ok());
      EXPECT_TRUE(big == small) << DTypeName(c.dtype) << " " << PairLayoutName(c.pairs) << " "
                                << hwy::TargetName(target);
    }
    hwy::SetSupportedTargetsForTest(0);
  }
}

// The CPU's vendor string, spelled out from CPUID leaf 0's EBX, EDX, ECX bytes (not from the
// library's constants); empty off x86.
std::string CpuVendor() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, regs[3] = {0, 0, 0};
  if (__get_cpuid(0, &eax, &regs[0], &regs[2], &regs[1]) == 0) return "";
  char vendor[12];
  std::memcpy(vendor, regs, sizeof vendor);
  return std::string(vendor, sizeof vendor);
#else
  return "";
#endif
}

// The flag's own contract: on where the vendor is Intel and off elsewhere, set on any CPU, the
// previous state returned, the CPU's choice restored.
TEST(RopePrefetchTest, FlagFollowsTheCpuAndTheTests) {
  const bool cpu = kernels::SoftwareHeadPrefetch();
  EXPECT_EQ(cpu, CpuVendor() == "GenuineIntel") << "vendor \"" << CpuVendor() << "\"";
  EXPECT_EQ(kernels::CpuIsIntel(), cpu);
  EXPECT_EQ(kernels::SetSoftwareHeadPrefetch(!cpu), cpu);
  EXPECT_EQ(kernels::SoftwareHeadPrefetch(), !cpu);
  EXPECT_EQ(kernels::SetSoftwareHeadPrefetch(cpu), !cpu);
  EXPECT_EQ(kernels::SoftwareHeadPrefetch(), cpu);
}

}  // namespace
}  // namespace posenc
