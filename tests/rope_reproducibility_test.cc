// Bitwise reproducibility (docs/math.md §7): a battery of RoPE calls must give the same bits
// on every SIMD target this CPU runs (the scalar fallback included), for 1, 2 and 8 threads, and
// for the on-the-fly and table paths. Special values (Inf, NaN, subnormals, near-FLT_MAX) are in
// the inputs on purpose: they are where conversions and fallbacks differ first.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hwy/targets.h"
#include "posenc/half.h"
#include "posenc/rope.h"
#include "posenc/sinusoidal.h"
#include "tests/rope_test_util.h"

namespace posenc {
namespace {

struct BatteryCase {
  std::string name;
  int64_t batch, seq, heads, head_dim, rotary_dim;
  PairLayout pairs;
  bool inverse;
  std::vector<int64_t> ids;  // [batch, seq]
  double base, factor;
};

std::vector<BatteryCase> Battery() {
  const int64_t big = int64_t{1} << 24;
  std::vector<BatteryCase> cases;
  for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved}) {
    for (bool inverse : {false, true}) {
      const std::string suffix = std::string(PairLayoutName(pairs)) + (inverse ? "_inv" : "");
      cases.push_back({"llama_" + suffix, 1, 6, 5, 128, 128, pairs, inverse,
                       {0, 1, 4000, 131071, big - 1, big}, 500000.0, 1.0});
      cases.push_back({"partial_" + suffix, 2, 3, 3, 80, 20, pairs, inverse,
                       {-7, 3, 100000, 5, 6, 12345678}, 10000.0, 1.1});
      cases.push_back({"odd_" + suffix, 1, 4, 2, 34, 34, pairs, inverse, {9, 99, 999, 9999},
                       10000.0, 1.0});
      cases.push_back({"gptj_" + suffix, 1, 5, 3, 256, 64, pairs, inverse,
                       {0, 13107, 2048, 77, 19999}, 10000.0, 0.8});
    }
  }
  return cases;
}

// Inputs: random normals with special values planted at fixed places.
std::vector<float> BatteryInput(const BatteryCase& c) {
  std::vector<float> x(static_cast<size_t>(c.batch * c.seq * c.heads * c.head_dim));
  test::FillNormal(x.data(), x.size(), 4242);
  const float specials[] = {std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::denorm_min(),
                            1e-40f,
                            3.0e38f,
                            -3.3e38f,
                            0.0f,
                            -0.0f};
  for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); ++i) {
    x[(i * 37 + 3) % x.size()] = specials[i];
  }
  return x;
}

enum class Path { kOnTheFly, kTable };

// Tables start at position 0 and hold every row up to the largest id: keep them small.
bool TableFriendly(const BatteryCase& c) {
  return *std::min_element(c.ids.begin(), c.ids.end()) >= 0 &&
         *std::max_element(c.ids.begin(), c.ids.end()) < 20000;
}

RopeParams ParamsOf(const BatteryCase& c, int max_threads, RotationArithmetic a) {
  RopeParams p;
  p.pairs = c.pairs;
  p.inverse = c.inverse;
  p.rotary_dim = c.rotary_dim;
  p.freqs.base = c.base;
  p.freqs.attention_factor = c.factor;
  p.positions = Positions::Ids(c.ids.data());
  p.exec.max_threads = max_threads;
  p.arithmetic = a;
  return p;
}

std::vector<float> RunBattery(int max_threads, Path path) {
  std::vector<float> all;
  for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32})
  for (const BatteryCase& c : Battery()) {
    std::vector<float> q = BatteryInput(c);
    std::vector<float> out(q.size());
    RopeTensors t;
    t.q = TensorBSHD(q.data(), c.batch, c.seq, c.heads, c.head_dim);
    t.q_out = TensorBSHD(out.data(), c.batch, c.seq, c.heads, c.head_dim);
    RopeParams p = ParamsOf(c, max_threads, a);
    std::shared_ptr<const RopeTable> table;
    if (path == Path::kTable) {
      if (!TableFriendly(c)) continue;
      const int64_t max_pos = *std::max_element(c.ids.begin(), c.ids.end()) + 1;
      EXPECT_TRUE(RopeTable::Create(c.rotary_dim, p.freqs, max_pos, &table).ok());
      p.source = CosSinSource::Table(table.get());
    }
    const Status st = ApplyRope(t, p);
    EXPECT_TRUE(st.ok()) << c.name << ": " << st.message();
    all.insert(all.end(), out.begin(), out.end());
  }
  return all;
}

