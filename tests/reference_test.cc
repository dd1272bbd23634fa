// The oracle itself: posenc::reference against values derived by hand, and the accuracy measure
// against outputs with known errors (so a broken measure cannot hide a broken kernel).
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "posenc/rope.h"

namespace posenc {
namespace {

TEST(ReferenceTest, QuarterTurnsAreExactRotations) {
  // inv_freq pi/2 at positions 1 and 2: a quarter and a half turn. (1, 2) -> (-2, 1) -> (-1, -2).
  const double inv[1] = {M_PI / 2};
  std::vector<float> q = {1, 2, 1, 2};
  RopeTensors t;
  t.q = TensorBSHD(q.data(), 1, 2, 1, 2);
  RopeParams p;
  p.freqs.inv_freq = inv;
  p.freqs.inv_freq_len = 1;
  p.positions = Positions::Offset(1);
  std::vector<double> exact(4);
  ASSERT_TRUE(reference::ApplyRopeF64(t, p, exact.data(), nullptr).ok());
  EXPECT_NEAR(exact[0], -2, 1e-15);
  EXPECT_NEAR(exact[1], 1, 1e-15);
  EXPECT_NEAR(exact[2], -1, 1e-15);
  EXPECT_NEAR(exact[3], -2, 1e-15);
  ASSERT_TRUE(reference::ApplyRope(t, p).ok());
  EXPECT_EQ(q[0], -2.f);
  EXPECT_EQ(q[3], -2.f);
}

TEST(ReferenceTest, HalfLayoutPairsAcrossTheHead) {
  // head_dim 4, half layout: pairs (x0, x2), (x1, x3); inv_freq {pi/2, 0}: only pair 0 turns.
  const double inv[2] = {M_PI / 2, 0.0};
  std::vector<float> q = {1, 5, 3, 7};
  RopeTensors t;
  t.q = TensorBSHD(q.data(), 1, 1, 1, 4);
  RopeParams p;
  p.freqs.inv_freq = inv;
  p.freqs.inv_freq_len = 2;
  p.positions = Positions::Offset(1);
  p.freqs.attention_factor = 2.0;
  std::vector<double> exact(4);
  ASSERT_TRUE(reference::ApplyRopeF64(t, p, exact.data(), nullptr).ok());
  EXPECT_NEAR(exact[0], -6, 1e-14);  // 2 * (1 * 0 - 3 * 1)
  EXPECT_NEAR(exact[2], 2, 1e-14);   // 2 * (1 * 1 + 3 * 0)
  EXPECT_NEAR(exact[1], 10, 1e-14);  // 2 * 5
  EXPECT_NEAR(exact[3], 14, 1e-14);
}

TEST(ReferenceTest, MaxPairUlpErrorMeasuresKnownErrors) {
  std::vector<float> in = {1.5f, -0.75f, 0.25f, 8.f};  // one head, rotary_dim 2, 2 pass-through
  std::vector<float> out = in;
  const std::vector<double> exact = {1.5, -0.75, 0.25, 8.0};
  const Tensor tin = TensorBSHD(in.data(), 1, 1, 1, 4);
  const Tensor tout = TensorBSHD(out.data(), 1, 1, 1, 4);
  EXPECT_EQ(reference::MaxPairUlpError(tout, tin, exact.data(), 2, PairLayout::kHalf), 0.0);
  // 3 ulp of max(|1.5|, |-0.75|) = 3 * 2^-23 on element 1.
  out[1] = static_cast<float>(-0.75 + 3 * std::ldexp(1.0, -23));
  EXPECT_DOUBLE_EQ(reference::MaxPairUlpError(tout, tin, exact.data(), 2, PairLayout::kHalf), 3.0);
  out[1] = in[1];
  out[3] = std::nextafter(8.f, 9.f);  // a pass-through element changed
  EXPECT_TRUE(std::isinf(reference::MaxPairUlpError(tout, tin, exact.data(), 2, PairLayout::kHalf)));
  out[3] = in[3];
  out[0] = NAN;
  EXPECT_TRUE(std::isinf(reference::MaxPairUlpError(tout, tin, exact.data(), 2, PairLayout::kHalf)));
}

}  // namespace
}  // namespace posenc
