// The cross-architecture hash cases, one list for both readers: tests/digest_test.cc checks each
// case's digest against the reviewed file tests/data/rope_digests.txt (name and parameters are
// recorded there too), tests/hash_test.cc folds all of them, in this order, into the two
// whole-battery hashes. RoPE in both pair layouts, partial rotary, inverse, both arithmetics,
// positions up to 2^24, tables, f32 / bf16 / f16, every sinusoidal convention and spacing, and a
// battery of special values. Inputs come from tests/hash_util.h (no libm, no <random>), so they
// are the same on every architecture.
#ifndef POSENC_TESTS_HASH_CASES_H_
#define POSENC_TESTS_HASH_CASES_H_

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "posenc/half.h"
#include "posenc/rope.h"
#include "posenc/sinusoidal.h"
#include "tests/hash_util.h"

namespace posenc {
namespace test {

// One case: a call (or a few on one buffer) whose output bytes `run` feeds the hasher.
struct Case {
  std::string name;
  std::string params;  // one line, no tabs: what the case runs
  std::function<void(Hasher&)> run;
};

inline const char* PairsName(PairLayout p) { return p == PairLayout::kHalf ? "half" : "interleaved"; }
inline const char* TypeName(DType d) { return d == DType::kF32 ? "f32" : d == DType::kBF16 ? "bf16" : "f16"; }
inline std::string Num(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

// The position ids of the battery (2 x 6 tokens) and of the special-value cases.
inline const std::vector<int64_t>& BatteryIds() {
  static const std::vector<int64_t> ids = {0, 1, 7, 4000, 65535, 131071, 9999999,
                                           (int64_t{1} << 24) - 1, int64_t{1} << 24, -3, 123456, 2};
  return ids;
}
inline const std::vector<int64_t>& SpecialIds() {
  static const std::vector<int64_t> ids = {0, 1, 3, 100, 4000, 65535};
  return ids;
}

// Special values, where fallbacks and architectures part ways first: Inf, NaN (quiet and
// signalling, both signs), overflowing values, subnormals, signed zeros, planted every third
// element of the generator's values.
inline std::vector<float> SpecialValues(size_t n, uint32_t seed) {
  std::vector<float> v = Values(n, seed);
  const uint32_t specials[] = {0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x7FA00001u,
                               0xFF812345u, 0x7F7AE148u /* 3.33e38 */, 0xFF70A3D7u /* -3.2e38 */,
                               0x000116C2u /* 1e-40 */, 0x80000001u,
                               0x00000000u, 0x80000000u};
  for (size_t i = 0; i < n; i += 3) std::memcpy(&v[i], &specials[(i / 3) % 12], 4);
  return v;
}

inline void AddRopeF32Cases(std::vector<Case>& cases) {
  for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
    for (bool inverse : {false, true})
      for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32})
        for (int64_t rotary : {0, 40}) {
          const double base = rotary ? 500000.0 : 10000.0, factor = rotary ? 1.25 : 1.0;
          const char* arith = a == RotationArithmetic::kF64 ? "f64" : "f32";
          Case c;
          c.name = std::string("rope.f32.") + PairsName(pairs) + (inverse ? ".inverse" : ".forward") +
                   ".arith_" + arith + (rotary ? ".partial40" : ".full");
          c.params = std::string("q 2x6x3x72 k 2x6x1x72 values(11,12) pairs ") + PairsName(pairs) +
                     " inverse " + (inverse ? "1" : "0") + " arithmetic " + arith + " rotary_dim " +
                     std::to_string(rotary) + " base " + Num(base) + " attention_factor " +
                     Num(factor) + " ids battery";
          c.run = [=](Hasher& h) {
            std::vector<float> q = Values(2 * 6 * 3 * 72, 11), k = Values(2 * 6 * 1 * 72, 12);
            RopeTensors t;
            t.q = TensorBSHD(q.data(), 2, 6, 3, 72);
            t.k = TensorBSHD(k.data(), 2, 6, 1, 72);
            RopeParams p;
            p.pairs = pairs;
            p.inverse = inverse;
            p.arithmetic = a;
            p.rotary_dim = rotary;
            p.freqs.base = base;
            p.freqs.attention_factor = factor;
            p.positions = Positions::Ids(BatteryIds().data());
            EXPECT_TRUE(ApplyRope(t, p).ok());
            h.Add(q.data(), q.size() * 4);
            h.Add(k.data(), k.size() * 4);
          };
          cases.push_back(c);
        }
  cases.push_back({"rope.table.base1e6", "RopeTable rotary_dim 64 base 1000000 max_positions 5000: cos, sin rows",
                   [](Hasher& h) {
                     std::shared_ptr<const RopeTable> table;
                     Frequencies f;
                     f.base = 1000000.0;
                     EXPECT_TRUE(RopeTable::Create(64, f, 5000, &table).ok());
                     h.Add(table->cos_row(0), 5000 * 32 * 4);
                     h.Add(table->sin_row(0), 5000 * 32 * 4);
                   }});
  for (DType dtype : {DType::kBF16, DType::kF16})
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved}) {
      Case c;
      c.name = std::string("rope.") + TypeName(dtype) + "." + PairsName(pairs);
      c.params = std::string("q 2x6x4x34 ") + TypeName(dtype) + " values(13) pairs " +
                 PairsName(pairs) + " base 10000 ids battery";
      c.run = [=](Hasher& h) {
        const std::vector<float> v = Values(2 * 6 * 4 * 34, 13);
        std::vector<uint16_t> bits(v.size());
        EXPECT_TRUE(ConvertFromF32(v.data(), v.size(), dtype, bits.data()).ok());
        RopeTensors t;
        t.q = TensorBSHD(bits.data(), dtype, 2, 6, 4, 34);
        RopeParams p;
        p.pairs = pairs;
        p.positions = Positions::Ids(BatteryIds().data());
        EXPECT_TRUE(ApplyRope(t, p).ok());
        h.Add(bits.data(), bits.size() * 2);
      };
      cases.push_back(c);
    }
}