// Rows of the table path are compared with the on-the-fly rows of the same cases.
std::vector<float> OnTheFlyRowsOfTableCases(int max_threads) {
  std::vector<float> all;
  for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32})
  for (const BatteryCase& c : Battery()) {
    if (!TableFriendly(c)) continue;
    std::vector<float> q = BatteryInput(c);
    RopeTensors t;
    t.q = TensorBSHD(q.data(), c.batch, c.seq, c.heads, c.head_dim);
    EXPECT_TRUE(ApplyRope(t, ParamsOf(c, max_threads, a)).ok());
    all.insert(all.end(), q.begin(), q.end());
  }
  return all;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

TEST(RopeReproducibilityTest, BitwiseIdenticalAcrossTargetsThreadsAndPaths) {
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_GE(targets.size(), 2u) << "need at least one SIMD target and the scalar fallback";
  std::vector<float> expected;
  std::string expected_from;
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    for (int threads : {1, 2, 8}) {
      const std::vector<float> got = RunBattery(threads, Path::kOnTheFly);
      if (expected.empty()) {
        expected = got;
        expected_from = hwy::TargetName(target);
        continue;
      }
      EXPECT_TRUE(SameBits(expected, got))
          << hwy::TargetName(target) << " with " << threads << " threads differs from "
          << expected_from;
    }
    EXPECT_TRUE(SameBits(RunBattery(1, Path::kTable), OnTheFlyRowsOfTableCases(1)))
        << hwy::TargetName(target) << ": table path differs from on-the-fly";
    EXPECT_TRUE(SameBits(RunBattery(2, Path::kTable), OnTheFlyRowsOfTableCases(2)))
        << hwy::TargetName(target) << ": table path differs from on-the-fly (2 threads)";
  }
  hwy::SetSupportedTargetsForTest(0);
}

// Sinusoidal tables and fused adds: every convention and spacing, positions up to 2^24.
std::vector<float> RunSinusoidalBattery(int max_threads) {
  std::vector<float> all;
  const std::vector<int64_t> ids = {0, 1, 4000, 131071, (int64_t{1} << 24) - 1, int64_t{1} << 24,
                                    -12345, 777};
  for (SinusoidalLayout layout : {SinusoidalLayout::kInterleaved, SinusoidalLayout::kConcatSinCos,
                                  SinusoidalLayout::kConcatCosSin})
    for (FrequencySpacing spacing : {FrequencySpacing::kPaper, FrequencySpacing::kTensor2Tensor})
      for (int64_t d : {6, 130}) {
        SinusoidalParams p;
        p.layout = layout;
        p.spacing = spacing;
        p.positions = Positions::Ids(ids.data());
        p.exec.max_threads = max_threads;
        p.x_scale = 2.5;
        const int64_t n = static_cast<int64_t>(ids.size());
        std::vector<float> table(static_cast<size_t>(n * d));
        EXPECT_TRUE(WriteSinusoidal(p, EmbeddingBSD(table.data(), 2, n / 2, d)).ok());
        std::vector<float> x(table.size());
        test::FillNormal(x.data(), x.size(), 77);
        x[3] = std::numeric_limits<float>::infinity();
        x[5] = 3.3e38f;
        EXPECT_TRUE(AddSinusoidal(p, EmbeddingBSD(x.data(), 2, n / 2, d)).ok());
        all.insert(all.end(), table.begin(), table.end());
        all.insert(all.end(), x.begin(), x.end());
      }
  return all;
}

