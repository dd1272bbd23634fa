// The bf16 store of the RoPE kernels (lib/kernels/half-inl.h, StoreBF16Pair) on every SIMD
// target, with AVX512_BF16's conversion switched on (where the CPU has it) and off: two f32
// vectors become 2 * Lanes bf16 rounded to nearest even, every NaN 0x7FC0, bit for bit as a
// scalar oracle written here (reference::RoundToBF16 of the exact value; NaN canonical). Inputs:
// every upper half (every sign, exponent and bf16 mantissa) with the lower halves that decide
// the rounding (0, just below, at and above the tie, all ones), then random bit patterns; so
// vectors of normal values (the instruction's path) and vectors holding NaNs, infinities or
// subnormals (which the instruction would flush to zero) are both met.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "hwy/aligned_allocator.h"
#include "posenc/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/bf16_store_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"
#include "lib/kernels/cpu_features.h"
#include "lib/kernels/half-inl.h"

#ifndef POSENC_TESTS_BF16_STORE_ONCE_
#define POSENC_TESTS_BF16_STORE_ONCE_
namespace posenc {
namespace test {

uint16_t OracleBF16(uint32_t bits) {
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0;
  float f;
  std::memcpy(&f, &bits, 4);
  return reference::RoundToBF16(f);
}

std::vector<uint32_t> StoreInputs() {
  std::vector<uint32_t> in;
  const uint32_t lows[] = {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu};
  for (uint32_t low : lows)
    for (uint32_t high = 0; high <= 0xFFFFu; ++high) in.push_back((high << 16) | low);
  std::mt19937 rng(1234);
  for (int i = 0; i < (1 << 18); ++i) in.push_back(static_cast<uint32_t>(rng()));
  return in;
}

}  // namespace test
}  // namespace posenc
#endif  // POSENC_TESTS_BF16_STORE_ONCE_

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
// Stores every input through StoreBF16Pair (2 * Lanes values at a time) and compares.
void CheckStores(const std::vector<uint32_t>& in, const char* what) {
  const hn::ScalableTag<float> d;
  const size_t n2 = 2 * hn::Lanes(d);
  auto out = hwy::AllocateAligned<uint16_t>(n2 + 1);  // + 1: a misaligned destination too
  size_t failures = 0;
  for (size_t i = 0; i + n2 <= in.size() && failures < 10; i += n2) {
    const auto v0 = hn::BitCast(d, hn::LoadU(hn::RebindToUnsigned<decltype(d)>(), in.data() + i));
    const auto v1 = hn::BitCast(
        d, hn::LoadU(hn::RebindToUnsigned<decltype(d)>(), in.data() + i + hn::Lanes(d)));
    uint16_t* dst = out.get() + (i / n2) % 2;
    StoreBF16Pair(d, v0, v1, dst);
    for (size_t j = 0; j < n2; ++j) {
      const uint16_t want = test::OracleBF16(in[i + j]);
      if (dst[j] != want) {
        ++failures;
        ADD_FAILURE() << what << ": input 0x" << std::hex << in[i + j] << " stored 0x" << dst[j]
                      << ", want 0x" << want;
      }
    }
  }
}
#endif

HWY_NOINLINE void TestStoreBF16Pair() {
#if HWY_TARGET != HWY_SCALAR
  const std::vector<uint32_t> in = test::StoreInputs();
  const bool was = kernels::SetAvx512Bf16Stores(true);
  EXPECT_EQ(kernels::Avx512Bf16Stores(), kernels::CpuHasAvx512Bf16());
  CheckStores(in, kernels::Avx512Bf16Stores() ? "AVX512_BF16 allowed" : "integer rounding");
  kernels::SetAvx512Bf16Stores(false);
  EXPECT_FALSE(kernels::Avx512Bf16Stores());
  CheckStores(in, "integer rounding");
  kernels::SetAvx512Bf16Stores(was);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(Bf16StoreTest);
HWY_EXPORT_AND_TEST_P(Bf16StoreTest, TestStoreBF16Pair);
}  // namespace posenc
#endif
