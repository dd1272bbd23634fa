// Cross-architecture reproducibility: a fixed battery of RoPE and sinusoidal cases (both pair
// layouts, partial rotary, inverse, both arithmetics, positions up to 2^24, tables, f32 / bf16 /
// f16, every sinusoidal convention and spacing), and a second battery of special values, whose
// output bits are hashed (FNV-1a 64). The same hashes must come out on every SIMD target of every
// architecture and with either compiler: x86 (AVX3, AVX2, SSE4, SSSE3, and the SCALAR (g++) or
// EMU128 (clang) fallback) and aarch64 (NEON, SVE at any vector length, SVE2) alike. Inputs come
// from an integer generator (no libm, no <random> distributions), so they are the same everywhere.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "hwy/targets.h"
#include "posenc/half.h"
#include "posenc/rope.h"
#include "posenc/sinusoidal.h"
#include "tests/hash_util.h"

namespace posenc {
namespace {

// Measured on x86 (every target agrees); any target, anywhere, must reproduce it.
constexpr uint64_t kExpectedHash = 0x5fbb7baaff06e444ULL;

using test::Hasher;
using test::Values;

uint64_t BatteryHash() {
  Hasher hash;
  const std::vector<int64_t> ids = {0, 1, 7, 4000, 65535, 131071, 9999999, (int64_t{1} << 24) - 1,
                                    int64_t{1} << 24, -3, 123456, 2};
  // RoPE f32: layouts x inverse x arithmetic x rotary (full, partial), on the fly and table.
  for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
    for (bool inverse : {false, true})
      for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32})
        for (int64_t rotary : {0, 40}) {
          std::vector<float> q = Values(2 * 6 * 3 * 72, 11), k = Values(2 * 6 * 1 * 72, 12);
          RopeTensors t;
          t.q = TensorBSHD(q.data(), 2, 6, 3, 72);
          t.k = TensorBSHD(k.data(), 2, 6, 1, 72);
          RopeParams p;
          p.pairs = pairs;
          p.inverse = inverse;
          p.arithmetic = a;
          p.rotary_dim = rotary;
          p.freqs.base = rotary ? 500000.0 : 10000.0;
          p.freqs.attention_factor = rotary ? 1.25 : 1.0;
          p.positions = Positions::Ids(ids.data());
          EXPECT_TRUE(ApplyRope(t, p).ok());
          hash.Add(q.data(), q.size() * 4);
          hash.Add(k.data(), k.size() * 4);
        }
  {
    std::shared_ptr<const RopeTable> table;
    Frequencies f;
    f.base = 1000000.0;
    EXPECT_TRUE(RopeTable::Create(64, f, 5000, &table).ok());
    hash.Add(table->cos_row(0), 5000 * 32 * 4);
    hash.Add(table->sin_row(0), 5000 * 32 * 4);
  }
  // bf16 / f16 RoPE.
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    const std::vector<float> v = Values(2 * 6 * 4 * 34, 13);
    std::vector<uint16_t> bits(v.size());
    EXPECT_TRUE(ConvertFromF32(v.data(), v.size(), dtype, bits.data()).ok());
    RopeTensors t;
    t.q = TensorBSHD(bits.data(), dtype, 2, 6, 4, 34);
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved}) {
      RopeParams p;
      p.pairs = pairs;
      p.positions = Positions::Ids(ids.data());
      EXPECT_TRUE(ApplyRope(t, p).ok());
    }
    hash.Add(bits.data(), bits.size() * 2);
  }
  // Sinusoidal tables and adds, every convention and spacing, f32 and half.
  for (SinusoidalLayout layout : {SinusoidalLayout::kInterleaved, SinusoidalLayout::kConcatSinCos,
                                  SinusoidalLayout::kConcatCosSin})
    for (FrequencySpacing spacing : {FrequencySpacing::kPaper, FrequencySpacing::kTensor2Tensor}) {
      SinusoidalParams p;
      p.layout = layout;
      p.spacing = spacing;
      p.positions = Positions::Ids(ids.data());
      p.x_scale = 2.0;
      p.position_offset = 2;
      std::vector<float> table(ids.size() * 66);
      EXPECT_TRUE(WriteSinusoidal(p, EmbeddingBSD(table.data(), 2, 6, 66)).ok());
      std::vector<float> x = Values(table.size(), 14);
      EXPECT_TRUE(AddSinusoidal(p, EmbeddingBSD(x.data(), 2, 6, 66)).ok());
      std::vector<uint16_t> h(table.size());
      EXPECT_TRUE(WriteSinusoidal(p, EmbeddingBSD(h.data(), DType::kBF16, 2, 6, 66)).ok());
      hash.Add(table.data(), table.size() * 4);
      hash.Add(x.data(), x.size() * 4);
      hash.Add(h.data(), h.size() * 2);
    }
  return hash.h;
}