// Runs battery(threads) on every target with 1, 2 and 8 threads; all outputs must be the same bits.
void ExpectSameEverywhere(std::vector<float> (*battery)(int)) {
  std::vector<float> expected;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (int threads : {1, 2, 8}) {
      const std::vector<float> got = battery(threads);
      if (expected.empty()) expected = got;
      EXPECT_TRUE(SameBits(expected, got)) << hwy::TargetName(target) << " threads " << threads;
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST(RopeReproducibilityTest, SinusoidalBitwiseIdenticalAcrossTargetsAndThreads) {
  ExpectSameEverywhere(RunSinusoidalBattery);
}

// bf16 / f16 RoPE and sinusoidal adds (bits widened to f32 for the comparison).
std::vector<float> RunHalfBattery(int max_threads) {
  std::vector<float> all;
  const std::vector<int64_t> ids = {0, 1, 4000, 131071, (int64_t{1} << 24) - 1, int64_t{1} << 24};
  for (DType dtype : {DType::kBF16, DType::kF16})
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved}) {
      std::vector<float> values(2 * 3 * 4 * 40);
      test::FillNormal(values.data(), values.size(), 123);
      values[7] = std::numeric_limits<float>::infinity();
      values[11] = 70000.f;  // overflows f16
      std::vector<uint16_t> bits(values.size());
      EXPECT_TRUE(ConvertFromF32(values.data(), values.size(), dtype, bits.data()).ok());
      RopeTensors t;
      t.q = TensorBSHD(bits.data(), dtype, 2, 3, 4, 40);
      RopeParams p;
      p.pairs = pairs;
      p.rotary_dim = 36;
      p.positions = Positions::Ids(ids.data());
      p.exec.max_threads = max_threads;
      EXPECT_TRUE(ApplyRope(t, p).ok());
      SinusoidalParams sp;
      sp.positions = Positions::Ids(ids.data());
      sp.exec.max_threads = max_threads;
      EXPECT_TRUE(AddSinusoidal(sp, EmbeddingBSD(bits.data(), dtype, 2, 3, 160)).ok());
      std::vector<float> widened(bits.size());
      EXPECT_TRUE(ConvertToF32(bits.data(), dtype, bits.size(), widened.data()).ok());
      all.insert(all.end(), widened.begin(), widened.end());
    }
  return all;
}

TEST(RopeReproducibilityTest, HalfPrecisionBitwiseIdenticalAcrossTargetsAndThreads) {
  ExpectSameEverywhere(RunHalfBattery);
}

// Special values where targets used to part ways (issue 13 items 2 and 11): Inf, NaN (quiet,
// signalling, both signs), overflowing products and rotations, subnormals; attention factors
// that make cos/sin overflow f32, underflow to subnormals, or vanish (Inf * 0 = NaN, whose sign
// x86 and Arm disagree on); x_scale that overflows the sinusoidal add; caches holding Inf/NaN.
// With clang the fallback target is EMU128, whose DemoteTo clamped Inf and overflow to FLT_MAX.
std::vector<float> SpecialInputs(size_t n, uint32_t seed) {
  std::vector<float> x(n);
  test::FillNormal(x.data(), n, seed);
  const uint32_t nan_bits[] = {0x7FC00000u, 0xFFC00000u, 0x7FA00001u, 0xFF812345u, 0x7F800001u};
  const float specials[] = {INFINITY, -INFINITY, 3.3e38f, -3.2e38f, 1e-40f, -1e-45f, 0.f, -0.f,
                            1e-39f, 2.9e38f};
  for (size_t i = 0; i < n; ++i) {
    if (i % 3 == 0) x[i] = specials[(i / 3) % (sizeof(specials) / sizeof(specials[0]))];
    if (i % 7 == 1) std::memcpy(&x[i], &nan_bits[(i / 7) % 5], 4);
  }
  return x;
}