inline void AddSinusoidalCases(std::vector<Case>& cases) {
  const std::pair<SinusoidalLayout, const char*> layouts[] = {
      {SinusoidalLayout::kInterleaved, "interleaved"},
      {SinusoidalLayout::kConcatSinCos, "sin_cos"},
      {SinusoidalLayout::kConcatCosSin, "cos_sin"}};
  for (const auto& [layout, lname] : layouts)
    for (FrequencySpacing spacing : {FrequencySpacing::kPaper, FrequencySpacing::kTensor2Tensor}) {
      const std::string sname = spacing == FrequencySpacing::kPaper ? "paper" : "t2t";
      const std::string common = std::string("2x6x66 layout ") + lname + " spacing " + sname +
                                 " x_scale 2 position_offset 2 ids battery";
      auto params = [layout = layout, spacing] {
        SinusoidalParams p;
        p.layout = layout;
        p.spacing = spacing;
        p.positions = Positions::Ids(BatteryIds().data());
        p.x_scale = 2.0;
        p.position_offset = 2;
        return p;
      };
      const std::string stem = std::string("sinusoidal.") + lname + "." + sname;
      cases.push_back({stem + ".write_f32", "WriteSinusoidal f32 " + common, [=](Hasher& h) {
                         std::vector<float> table(2 * 6 * 66);
                         EXPECT_TRUE(WriteSinusoidal(params(), EmbeddingBSD(table.data(), 2, 6, 66)).ok());
                         h.Add(table.data(), table.size() * 4);
                       }});
      cases.push_back({stem + ".add_f32", "AddSinusoidal f32 values(14) " + common, [=](Hasher& h) {
                         std::vector<float> x = Values(2 * 6 * 66, 14);
                         EXPECT_TRUE(AddSinusoidal(params(), EmbeddingBSD(x.data(), 2, 6, 66)).ok());
                         h.Add(x.data(), x.size() * 4);
                       }});
      cases.push_back({stem + ".write_bf16", "WriteSinusoidal bf16 " + common, [=](Hasher& h) {
                         std::vector<uint16_t> b(2 * 6 * 66);
                         EXPECT_TRUE(WriteSinusoidal(params(), EmbeddingBSD(b.data(), DType::kBF16, 2, 6, 66)).ok());
                         h.Add(b.data(), b.size() * 2);
                       }});
    }
}

