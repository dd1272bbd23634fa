// bf16 / f16 conversions on every SIMD target against the scalar oracles: all 2^16 inputs of each
// format to f32 (and back, which must return the same bits for non-NaN inputs), and f32 -> half
// for a large random set plus ties, subnormals, NaN, +-Inf and overflow. Bitwise.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "posenc/half.h"
#include "posenc/targets.h"
#include "tests/target_util.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/half_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

uint32_t Bits(float f) { return test::F32Bits(f); }
float FromBits(uint32_t u) { return test::F32FromBits(u); }

void CheckAllHalfInputs(DType dtype) {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> f(65536);
  ASSERT_TRUE(ConvertToF32(all.data(), dtype, all.size(), f.data()).ok());
  std::vector<uint16_t> back(65536);
  ASSERT_TRUE(ConvertFromF32(f.data(), f.size(), dtype, back.data()).ok());
  for (uint32_t i = 0; i < 65536; ++i) {
    const double want = dtype == DType::kBF16 ? reference::BF16ToDouble(all[i])
                                              : reference::F16ToDouble(all[i]);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f[i])) << std::hex << i;
      ASSERT_TRUE(std::isnan(dtype == DType::kBF16 ? reference::BF16ToDouble(back[i])
                                                   : reference::F16ToDouble(back[i])));
      continue;
    }
    ASSERT_EQ(static_cast<double>(f[i]), want) << std::hex << i;
    ASSERT_EQ(std::signbit(f[i]), std::signbit(want)) << std::hex << i;
    ASSERT_EQ(back[i], all[i]) << std::hex << i;  // f32 -> half of an exact value: identity
  }
}

HWY_NOINLINE void TestAllHalfInputs() {
  EXPECT_STREQ(hwy::TargetName(HWY_TARGET), ChosenTarget().c_str());
  CheckAllHalfInputs(DType::kBF16);
  CheckAllHalfInputs(DType::kF16);
}

std::vector<float> SpecialAndRandomF32() {
  std::vector<float> v = {0.f, -0.f, 1.f, -1.f, 65504.f, 65519.99f, 65520.f, -65520.f, 65536.f,
                          1e10f, -1e30f, 3.4e38f, std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                          FromBits(0x7F800001u), FromBits(0xFFC12345u),
                          std::numeric_limits<float>::denorm_min(), -1e-40f, 1e-45f,
                          6e-5f, 6.097555e-05f, 6.1035156e-05f, 5.96e-8f, 2.98e-8f, 2.99e-8f, 1e-8f,
                          FromBits(0x3F818000u), FromBits(0x3F808001u), FromBits(0x3F828000u),
                          FromBits(0x3F7F8000u), FromBits(0x7F7F8000u), FromBits(0x7F7FFFFFu),
                          1.0f + 3 * std::ldexp(1.f, -11), 1.0f + std::ldexp(1.f, -11),
                          FromBits(0x00800000u), FromBits(0x007FFFFFu), FromBits(0x00018000u)};
  // Exact f16 / bf16 ties and their neighbours at many exponents.
  for (int e = -26; e <= 16; ++e) {
    for (uint32_t m : {0x1000u, 0x3000u, 0x0FFFu, 0x1001u, 0x8000u, 0x18000u, 0x7FFFu}) {
      const uint32_t exp = static_cast<uint32_t>(e + 127) << 23;
      v.push_back(FromBits(exp | m));
      v.push_back(-FromBits(exp | m));
    }
  }
  std::mt19937 rng(2026);
  for (int i = 0; i < 200000; ++i) v.push_back(FromBits(static_cast<uint32_t>(rng())));
  std::uniform_real_distribution<float> small(-70000.f, 70000.f);
  for (int i = 0; i < 100000; ++i) v.push_back(small(rng));
  return v;
}

HWY_NOINLINE void TestF32ToHalf() {
  const std::vector<float> v = SpecialAndRandomF32();
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    std::vector<uint16_t> got(v.size());
    ASSERT_TRUE(ConvertFromF32(v.data(), v.size(), dtype, got.data()).ok());
    for (size_t i = 0; i < v.size(); ++i) {
      const uint16_t want = dtype == DType::kBF16 ? reference::RoundToBF16(v[i])
                                                  : reference::RoundToF16(v[i]);
      ASSERT_EQ(got[i], want) << DTypeName(dtype) << " input bits " << std::hex << Bits(v[i]);
    }
  }
}

HWY_NOINLINE void TestReferenceByHand() {
  // docs/highway-notes.md's cases: RNE results.
  EXPECT_EQ(reference::RoundToBF16(FromBits(0x3F818000u)), 0x3F82);  // tie -> even
  EXPECT_EQ(reference::RoundToBF16(FromBits(0x3F808001u)), 0x3F81);  // above tie
  EXPECT_EQ(reference::RoundToF16(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);
  EXPECT_EQ(reference::RoundToF16(65520.0), 0x7C00);  // overflow -> Inf
  EXPECT_EQ(reference::RoundToF16(65519.0), 0x7BFF);
  EXPECT_EQ(reference::RoundToF16(6e-5), 0x03EF);     // subnormal
  EXPECT_EQ(reference::RoundToF16(std::ldexp(1.0, -25)), 0x0000);                 // tie -> 0
  EXPECT_EQ(reference::RoundToF16(std::ldexp(1.0, -25) * 1.0000001), 0x0001);
  EXPECT_EQ(reference::RoundToF16(-2.0), 0xC000);
  EXPECT_EQ(reference::F16ToDouble(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(reference::F16ToDouble(0x7BFF), 65504.0);
  EXPECT_EQ(reference::BF16ToDouble(0x3F80), 1.0);
  EXPECT_EQ(reference::BF16ToDouble(0x0001), std::ldexp(1.0, -133));
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(HalfTest);
HWY_EXPORT_AND_TEST_P(HalfTest, TestAllHalfInputs);
HWY_EXPORT_AND_TEST_P(HalfTest, TestF32ToHalf);
HWY_EXPORT_AND_TEST_P(HalfTest, TestReferenceByHand);

TEST(HalfErrorsTest, Arguments) {
  float f = 1.f;
  uint16_t h = 0;
  EXPECT_NE(ConvertToF32(nullptr, DType::kF16, 1, &f).message().find("src is null"), std::string::npos);
  EXPECT_NE(ConvertFromF32(&f, 1, DType::kF16, nullptr).message().find("dst is null"), std::string::npos);
  EXPECT_NE(ConvertFromF32(&f, 1, static_cast<DType>(7), &h).message().find("dtype = 7"), std::string::npos);
  EXPECT_TRUE(ConvertToF32(nullptr, DType::kBF16, 0, nullptr).ok());
}
}  // namespace posenc
#endif
