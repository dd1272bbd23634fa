// The benchmark suite's rotation floors (bench/rotation_floor.h): each must compute the rotation
// it stands for, or its time bounds nothing. The kF32 and kF64 floors, both pair layouts, must
// write exactly the bits ApplyRope writes with a table and that arithmetic (the same operations
// on the same values), on every target this machine runs; the FMA chain must be a rotation within
// its bound on these normal-range inputs, B < 2, with the same bits on every target (its fmas
// round once everywhere: lib/kernels/exact_fma-inl.h). (Below M = 2^-124 the chain's bound is
// larger: bench/rotation_floor.h, docs/performance.md section 3.29.)
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "bench/rotation_floor.h"
#include "posenc/rope.h"
#include "posenc/targets.h"
#include "tests/target_util.h"

namespace posenc {
namespace bench {
namespace {

constexpr int64_t kTokens = 3, kHeads = 5, kHeadDim = 2 * kFloorPairs, kFirst = 100;

std::shared_ptr<const RopeTable> Table(int64_t rotary_dim = kHeadDim) {
  Frequencies f;
  f.base = 10000.0;
  std::shared_ptr<const RopeTable> t;
  EXPECT_TRUE(RopeTable::Create(rotary_dim, f, 200, &t).ok());
  return t;
}

// Inputs of several magnitudes, so products and sums round in every binade the pairs reach.
std::vector<float> Inputs() {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> v(-2.f, 2.f);
  std::uniform_int_distribution<int> e(-6, 6);
  std::vector<float> x(static_cast<size_t>(kTokens * kHeads * kHeadDim));
  for (float& f : x) f = std::ldexp(v(rng), e(rng));
  return x;
}

Tensor Heads(std::vector<float>& x) {
  return TensorBSHD(x.data(), DType::kF32, 1, kTokens, kHeads, kHeadDim);
}

using test::ForEachTarget;

TEST(RotationFloorTest, RowsOnlyForHeadDim128AndTheTablesPositions) {
  FloorRows rows;
  EXPECT_FALSE(MakeFloorRows(*Table(64), 0, 1, &rows));
  const auto table = Table();
  EXPECT_FALSE(MakeFloorRows(*table, 0, 0, &rows));
  EXPECT_FALSE(MakeFloorRows(*table, -1, 2, &rows));
  EXPECT_FALSE(MakeFloorRows(*table, 199, 2, &rows));
  ASSERT_TRUE(MakeFloorRows(*table, 198, 2, &rows));
  EXPECT_EQ(rows.tokens, 2);
  EXPECT_EQ(rows.cos[kFloorPairs + 3], table->cos_row(199)[3]);
  EXPECT_EQ(rows.sin64[5], static_cast<double>(table->sin_row(198)[5]));
  EXPECT_NE(rows.cos_lo[7], 0.0f);  // the f32 row is not the double cos: a lo part remains
  EXPECT_EQ(FloorArithmeticName(FloorArithmetic::kFmaChain), std::string("fma_chain"));
  // The chain has no interleaved form: refused, nothing written.
  std::vector<float> x = Inputs();
  EXPECT_FALSE(RotateFloor(FloorArithmetic::kFmaChain, PairLayout::kInterleaved, rows, x.data(),
                           1, nullptr, 0));
  EXPECT_FALSE(RotateFloor(FloorArithmetic::kF32, PairLayout::kFromConfig, rows, x.data(), 1,
                           nullptr, 0));
  EXPECT_EQ(x, Inputs());
}

TEST(RotationFloorTest, F32AndF64FloorsWriteApplyRopesBitsOnEveryTarget) {
  const auto table = Table();
  FloorRows rows;
  ASSERT_TRUE(MakeFloorRows(*table, kFirst, kTokens, &rows));
  ForEachTarget([&](const std::string&) {
    for (auto [floor, arithmetic] :
         {std::pair{FloorArithmetic::kF32, RotationArithmetic::kF32},
          std::pair{FloorArithmetic::kF64, RotationArithmetic::kF64}})
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved}) {
      SCOPED_TRACE(pairs == PairLayout::kHalf ? "half" : "interleaved");
      std::vector<float> ours = Inputs(), theirs = Inputs();
      ASSERT_TRUE(RotateFloor(floor, pairs, rows, ours.data(), kHeads, nullptr, 0));
      RopeTensors t;
      t.q = Heads(theirs);
      RopeParams p;
      p.arithmetic = arithmetic;
      p.pairs = pairs;
      p.source = CosSinSource::Table(table.get());
      p.positions = Positions::Offset(kFirst);
      ASSERT_TRUE(ApplyRope(t, p).ok());
      EXPECT_EQ(ours, theirs) << FloorArithmeticName(floor);
      EXPECT_NE(ours, Inputs());
    }
  });
}

// The error of `out`, the floors' rotation of the heads `in` (half pairs, positions from
// kFirst, base 10000), in ulp of max(|x|, |y|) against the double reference.
double OracleUlp(const std::vector<float>& in, std::vector<float> out) {
  std::vector<float> before = in;
  RopeTensors t;
  t.q = Heads(before);
  RopeParams p;
  p.freqs.base = 10000.0;
  p.positions = Positions::Offset(kFirst);
  std::vector<double> exact(in.size());
  EXPECT_TRUE(reference::ApplyRopeF64(t, p, exact.data(), nullptr).ok());
  return reference::MaxPairUlpError(Heads(out), Heads(before), exact.data(), kHeadDim,
                                    PairLayout::kHalf);
}

// The FMA chain's error in ulp of max(|x|, |y|) on `in` against the double reference, with
// dispatch capped at `target` (the caller's ForEachTarget).
double ChainUlp(const std::vector<float>& in, std::vector<float>* rotated = nullptr) {
  const auto table = Table();
  FloorRows rows;
  EXPECT_TRUE(MakeFloorRows(*table, kFirst, kTokens, &rows));
  std::vector<float> out = in;
  EXPECT_TRUE(RotateFloor(FloorArithmetic::kFmaChain, PairLayout::kHalf, rows, out.data(), kHeads,
                          nullptr, 0));
  if (rotated != nullptr) *rotated = out;
  return OracleUlp(in, out);
}

TEST(RotationFloorTest, FmaChainIsARotationWithinItsBoundWithTheSameBitsEverywhere) {
  std::vector<float> first;
  std::string first_target;
  ForEachTarget([&](const std::string& target) {
    std::vector<float> out;
    const double ulp = ChainUlp(Inputs(), &out);
    EXPECT_LT(ulp, 2.0) << target;
    EXPECT_GT(ulp, 0.0);  // it rounds: a test that compared the input with itself would read 0
    if (first.empty()) {
      first = out;
      first_target = target;
    }
    EXPECT_EQ(out, first) << target << " against " << first_target;
  });
}

// With y = 0 the chain's outputs are RN(x ch + fl(x cl)) and RN(x sh + fl(x sl)) (fused): one
// rounding of x c, x s to within ~2^-48 M, so within half an ulp of M plus that; without the lo
// parts the rows' own f32 rounding would add up to 3/8 ulp more, and an fma that rounded twice
// (Mul then Add) up to half an ulp more.
TEST(RotationFloorTest, FmaChainRoundsOnceWhereOnlyTheRowsRound) {
  std::vector<float> in = Inputs();
  for (size_t head = 0; head < in.size(); head += kHeadDim) {
    for (int64_t i = kFloorPairs; i < kHeadDim; ++i) in[head + static_cast<size_t>(i)] = 0.0f;
  }
  ForEachTarget([&](const std::string& target) { EXPECT_LT(ChainUlp(in), 0.5001) << target; });
}

// The chain without its guard on one pair (x, y) with the rows' entry `at`, in scalar f32 with
// std::fmaf (one rounding each): the floor's operations on the same values.
std::pair<float, float> UnguardedChainPair(const FloorRows& rows, size_t at, float x, float y) {
  const float ch = rows.cos[at], sh = rows.sin[at], cl = rows.cos_lo[at], sl = rows.sin_lo[at];
  return {std::fmaf(x, ch, std::fmaf(-y, sh, x * cl - y * sl)),
          std::fmaf(y, ch, std::fmaf(x, sh, y * cl + x * sl))};
}

// UnguardedChainPair over every pair of the test's heads `x`, in place.
void UnguardedChain(const FloorRows& rows, std::vector<float>& x) {
  for (int64_t t = 0; t < kTokens; ++t) {
    for (int64_t h = 0; h < kHeads; ++h) {
      float* p = x.data() + (t * kHeads + h) * kHeadDim;
      for (int64_t i = 0; i < kFloorPairs; ++i) {
        const size_t at = static_cast<size_t>(t * kFloorPairs + i);
        std::tie(p[i], p[i + kFloorPairs]) =
            UnguardedChainPair(rows, at, p[i], p[i + kFloorPairs]);
      }
    }
  }
}

// Just above the subnormals (M in [2^-126, 2^-125)) the unguarded chain breaks B = 2
// (docs/performance.md section 3.29). Pairs where it does, found with UnguardedChain's
// arithmetic against a long-double rotation by the same rows, are planted in two heads among
// normal ones: the oracle confirms the unguarded chain's error >= 2 there, and the floor, whose
// guard rotates those heads with kF64's operations, stays within B < 2 with the same bits on
// every target. Without the guard this test fails.
TEST(RotationFloorTest, FmaChainGuardKeepsTheBoundJustAboveTheSubnormals) {
  const auto table = Table();
  FloorRows rows;
  ASSERT_TRUE(MakeFloorRows(*table, kFirst, kTokens, &rows));
  std::vector<float> in = Inputs();
  std::mt19937 rng(29);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const std::pair<int64_t, int64_t> heads[] = {{0, 1}, {2, 4}};  // (token, head)
  for (const auto& [t, h] : heads) {
    bool found = false;
    for (int tries = 0; tries < 2000000 && !found; ++tries) {
      const int64_t i = static_cast<int64_t>(rng() % kFloorPairs);
      const size_t at = static_cast<size_t>(t * kFloorPairs + i);
      float x = static_cast<float>(std::ldexp(1.0 + unit(rng), -126));
      float y = static_cast<float>((2 * unit(rng) - 1) * x);
      if (rng() & 1) x = -x;
      if (rng() & 1) std::swap(x, y);
      const auto [ox, oy] = UnguardedChainPair(rows, at, x, y);
      const long double c = static_cast<long double>(rows.cos[at]) + rows.cos_lo[at];
      const long double s = static_cast<long double>(rows.sin[at]) + rows.sin_lo[at];
      const long double ex = x * c - y * s, ey = x * s + y * c;
      const long double ulp = std::ldexp(1.0L, -149);  // ulp_f32 of M in [2^-126, 2^-125)
      if (std::fabs(ox - ex) / ulp >= 2.05L || std::fabs(oy - ey) / ulp >= 2.05L) {
        float* p = in.data() + (t * kHeads + h) * kHeadDim;
        p[i] = x;
        p[i + kFloorPairs] = y;
        found = true;
      }
    }
    ASSERT_TRUE(found) << "no pair breaking B = 2 found for token " << t << ", head " << h;
  }
  // The oracle's verdict on the unguarded chain.
  std::vector<float> unguarded = in;
  UnguardedChain(rows, unguarded);
  EXPECT_GE(OracleUlp(in, unguarded), 2.0);
  std::vector<float> first;
  ForEachTarget([&](const std::string& target) {
    std::vector<float> out;
    EXPECT_LT(ChainUlp(in, &out), 2.0) << target;
    // Only the two guarded heads differ from the unguarded chain.
    size_t differing_heads = 0;
    for (size_t head = 0; head < out.size(); head += kHeadDim) {
      differing_heads += !std::equal(out.begin() + static_cast<std::ptrdiff_t>(head),
                                     out.begin() + static_cast<std::ptrdiff_t>(head + kHeadDim),
                                     unguarded.begin() + static_cast<std::ptrdiff_t>(head));
    }
    EXPECT_EQ(differing_heads, 2u) << target;
    if (first.empty()) first = out;
    EXPECT_EQ(out, first) << target;
  });
}

}  // namespace
}  // namespace bench
}  // namespace posenc