// Special values through every path (names start with "special."): overflowing rotations and adds,
// attention factors that overflow or vanish (Inf * 0 makes a NaN whose sign differs between x86
// and Arm), tables and caches holding Inf/NaN.
inline void AddSpecialCases(std::vector<Case>& cases) {
  for (double factor : {1.0, 0.0, 1e39, 1e-42})
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
      for (bool inverse : {false, true}) {
        const std::string tail = std::string(" pairs ") + PairsName(pairs) + " inverse " +
                                 (inverse ? "1" : "0") + " attention_factor " + Num(factor) +
                                 " ids special";
        const std::string stem = std::string("special.") + PairsName(pairs) +
                                 (inverse ? ".inverse" : ".forward") + ".factor_" + Num(factor);
        for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32}) {
          const char* arith = a == RotationArithmetic::kF64 ? "f64" : "f32";
          cases.push_back({stem + ".f32.arith_" + arith,
                           std::string("q 2x3x2x18 f32 special(21) rotary_dim 16 arithmetic ") + arith + tail,
                           [=](Hasher& h) {
                             std::vector<float> q = SpecialValues(2 * 3 * 2 * 18, 21);
                             RopeTensors t;
                             t.q = TensorBSHD(q.data(), 2, 3, 2, 18);
                             RopeParams p;
                             p.pairs = pairs;
                             p.inverse = inverse;
                             p.arithmetic = a;
                             p.rotary_dim = 16;
                             p.freqs.attention_factor = factor;
                             p.positions = Positions::Ids(SpecialIds().data());
                             EXPECT_TRUE(ApplyRope(t, p).ok());
                             h.Add(q.data(), q.size() * 4);
                           }});
        }
        for (DType dtype : {DType::kBF16, DType::kF16}) {
          cases.push_back({stem + "." + TypeName(dtype),
                           std::string("q 2x3x2x18 ") + TypeName(dtype) + " special(22)" + tail,
                           [=](Hasher& h) {
                             const std::vector<float> v = SpecialValues(2 * 3 * 2 * 18, 22);
                             std::vector<uint16_t> bits(v.size());
                             EXPECT_TRUE(ConvertFromF32(v.data(), v.size(), dtype, bits.data()).ok());
                             RopeTensors t;
                             t.q = TensorBSHD(bits.data(), dtype, 2, 3, 2, 18);
                             RopeParams p;
                             p.pairs = pairs;
                             p.inverse = inverse;
                             p.freqs.attention_factor = factor;
                             p.positions = Positions::Ids(SpecialIds().data());
                             EXPECT_TRUE(ApplyRope(t, p).ok());
                             h.Add(bits.data(), bits.size() * 2);
                           }});
        }
      }
  for (double factor : {1e39, 1e-42}) {
    cases.push_back({"special.table.factor_" + Num(factor),
                     "RopeTable rotary_dim 16 base 10000 max_positions 66000 attention_factor " +
                         Num(factor) + ": cos rows 65530.., sin rows 0..5",
                     [=](Hasher& h) {
                       Frequencies f;
                       f.attention_factor = factor;
                       std::shared_ptr<const RopeTable> table;
                       EXPECT_TRUE(RopeTable::Create(16, f, 66000, &table).ok());
                       h.Add(table->cos_row(65530), 6 * 8 * 4);
                       h.Add(table->sin_row(0), 6 * 8 * 4);
                     }});
  }
  cases.push_back({"special.per_token_cache", "q 2x3x1x16 f32 special(25), per-token cache special(23, 24)",
                   [](Hasher& h) {
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
                     h.Add(q.data(), q.size() * 4);
                   }});
  for (double x_scale : {1.0, 2.5, 1e300, 0.0})
    for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
      cases.push_back({"special.sinusoidal_add.x_scale_" + Num(x_scale) + "." + TypeName(dtype),
                       std::string("AddSinusoidal 2x3x20 ") + TypeName(dtype) + " special(26) x_scale " +
                           Num(x_scale) + " ids special",
                       [=](Hasher& h) {
                         std::vector<float> x = SpecialValues(6 * 20, 26);
                         std::vector<uint16_t> bits(x.size());
                         void* data = x.data();
                         if (dtype != DType::kF32) {
                           EXPECT_TRUE(ConvertFromF32(x.data(), x.size(), dtype, bits.data()).ok());
                           data = bits.data();
                         }
                         SinusoidalParams sp;
                         sp.x_scale = x_scale;
                         sp.positions = Positions::Ids(SpecialIds().data());
                         EXPECT_TRUE(AddSinusoidal(sp, EmbeddingBSD(data, dtype, 2, 3, 20)).ok());
                         h.Add(data, x.size() * DTypeSize(dtype));
                       }});
    }
}

// Every case, in the order hash_test folds them: the RoPE / table / half / sinusoidal battery,
// then the special values.
inline std::vector<Case> AllHashCases() {
  std::vector<Case> cases;
  AddRopeF32Cases(cases);
  AddSinusoidalCases(cases);
  AddSpecialCases(cases);
  return cases;
}

// Whether a case belongs to the special-value battery.
inline bool IsSpecialCase(const Case& c) { return c.name.rfind("special.", 0) == 0; }

}  // namespace test
}  // namespace posenc

#endif  // POSENC_TESTS_HASH_CASES_H_
