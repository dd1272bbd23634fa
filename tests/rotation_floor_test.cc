// The benchmark suite's rotation floors (bench/rotation_floor.h): each must compute the rotation
// it stands for, or its time bounds nothing. The kF32 and kF64 floors, both pair layouts, must
// write exactly the bits ApplyRope writes with a table and that arithmetic (the same operations
// on the same values), on every target this machine runs; the FMA chain must be a rotation within its bound: B < 2 where
// Highway's MulAdd is a fused multiply-add (AVX2, AVX3), B = 3 elsewhere (two roundings).
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench/rotation_floor.h"
#include "posenc/rope.h"
#include "posenc/targets.h"

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

// Runs `fn(target)` with dispatch capped at each target this CPU supports, then lifts the cap.
template <class Fn>
void ForEachTarget(const Fn& fn) {
  for (const std::string& target : SupportedTargets()) {
    ASSERT_TRUE(SetMaxTarget(target).ok()) << target;
    SCOPED_TRACE(target);
    fn(target);
  }
  ASSERT_TRUE(SetMaxTarget("").ok());
}

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

// The FMA chain's error in ulp of max(|x|, |y|) on `in` against the double reference, with
// dispatch capped at `target` (the caller's ForEachTarget).
double ChainUlp(const std::vector<float>& in) {
  const auto table = Table();
  FloorRows rows;
  EXPECT_TRUE(MakeFloorRows(*table, kFirst, kTokens, &rows));
  std::vector<float> before = in, out = in;
  RopeTensors t;
  t.q = Heads(before);
  RopeParams p;
  p.freqs.base = 10000.0;
  p.positions = Positions::Offset(kFirst);
  std::vector<double> exact(in.size());
  EXPECT_TRUE(reference::ApplyRopeF64(t, p, exact.data(), nullptr).ok());
  EXPECT_TRUE(RotateFloor(FloorArithmetic::kFmaChain, PairLayout::kHalf, rows, out.data(), kHeads,
                          nullptr, 0));
  return reference::MaxPairUlpError(Heads(out), Heads(before), exact.data(), kHeadDim,
                                    PairLayout::kHalf);
}

bool Fused(const std::string& target) { return target == "AVX2" || target.rfind("AVX3", 0) == 0; }

TEST(RotationFloorTest, FmaChainIsARotationWithinItsBound) {
  ForEachTarget([&](const std::string& target) {
    const double ulp = ChainUlp(Inputs());
    EXPECT_LT(ulp, Fused(target) ? 2.0 : 3.0);
    EXPECT_GT(ulp, 0.0);  // it rounds: a test that compared the input with itself would read 0
  });
}

// With y = 0 the chain's outputs are RN(x ch + fl(x cl)) and RN(x sh + fl(x sl)) (fused): one
// rounding of x c, x s to within ~2^-48 M, so within half an ulp of M plus that; without the lo
// parts the rows' own f32 rounding would add up to 3/8 ulp more. Two roundings without FMA.
TEST(RotationFloorTest, FmaChainRoundsOnceWhereOnlyTheRowsRound) {
  std::vector<float> in = Inputs();
  for (size_t head = 0; head < in.size(); head += kHeadDim) {
    for (int64_t i = kFloorPairs; i < kHeadDim; ++i) in[head + static_cast<size_t>(i)] = 0.0f;
  }
  ForEachTarget([&](const std::string& target) {
    EXPECT_LT(ChainUlp(in), Fused(target) ? 0.5001 : 1.0001);
  });
}

}  // namespace
}  // namespace bench
}  // namespace posenc