std::vector<float> RunSpecialBattery(int max_threads) {
  std::vector<float> all;
  auto append_bits = [&all](const void* data, size_t bytes) {  // raw bits, any dtype
    std::vector<float> v((bytes + 3) / 4, 0.f);
    std::memcpy(v.data(), data, bytes);
    all.insert(all.end(), v.begin(), v.end());
  };
  const std::vector<int64_t> ids = {0, 1, 3, 100, 4000, 65535};  // 0: sin = 0 exactly
  for (double factor : {1.0, 0.0, 1e39, 1e-42, -1.0})
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
      for (bool inverse : {false, true}) {
        for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32}) {
          std::vector<float> q = SpecialInputs(2 * 3 * 2 * 18, 9);
          RopeTensors t;
          t.q = TensorBSHD(q.data(), 2, 3, 2, 18);
          RopeParams p;
          p.pairs = pairs;
          p.inverse = inverse;
          p.arithmetic = a;
          p.rotary_dim = 16;
          p.freqs.attention_factor = factor;
          p.positions = Positions::Ids(ids.data());
          p.exec.max_threads = max_threads;
          EXPECT_TRUE(ApplyRope(t, p).ok());
          append_bits(q.data(), q.size() * 4);
        }
        for (DType dtype : {DType::kBF16, DType::kF16}) {
          const std::vector<float> v = SpecialInputs(2 * 3 * 2 * 18, 10);
          std::vector<uint16_t> bits(v.size());
          EXPECT_TRUE(ConvertFromF32(v.data(), v.size(), dtype, bits.data()).ok());
          RopeTensors t;
          t.q = TensorBSHD(bits.data(), dtype, 2, 3, 2, 18);
          RopeParams p;
          p.pairs = pairs;
          p.inverse = inverse;
          p.freqs.attention_factor = factor;
          p.positions = Positions::Ids(ids.data());
          p.exec.max_threads = max_threads;
          EXPECT_TRUE(ApplyRope(t, p).ok());
          append_bits(bits.data(), bits.size() * 2);
        }
      }
  // Tables whose rows overflow f32 (factor 1e39) or are subnormal (1e-42).
  for (double factor : {1e39, 1e-42}) {
    Frequencies f;
    f.attention_factor = factor;
    std::shared_ptr<const RopeTable> table;
    EXPECT_TRUE(RopeTable::Create(16, f, 4096, &table).ok());
    append_bits(table->cos_row(4090), 6 * 8 * 4);
    append_bits(table->sin_row(0), 6 * 8 * 4);
    std::vector<float> q = SpecialInputs(2 * 3 * 2 * 16, 11);
    RopeTensors t;
    t.q = TensorBSHD(q.data(), 2, 3, 2, 16);
    RopeParams p;
    const std::vector<int64_t> table_ids = {0, 1, 3, 100, 4000, 4095};
    p.positions = Positions::Ids(table_ids.data());
    p.source = CosSinSource::Table(table.get());
    p.exec.max_threads = max_threads;
    EXPECT_TRUE(ApplyRope(t, p).ok());
    append_bits(q.data(), q.size() * 4);
  }
  // Caches holding Inf, NaN and huge values, f32 and f16.
  for (DType cache_dtype : {DType::kF32, DType::kF16}) {
    const std::vector<float> cv = SpecialInputs(6 * 8, 12), sv = SpecialInputs(6 * 8, 13);
    std::vector<uint16_t> ch(cv.size()), sh(sv.size());
    EXPECT_TRUE(ConvertFromF32(cv.data(), cv.size(), DType::kF16, ch.data()).ok());
    EXPECT_TRUE(ConvertFromF32(sv.data(), sv.size(), DType::kF16, sh.data()).ok());
    CosSinCache c;
    c.kind = CosSinCache::Kind::kPerToken;
    c.dtype = cache_dtype;
    c.cos = cache_dtype == DType::kF32 ? static_cast<const void*>(cv.data()) : ch.data();
    c.sin = cache_dtype == DType::kF32 ? static_cast<const void*>(sv.data()) : sh.data();
    std::vector<float> q = SpecialInputs(2 * 3 * 1 * 16, 14);
    RopeTensors t;
    t.q = TensorBSHD(q.data(), 2, 3, 1, 16);
    RopeParams p;
    p.source = CosSinSource::Cache(c);
    p.exec.max_threads = max_threads;
    EXPECT_TRUE(ApplyRope(t, p).ok());
    append_bits(q.data(), q.size() * 4);
  }
  // Sinusoidal adds: x_scale overflowing the double product's f32 rounding, 0 (Inf * 0), NaN x.
  for (double x_scale : {1.0, 2.5, 1e300, 0.0, -1e-300})
    for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
      const std::vector<float> v = SpecialInputs(6 * 20, 15);
      std::vector<uint16_t> bits(v.size());
      std::vector<float> f = v;
      void* data = f.data();
      if (dtype != DType::kF32) {
        EXPECT_TRUE(ConvertFromF32(v.data(), v.size(), dtype, bits.data()).ok());
        data = bits.data();
      }
      SinusoidalParams sp;
      sp.x_scale = x_scale;
      sp.positions = Positions::Ids(ids.data());
      sp.exec.max_threads = max_threads;
      EXPECT_TRUE(AddSinusoidal(sp, EmbeddingBSD(data, dtype, 2, 3, 20)).ok());
      append_bits(data, v.size() * DTypeSize(dtype));
    }
  return all;
}

TEST(RopeReproducibilityTest, SpecialValuesBitwiseIdenticalAcrossTargetsAndThreads) {
  ExpectSameEverywhere(RunSpecialBattery);
}

