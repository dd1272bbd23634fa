// Cross-target and cross-architecture reproducibility of RelativeRopeScores: a fixed battery
// (every distance mode, both pair layouts, causal and mirrored, partial rotary, GQA, f32 / bf16 /
// f16, ids up to 2^24, on the fly and from a table, 1 and 2 threads) whose score bits are hashed
// (FNV-1a 64). Every SIMD target of every architecture must produce the same hash: x86 (AVX3,
// AVX2, SSE4, SSSE3, SCALAR) and aarch64 (NEON, SVE at 128..2048 bits, SVE2) alike. Inputs come
// from an integer generator, so they are the same everywhere.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "hwy/targets.h"
#include "posenc/half.h"
#include "posenc/rerope.h"
#include "tests/hash_util.h"

namespace posenc {
namespace {

// Measured on x86 (every target agrees); any target, anywhere, must reproduce it.
constexpr uint64_t kExpectedHash = 0xfc37b445fa0cc545ULL;

using test::Hasher;
using test::Values;

uint64_t BatteryHash() {
  Hasher hash;
  constexpr int64_t B = 2, LQ = 5, LK = 21, H = 6, KV = 2, D = 36;
  const std::vector<int64_t> q_ids = {40, 41, 45, 60, 100, (int64_t{1} << 24) - 3, 7, 9, 12, 30};
  std::vector<int64_t> k_ids(B * LK);
  for (int64_t j = 0; j < B * LK; ++j)
    k_ids[j] = (j * 37) % 97 + (j >= LK ? (int64_t{1} << 24) - 90 : 0);
  std::vector<float> scores(B * H * LQ * LK);
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
    const std::vector<float> qv = Values(B * LQ * H * D, 21), kv = Values(B * LK * KV * D, 22);
    std::vector<uint16_t> qh(qv.size()), kh(kv.size());
    void* q = const_cast<float*>(qv.data());
    void* k = const_cast<float*>(kv.data());
    if (dtype != DType::kF32) {
      EXPECT_TRUE(ConvertFromF32(qv.data(), qv.size(), dtype, qh.data()).ok());
      EXPECT_TRUE(ConvertFromF32(kv.data(), kv.size(), dtype, kh.data()).ok());
      q = qh.data();
      k = kh.data();
    }
    RelativeRopeTensors t;
    t.q = TensorBSHD(q, dtype, B, LQ, H, D);
    t.k = TensorBSHD(k, dtype, B, LK, KV, D);
    t.scores = TensorBSHD(scores.data(), DType::kF32, B, H, LQ, LK);
    for (DistanceMode mode :
         {DistanceMode::kExact, DistanceMode::kCap, DistanceMode::kLeaky, DistanceMode::kLog})
      for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
        for (bool causal : {false, true}) {
          RelativeRopeParams p;
          p.map = {mode, 13, 3.0};
          p.pairs = pairs;
          p.rotary_dim = pairs == PairLayout::kHalf ? 0 : 28;
          p.causal = causal;
          p.scale = 0.125;
          p.freqs.base = 500000.0;
          p.freqs.attention_factor = causal ? 1.0 : 1.1;
          p.q_positions = Positions::Ids(q_ids.data());
          p.k_positions = Positions::Ids(k_ids.data());
          p.exec.max_threads = causal ? 2 : 1;
          EXPECT_TRUE(RelativeRopeScores(t, p).ok());
          hash.Add(scores.data(), scores.size() * 4);
        }
  }
  // A table, its rows and the scores read from it.
  std::shared_ptr<const RelativeRopeTable> table;
  Frequencies f;
  f.base = 10000.0;
  EXPECT_TRUE(RelativeRopeTable::Create(D, f, {DistanceMode::kLog, 16, 0.0}, 400, &table).ok());
  hash.Add(table->cos_row(0), 400 * D * 8);
  const std::vector<float> qv = Values(B * LQ * H * D, 23), kv = Values(B * LK * KV * D, 24);
  RelativeRopeTensors t;
  t.q = TensorBSHD(qv.data(), B, LQ, H, D);
  t.k = TensorBSHD(kv.data(), B, LK, KV, D);
  t.scores = TensorBSHD(scores.data(), B, H, LQ, LK);
  RelativeRopeParams p;
  p.map = table->map();
  p.table = table.get();
  p.q_positions = Positions::Offset(300);
  EXPECT_TRUE(RelativeRopeScores(t, p).ok());
  hash.Add(scores.data(), scores.size() * 4);
  return hash.h;
}

TEST(ReropeHashTest, EveryTargetProducesTheExpectedHash) {
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    const uint64_t h = BatteryHash();
    std::printf("rerope hash %s = 0x%016llx\n", hwy::TargetName(target),
                static_cast<unsigned long long>(h));
    EXPECT_EQ(h, kExpectedHash) << hwy::TargetName(target);
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
}  // namespace posenc