// Special values, where fallbacks and architectures part ways first: Inf, NaN (quiet and
// signalling, both signs), overflowing rotations and adds, subnormals, attention factors that
// overflow or vanish (Inf * 0 makes a NaN whose sign differs between x86 and Arm), caches
// holding Inf/NaN. Planted at fixed places in the generator's values.
constexpr uint64_t kExpectedSpecialHash = 0xc5281273557e978fULL;

std::vector<float> SpecialValues(size_t n, uint32_t seed) {
  std::vector<float> v = Values(n, seed);
  const uint32_t specials[] = {0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x7FA00001u,
                               0xFF812345u, 0x7F7AE148u /* 3.33e38 */, 0xFF70A3D7u /* -3.2e38 */,
                               0x000116C2u /* 1e-40 */, 0x80000001u, 0x00000000u, 0x80000000u};
  for (size_t i = 0; i < n; i += 3) std::memcpy(&v[i], &specials[(i / 3) % 12], 4);
  return v;
}

uint64_t SpecialBatteryHash() {
  Hasher hash;
  const std::vector<int64_t> ids = {0, 1, 3, 100, 4000, 65535};
  for (double factor : {1.0, 0.0, 1e39, 1e-42})
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
      for (bool inverse : {false, true}) {
        for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32}) {
          std::vector<float> q = SpecialValues(2 * 3 * 2 * 18, 21);
          RopeTensors t;
          t.q = TensorBSHD(q.data(), 2, 3, 2, 18);
          RopeParams p;
          p.pairs = pairs;
          p.inverse = inverse;
          p.arithmetic = a;
          p.rotary_dim = 16;
          p.freqs.attention_factor = factor;
          p.positions = Positions::Ids(ids.data());
          EXPECT_TRUE(ApplyRope(t, p).ok());
          hash.Add(q.data(), q.size() * 4);
        }
        for (DType dtype : {DType::kBF16, DType::kF16}) {
          const std::vector<float> v = SpecialValues(2 * 3 * 2 * 18, 22);
          std::vector<uint16_t> bits(v.size());
          EXPECT_TRUE(ConvertFromF32(v.data(), v.size(), dtype, bits.data()).ok());
          RopeTensors t;
          t.q = TensorBSHD(bits.data(), dtype, 2, 3, 2, 18);
          RopeParams p;
          p.pairs = pairs;
          p.inverse = inverse;
          p.freqs.attention_factor = factor;
          p.positions = Positions::Ids(ids.data());
          EXPECT_TRUE(ApplyRope(t, p).ok());
          hash.Add(bits.data(), bits.size() * 2);
        }
      }
  for (double factor : {1e39, 1e-42}) {
    Frequencies f;
    f.attention_factor = factor;
    std::shared_ptr<const RopeTable> table;
    EXPECT_TRUE(RopeTable::Create(16, f, 66000, &table).ok());
    hash.Add(table->cos_row(65530), 6 * 8 * 4);
    hash.Add(table->sin_row(0), 6 * 8 * 4);
  }
  {
    const std::vector<float> c = SpecialValues(6 * 8, 23), s = SpecialValues(6 * 8, 24);
    CosSinCache cache;
    cache.kind = CosSinCache::Kind::kPerToken;
    cache.cos = c.data();
    cache.sin = s.data();
    std::vector<float> q = SpecialValues(2 * 3 * 1 * 16, 25);
    RopeTensors t;
    t.q = TensorBSHD(q.data(), 2, 3, 1, 16);
    RopeParams p;
    p.source = CosSinSource::Cache(cache);
    EXPECT_TRUE(ApplyRope(t, p).ok());
    hash.Add(q.data(), q.size() * 4);
  }
  for (double x_scale : {1.0, 2.5, 1e300, 0.0})
    for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
      std::vector<float> x = SpecialValues(6 * 20, 26);
      std::vector<uint16_t> bits(x.size());
      void* data = x.data();
      if (dtype != DType::kF32) {
        EXPECT_TRUE(ConvertFromF32(x.data(), x.size(), dtype, bits.data()).ok());
        data = bits.data();
      }
      SinusoidalParams sp;
      sp.x_scale = x_scale;
      sp.positions = Positions::Ids(ids.data());
      EXPECT_TRUE(AddSinusoidal(sp, EmbeddingBSD(data, dtype, 2, 3, 20)).ok());
      hash.Add(data, x.size() * DTypeSize(dtype));
    }
  return hash.h;
}

TEST(CrossArchHashTest, EveryTargetProducesTheExpectedHash) {
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    const uint64_t h = BatteryHash();
    std::printf("hash %s = 0x%016llx\n", hwy::TargetName(target), static_cast<unsigned long long>(h));
    EXPECT_EQ(h, kExpectedHash) << hwy::TargetName(target);
    const uint64_t special = SpecialBatteryHash();
    std::printf("hash %s special values = 0x%016llx\n", hwy::TargetName(target),
                static_cast<unsigned long long>(special));
    EXPECT_EQ(special, kExpectedSpecialHash) << hwy::TargetName(target) << " (special values)";
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
}  // namespace posenc