// Every NaN a rotation produces is the canonical quiet NaN, on every target: f32 0x7FC00000,
// f16 0x7E00, bf16 0x7FC0 (issue 13 item 11: an inverse, interleaved, attention-factor-0 f16
// case with Inf inputs gave 0xfe00 on AVX2 and 0x7e00 on SSSE3).
TEST(RopeReproducibilityTest, NaNOutputsAreCanonical) {
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16})
      for (double factor : {0.0, 1.0})
        for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
          for (bool inverse : {false, true}) {
            const std::vector<float> v = SpecialInputs(1 * 4 * 1 * 16, 21);
            std::vector<float> f = v;
            std::vector<uint16_t> bits(v.size());
            void* data = f.data();
            if (dtype != DType::kF32) {
              EXPECT_TRUE(ConvertFromF32(v.data(), v.size(), dtype, bits.data()).ok());
              data = bits.data();
            }
            const std::vector<int64_t> ids = {0, 1, 2, 1000};
            RopeTensors t;
            t.q = TensorBSHD(data, dtype, 1, 4, 1, 16);
            RopeParams p;
            p.pairs = pairs;
            p.inverse = inverse;
            p.freqs.attention_factor = factor;
            p.positions = Positions::Ids(ids.data());
            ASSERT_TRUE(ApplyRope(t, p).ok());
            int nans = 0;
            for (size_t i = 0; i < v.size(); ++i) {
              uint32_t b32;
              std::memcpy(&b32, &f[i], 4);
              const bool is_nan = dtype == DType::kF32 ? std::isnan(f[i])
                                                       : dtype == DType::kF16
                                                             ? (bits[i] & 0x7FFF) > 0x7C00
                                                             : (bits[i] & 0x7FFF) > 0x7F80;
              if (!is_nan) continue;
              ++nans;
              if (dtype == DType::kF32) {
                EXPECT_EQ(b32, 0x7FC00000u) << hwy::TargetName(target) << " element " << i;
              } else {
                EXPECT_EQ(bits[i], dtype == DType::kF16 ? 0x7E00 : 0x7FC0)
                    << hwy::TargetName(target) << " " << DTypeName(dtype) << " factor " << factor
                    << (inverse ? " inverse " : " ") << PairLayoutName(pairs) << " element " << i;
              }
            }
            EXPECT_GT(nans, 0);
          }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// A caller's cache may hold finite values above 1: then finite inputs can overflow both products
// of a y output with opposite signs (y c + x s = -Inf + Inf = NaN, x86's default NaN 0xFFC00000),
// while the x output overflows too (Inf - -Inf): the probe of the x outputs alone must still
// send the head to canonicalisation (ProbeX in lib/kernels/rope-inl.h).
TEST(RopeReproducibilityTest, NaNFromOverflowingCacheProductsIsCanonical) {
  const float cos_sin[8] = {2.0f, 2.0f, 2.0f, 2.0f, 2.0f, 2.0f, 2.0f, 2.0f};
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (RotationArithmetic a : {RotationArithmetic::kF32, RotationArithmetic::kF64})
      for (bool out_of_place : {false, true}) {
        std::vector<float> q(16), out(16, -7.0f);
        for (int i = 0; i < 8; ++i) {
          q[static_cast<size_t>(i)] = 3e38f;       // x
          q[static_cast<size_t>(8 + i)] = -3e38f;  // y
        }
        CosSinCache c;
        c.kind = CosSinCache::Kind::kPerToken;
        c.cos = cos_sin;
        c.sin = cos_sin;
        RopeTensors t;
        t.q = TensorBSHD(q.data(), 1, 1, 1, 16);
        if (out_of_place) t.q_out = TensorBSHD(out.data(), 1, 1, 1, 16);
        RopeParams p;
        p.arithmetic = a;
        p.source = CosSinSource::Cache(c);
        ASSERT_TRUE(ApplyRope(t, p).ok());
        // x outputs: +Inf. y outputs: with f32 products y c = -Inf and x s = +Inf, so their sum
        // is NaN (canonical once stored); double products do not overflow: exactly +0.
        const uint32_t want_y = a == RotationArithmetic::kF32 ? 0x7FC00000u : 0u;
        const std::vector<float>& o = out_of_place ? out : q;
        for (int i = 0; i < 16; ++i) {
          uint32_t b;
          std::memcpy(&b, &o[static_cast<size_t>(i)], 4);
          EXPECT_EQ(b, i < 8 ? 0x7F800000u : want_y)
              << hwy::TargetName(target) << (a == RotationArithmetic::kF32 ? " f32" : " f64")
              << " element " << i;
        }
      }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// A deliberately perturbed input must change the bits: the comparison above can fail.
}  // namespace
}  // namespace posenc
