// Cross-architecture reproducibility of the multimodal entries (hash battery, as hash_test.cc):
// M-RoPE sections and interleaved (f32 both arithmetics, bf16, f16, a table), vision RoPE (Qwen,
// Pixtral), ShiftRope and RerotateRope; output bits hashed (FNV-1a 64). Every SIMD target of
// every architecture, with either compiler, must give the pinned hash. Inputs come from an
// integer generator (no libm, no <random> distributions).
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "hwy/targets.h"
#include "posenc/half.h"
#include "posenc/rope.h"
#include "posenc/shift.h"
#include "posenc/vision.h"
#include "tests/hash_util.h"

namespace posenc {
namespace {

// Measured on x86 with g++ (AVX2, SSE4, SSSE3, SCALAR agree); clang (EMU128) is checked by the
// clang builds, aarch64 by tools/cross_test.sh.
constexpr uint64_t kExpectedHash = 0xbba6104ff83e6412ULL;

using test::Hasher;
using test::Values;

uint64_t BatteryHash() {
  Hasher hash;
  const int64_t batch = 2, seq = 6;
  // Streams [3, 2, 6]: text, an image block, far positions.
  const std::vector<int64_t> ids = {0, 1, 2, 2, 2, 5,   4000, 4001, 4002, 4002, 4002, 70000,
                                    0, 1, 2, 2, 3, 5,   4000, 4001, 4002, 4003, 4003, 70000,
                                    0, 1, 2, 3, 2, 5,   4000, 4001, 4002, 4002, 4003, 9999999};
  const int64_t section[3] = {16, 24, 24};
  for (bool interleaved : {false, true})
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
      for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32}) {
        std::vector<float> q = Values(batch * seq * 3 * 128, 21), k = Values(batch * seq * 128, 22);
        RopeTensors t;
        t.q = TensorBSHD(q.data(), batch, seq, 3, 128);
        t.k = TensorBSHD(k.data(), batch, seq, 1, 128);
        RopeParams p;
        p.pairs = pairs;
        p.arithmetic = a;
        p.freqs.base = 1e6;
        p.mrope = {section, 3, interleaved};
        p.positions = Positions::StreamIds(ids.data(), 3);
        EXPECT_TRUE(ApplyRope(t, p).ok());
        hash.Add(q.data(), q.size() * 4);
        hash.Add(k.data(), k.size() * 4);
      }
  for (DType dt : {DType::kBF16, DType::kF16}) {
    const std::vector<float> v = Values(batch * seq * 2 * 128, 23);
    std::vector<uint16_t> q(v.size());
    EXPECT_TRUE(ConvertFromF32(v.data(), v.size(), dt, q.data()).ok());
    RopeTensors t;
    t.q = TensorBSHD(q.data(), dt, batch, seq, 2, 128);
    RopeParams p;
    p.mrope = {section, 3, dt == DType::kF16};
    p.positions = Positions::StreamIds(ids.data(), 3);
    EXPECT_TRUE(ApplyRope(t, p).ok());
    hash.Add(q.data(), q.size() * 2);
  }
  {  // a table (rows of every stream's position)
    std::shared_ptr<const RopeTable> table;
    std::vector<int64_t> small = ids;
    for (int64_t& x : small) x %= 100;
    EXPECT_TRUE(RopeTable::Create(128, Frequencies(), 100, &table).ok());
    std::vector<float> q = Values(batch * seq * 2 * 128, 24);
    RopeTensors t;
    t.q = TensorBSHD(q.data(), batch, seq, 2, 128);
    RopeParams p;
    p.mrope = {section, 3, false};
    p.positions = Positions::StreamIds(small.data(), 3);
    p.source = CosSinSource::Table(table.get());
    EXPECT_TRUE(ApplyRope(t, p).ok());
    hash.Add(q.data(), q.size() * 4);
  }
  for (VisionRopeKind kind : {VisionRopeKind::kQwenVL, VisionRopeKind::kPixtral}) {
    std::vector<int64_t> grid;
    EXPECT_TRUE(VisionGridPositions(kind, 1, 4, 4, kind == VisionRopeKind::kQwenVL ? 2 : 1, &grid).ok());
    std::vector<float> q = Values(16 * 2 * 80, 25);
    RopeTensors t;
    t.q = TensorBSHD(q.data(), 1, 16, 2, 80);
    VisionRopeParams vp;
    vp.kind = kind;
    vp.rows_cols64 = grid.data();
    EXPECT_TRUE(ApplyVisionRope(t, vp).ok());
    hash.Add(q.data(), q.size() * 4);
  }
  {
    std::vector<float> k = Values(batch * seq * 2 * 64, 26);
    ShiftParams sp;
    sp.delta = -12345;
    EXPECT_TRUE(ShiftRope(TensorBSHD(k.data(), batch, seq, 2, 64), Tensor(), sp).ok());
    RerotateParams rp;
    rp.from_positions = Positions::Offset(5000);
    rp.to_positions = Positions::Offset(77);
    rp.to_freqs.base = 5e5;
    EXPECT_TRUE(RerotateRope(TensorBSHD(k.data(), batch, seq, 2, 64), Tensor(), rp).ok());
    hash.Add(k.data(), k.size() * 4);
  }
  return hash.h;
}

TEST(MultimodalHashTest, EveryTargetProducesTheExpectedHash) {
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    const uint64_t h = BatteryHash();
    std::printf("hash %s multimodal = 0x%016llx\n", hwy::TargetName(target),
                static_cast<unsigned long long>(h));
    EXPECT_EQ(h, kExpectedHash) << hwy::TargetName(target);
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
}  // namespace posenc
