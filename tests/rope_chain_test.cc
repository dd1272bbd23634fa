// RotationArithmetic::kFmaChain (lib/kernels/rope_chain-inl.h, docs/math.md section 9.7) on every
// SIMD target this CPU runs:
// - every output bit for bit the scalar oracle below: the chain written with std::fmaf on the
//   table's hi / lo rows for heads whose guard passes, kF64's double formula on the hi rows for
//   the others (a tiny pair, a zero pair, an Inf or a NaN planted in some heads), NaNs canonical;
//   so every target writes the same bits, and the chain really runs (random heads differ from
//   kF64's bits);
// - on-the-fly rows give the table's bits, caller caches the chain with lo parts 0;
// - within B = 2 ulp of the double reference (RopeTester, odd sizes, strides, misalignment, in
//   place and out), pairs down to the guard's binades included;
// - the table's lo rows: hi rows as a plain table's, hi + lo within 2^-48 of m cos(angle);
// - what refuses it (a table without lo rows, M-RoPE, vision RoPE, RerotateRope) says so and
//   writes nothing.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <limits>

#include "posenc/rope.h"
#include "posenc/shift.h"
#include "posenc/targets.h"
#include "posenc/vision.h"
#include "tests/rope_tester.h"
#include "tests/target_util.h"

namespace posenc {
namespace {

constexpr RotationArithmetic kChain = RotationArithmetic::kFmaChain;

using test::ForEachTarget;

std::shared_ptr<const RopeTable> Table(int64_t rotary_dim, const Frequencies& f, int64_t rows,
                                       RotationArithmetic a = kChain) {
  std::shared_ptr<const RopeTable> t;
  const Status st = RopeTable::Create(rotary_dim, f, rows, a, &t);
  EXPECT_TRUE(st.ok()) << st.message();
  return t;
}

uint32_t Bits(float v) { return test::F32Bits(v); }
float FromBits(uint32_t b) { return test::F32FromBits(b); }

// The chain's outputs of one pair (docs/math.md section 9.7), inverse with sh, sl negated.
void OracleChain(float x, float y, float ch, float sh, float cl, float sl, bool inverse, float* ox,
                 float* oy) {
  if (inverse) {
    sh = -sh;
    sl = -sl;
  }
  const float tx = x * cl - y * sl;  // -ffp-contract=off: separate roundings
  const float ty = y * cl + x * sl;
  *ox = std::fmaf(x, ch, std::fmaf(-y, sh, tx));
  *oy = std::fmaf(y, ch, std::fmaf(x, sh, ty));
}

// kF64's outputs: exact products, the sum rounded in double, then to f32.
void OracleF64(float x, float y, float c, float s, bool inverse, float* ox, float* oy) {
  if (inverse) s = -s;
  *ox = static_cast<float>(static_cast<double>(x) * c - static_cast<double>(y) * s);
  *oy = static_cast<float>(static_cast<double>(y) * c + static_cast<double>(x) * s);
}

// Whether the head's pairs all pass the guard (rope_chain-inl.h): a | b of |x|, |y|'s bits at
// least 2 * bits(2^-124), a and b below the infinity's.
bool GuardPasses(const float* head, int64_t half, bool interleaved) {
  for (int64_t i = 0; i < half; ++i) {
    const uint32_t a = Bits(head[interleaved ? 2 * i : i]) & 0x7FFFFFFFu;
    const uint32_t b = Bits(head[interleaved ? 2 * i + 1 : i + half]) & 0x7FFFFFFFu;
    if ((a | b) < 2u * (3u << 23) || std::max(a, b) >= 0x7F800000u) return false;
  }
  return true;
}

// The oracle over contiguous BSHD heads `in` (batch 1) with rows cos / sin / lo of each token:
// out receives the rotated heads (pass-through elements copied).
struct OracleRows {
  std::vector<float> ch, sh, cl, sl;  // tokens x half
};
// *chain_heads counts the heads the chain rotates, *differ the outputs of those where kF64's
// formula gives other bits.
std::vector<float> Oracle(const std::vector<float>& in, int64_t tokens, int64_t heads,
                          int64_t head_dim, int64_t rotary, bool interleaved, bool inverse,
                          const OracleRows& r, size_t* chain_heads = nullptr,
                          size_t* differ = nullptr) {
  std::vector<float> out = in;
  const int64_t half = rotary / 2;
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t h = 0; h < heads; ++h) {
      const float* x = in.data() + (t * heads + h) * head_dim;
      float* o = out.data() + (t * heads + h) * head_dim;
      const bool chain = GuardPasses(x, half, interleaved);
      if (chain && chain_heads != nullptr) ++*chain_heads;
      for (int64_t i = 0; i < half; ++i) {
        const int64_t ix = interleaved ? 2 * i : i, iy = interleaved ? 2 * i + 1 : i + half;
        const size_t k = static_cast<size_t>(t * half + i);
        if (chain) {
          OracleChain(x[ix], x[iy], r.ch[k], r.sh[k], r.cl[k], r.sl[k], inverse, &o[ix], &o[iy]);
          float fx, fy;
          OracleF64(x[ix], x[iy], r.ch[k], r.sh[k], inverse, &fx, &fy);
          if (differ != nullptr) *differ += (Bits(fx) != Bits(o[ix])) + (Bits(fy) != Bits(o[iy]));
        } else {
          OracleF64(x[ix], x[iy], r.ch[k], r.sh[k], inverse, &o[ix], &o[iy]);
        }
        for (int64_t j : {ix, iy}) {
          if (std::isnan(o[j])) o[j] = FromBits(0x7FC00000u);
        }
      }
    }
  return out;
}

// Random heads of several magnitudes with planted pairs: head 1 of token 2 a pair with M just
// above 2^-126, head 0 of token 3 an Inf, head 2 of token 4 a zero pair, head 1 of token 0 a
// NaN, head 0 of token 1 a pair with M = 1.5 * 2^-121 (passes: a | b >= 2 * bits(2^-124),
// which is bits(2^-121)).
std::vector<float> Inputs(int64_t tokens, int64_t heads, int64_t head_dim, int64_t rotary,
                          bool interleaved, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> v(-2.f, 2.f);
  std::uniform_int_distribution<int> e(-8, 8);
  std::vector<float> x(static_cast<size_t>(tokens * heads * head_dim));
  for (float& f : x) f = std::ldexp(v(rng), e(rng));
  const int64_t half = rotary / 2, last = half - 1;
  auto pair = [&](int64_t t, int64_t h, int64_t i, float a, float b) {
    if (t >= tokens || h >= heads) return;
    float* head = x.data() + (t * heads + h) * head_dim;
    head[interleaved ? 2 * i : i] = a;
    head[interleaved ? 2 * i + 1 : i + half] = b;
  };
  pair(2, 1, last, std::ldexp(1.3f, -126), -std::ldexp(1.1f, -127));
  pair(3, 0, 0, std::numeric_limits<float>::infinity(), 0.5f);
  pair(4, 2, half / 2, 0.0f, -0.0f);
  pair(0, 1, last, 1.0f, std::numeric_limits<float>::quiet_NaN());
  pair(1, 0, 0, std::ldexp(1.5f, -121), std::ldexp(1.25f, -125));
  return x;
}

OracleRows TableRows(const RopeTable& table, int64_t first, int64_t tokens) {
  OracleRows r;
  const int64_t half = table.rotary_dim() / 2;
  for (int64_t t = 0; t < tokens; ++t) {
    const int64_t p = first + t;
    r.ch.insert(r.ch.end(), table.cos_row(p), table.cos_row(p) + half);
    r.sh.insert(r.sh.end(), table.sin_row(p), table.sin_row(p) + half);
    r.cl.insert(r.cl.end(), table.cos_lo_row(p), table.cos_lo_row(p) + half);
    r.sl.insert(r.sl.end(), table.sin_lo_row(p), table.sin_lo_row(p) + half);
  }
  return r;
}

size_t DifferingBits(const std::vector<float>& a, const std::vector<float>& b) {
  size_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += Bits(a[i]) != Bits(b[i]);
  return n;
}

TEST(RopeChainTest, EveryTargetWritesTheOraclesBits) {
  constexpr int64_t kTokens = 5, kHeads = 3, kFirst = 37;
  Frequencies f;
  f.base = 500000.0;
  f.attention_factor = 0.875;
  ForEachTarget([&](const std::string&) {
    for (int64_t head_dim : {2, 6, 18, 64, 128, 136, 256})
      for (int64_t rotary : {head_dim, head_dim / 4 * 2})
        for (bool interleaved : {false, true})
          for (bool inverse : {false, true}) {
            if (rotary == 0 || (rotary == head_dim / 4 * 2 && rotary == head_dim)) continue;
            SCOPED_TRACE(::testing::Message() << "head_dim " << head_dim << " rotary " << rotary
                                              << (interleaved ? " interleaved" : " half")
                                              << (inverse ? " inverse" : " forward"));
            const auto table = Table(rotary, f, 64);
            const std::vector<float> in =
                Inputs(kTokens, kHeads, head_dim, rotary, interleaved, 7 + static_cast<uint32_t>(head_dim));
            size_t chain_heads = 0, differ = 0;
            const std::vector<float> want =
                Oracle(in, kTokens, kHeads, head_dim, rotary, interleaved, inverse,
                       TableRows(*table, kFirst, kTokens), &chain_heads, &differ);
            // Four planted heads take kF64 (the fifth planted pair passes), the others the
            // chain, which gives other bits than kF64 in some outputs once heads have 32 pairs.
            EXPECT_EQ(chain_heads, static_cast<size_t>(kTokens * kHeads - 4));
            if (rotary >= 64) {
              EXPECT_GT(differ, 0u);
            }
            RopeParams p;
            p.pairs = interleaved ? PairLayout::kInterleaved : PairLayout::kHalf;
            p.inverse = inverse;
            p.rotary_dim = rotary;
            p.arithmetic = kChain;
            p.positions = Positions::Offset(kFirst);
            p.freqs = f;
            for (bool from_table : {true, false}) {
              p.source = from_table ? CosSinSource::Table(table.get()) : CosSinSource::OnTheFly();
              // In place, and out of place into a buffer 1 float off its alignment.
              std::vector<float> q = in;
              RopeTensors t;
              t.q = TensorBSHD(q.data(), 1, kTokens, kHeads, head_dim);
              ASSERT_TRUE(ApplyRope(t, p).ok());
              EXPECT_EQ(DifferingBits(q, want), 0u) << (from_table ? "table" : "on the fly");
              std::vector<float> out(in.size() + 1, -3.0f);
              t.q = TensorBSHD(in.data(), 1, kTokens, kHeads, head_dim);
              t.q_out = TensorBSHD(out.data() + 1, 1, kTokens, kHeads, head_dim);
              ASSERT_TRUE(ApplyRope(t, p).ok());
              EXPECT_EQ(DifferingBits(std::vector<float>(out.begin() + 1, out.end()), want), 0u)
                  << (from_table ? "table" : "on the fly") << ", out of place";
              EXPECT_EQ(out[0], -3.0f);
            }
          }
  });
}

TEST(RopeChainTest, CallerCachesAreTheChainWithLoPartsZero) {
  constexpr int64_t kTokens = 6, kHeads = 2, kHeadDim = 40, kHalf = kHeadDim / 2;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> cos(kTokens * kHalf), sin(kTokens * kHalf);
  for (float& v : cos) v = u(rng);
  for (float& v : sin) v = u(rng);
  cos[3] = std::numeric_limits<float>::quiet_NaN();  // a non-finite cache value: canonical NaN
  OracleRows r{cos, sin, std::vector<float>(cos.size(), 0.0f), std::vector<float>(cos.size(), 0.0f)};
  ForEachTarget([&](const std::string&) {
    for (bool interleaved : {false, true}) {
      const std::vector<float> in = Inputs(kTokens, kHeads, kHeadDim, kHeadDim, interleaved, 3);
      const std::vector<float> want =
          Oracle(in, kTokens, kHeads, kHeadDim, kHeadDim, interleaved, false, r);
      std::vector<float> q = in;
      RopeTensors t;
      t.q = TensorBSHD(q.data(), 1, kTokens, kHeads, kHeadDim);
      RopeParams p;
      p.pairs = interleaved ? PairLayout::kInterleaved : PairLayout::kHalf;
      p.arithmetic = kChain;
      CosSinCache cache;
      cache.kind = CosSinCache::Kind::kPerToken;
      cache.cos = cos.data();
      cache.sin = sin.data();
      p.source = CosSinSource::Cache(cache);
      ASSERT_TRUE(ApplyRope(t, p).ok());
      EXPECT_EQ(DifferingBits(q, want), 0u) << (interleaved ? "interleaved" : "half");
    }
  });
}

TEST(RopeChainTest, WithinTwoUlpOfTheReference) {
  Frequencies f;
  f.base = 10000.0;
  f.attention_factor = 0.7;
  const auto table = Table(48, f, 1 << 16);
  ForEachTarget([&](const std::string& target) {
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
      for (bool inplace : {true, false}) {
        for (int64_t head_dim : {2, 10, 34, 64, 96, 1026}) {
          test::RopeTester t;
          t.batch(2).seq(5).heads(3).kv_heads(1).head_dim(head_dim).pairs(pairs).inplace(inplace)
              .arithmetic(kChain).offset(4000).lead(1).token_pad(3, 5)
              .label(target + " head_dim " + std::to_string(head_dim));
          EXPECT_EQ(t.Bound(), 2.0);
          t.Test();
        }
        // A table source with a partial rotary, attention factor 0.7, the table's last rows,
        // inverse, BHSD.
        test::RopeTester t;
        t.batch(2).seq(9).heads(3).kv_heads(2).head_dim(56).rotary_dim(48).pairs(pairs)
            .arithmetic(kChain).attention_factor(0.7).offset((1 << 16) - 9).inverse(true)
            .bhsd(true).inplace(inplace).lead(3).source(CosSinSource::Table(table.get()))
            .label(target + " table");
        t.Test();
      }
  });
}

// Pairs whose M lies in the binades the guard watches ([2^-126, 2^-121)): the guarded heads take
// kF64 and every head stays within 2 ulp (the unguarded chain reached 2.32 ulp in
// [2^-126, 2^-125), docs/performance.md section 3.29).
TEST(RopeChainTest, TinyPairsStayWithinTwoUlp) {
  constexpr int64_t kTokens = 64, kHeads = 4, kHeadDim = 128;
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> v(-1.f, 1.f);
  std::uniform_int_distribution<int> e(-126, -121);
  std::vector<float> in(kTokens * kHeads * kHeadDim);
  for (float& x : in) x = std::ldexp(1.0f + std::fabs(v(rng)), e(rng)) * (v(rng) < 0 ? -1.f : 1.f);
  ForEachTarget([&](const std::string&) {
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved}) {
      std::vector<float> q = in, copy = in;
      RopeTensors t, c;
      t.q = TensorBSHD(q.data(), 1, kTokens, kHeads, kHeadDim);
      c.q = TensorBSHD(copy.data(), 1, kTokens, kHeads, kHeadDim);
      RopeParams p;
      p.pairs = pairs;
      p.arithmetic = kChain;
      p.positions = Positions::Offset(1000);
      ASSERT_TRUE(ApplyRope(t, p).ok());
      std::vector<double> exact(in.size());
      ASSERT_TRUE(reference::ApplyRopeF64(c, p, exact.data(), nullptr).ok());
      EXPECT_LT(reference::MaxPairUlpError(t.q, c.q, exact.data(), kHeadDim, pairs), 2.0);
    }
  });
}

TEST(RopeChainTest, TablesLoRows) {
  Frequencies f;
  f.base = 10000.0;
  f.attention_factor = 0.75;
  const auto plain = Table(40, f, 300, RotationArithmetic::kF64);
  const auto chain = Table(40, f, 300);
  ASSERT_TRUE(plain && chain);
  EXPECT_FALSE(plain->has_lo_rows());
  EXPECT_TRUE(chain->has_lo_rows());
  std::shared_ptr<const RopeTable> f32;
  ASSERT_TRUE(RopeTable::Create(40, f, 300, RotationArithmetic::kF32, &f32).ok());
  EXPECT_FALSE(f32->has_lo_rows());
  size_t nonzero = 0;
  for (int64_t p = 0; p < 300; ++p)
    for (int64_t i = 0; i < 20; ++i) {
      ASSERT_EQ(Bits(plain->cos_row(p)[i]), Bits(chain->cos_row(p)[i]));
      ASSERT_EQ(Bits(plain->sin_row(p)[i]), Bits(chain->sin_row(p)[i]));
      const double angle = static_cast<double>(p) * chain->inv_freq()[i];  // the contract's
      const long double c = 0.75L * std::cos(static_cast<long double>(angle));
      const long double s = 0.75L * std::sin(static_cast<long double>(angle));
      const float cl = chain->cos_lo_row(p)[i], sl = chain->sin_lo_row(p)[i];
      // |lo| <= half an ulp of the hi part, and hi + lo is C within the engine's error.
      EXPECT_LE(std::fabs(cl), std::ldexp(1.0f, -25));
      EXPECT_LE(std::fabs(static_cast<long double>(chain->cos_row(p)[i]) + cl - c),
                std::ldexp(1.0L, -48));
      EXPECT_LE(std::fabs(static_cast<long double>(chain->sin_row(p)[i]) + sl - s),
                std::ldexp(1.0L, -48));
      nonzero += cl != 0.0f;
    }
  EXPECT_GT(nonzero, 5000u);  // of 6000: lo parts are there
}

TEST(RopeChainTest, RefusalsNameTheArgumentAndWriteNothing) {
  constexpr int64_t kHeadDim = 16;
  std::vector<float> q(2 * 3 * kHeadDim, 0.5f);
  const std::vector<float> before = q;
  RopeTensors t;
  t.q = TensorBSHD(q.data(), 1, 2, 3, kHeadDim);
  Frequencies f;
  const auto plain = Table(kHeadDim, f, 8, RotationArithmetic::kF64);
  RopeParams p;
  p.arithmetic = kChain;
  p.source = CosSinSource::Table(plain.get());
  Status st = ApplyRope(t, p);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("arithmetic = kFmaChain: source.table has no lo rows"),
            std::string::npos)
      << st.message();
  std::unique_ptr<RopeCall> call;
  EXPECT_EQ(RopeCall::Create(t, p, &call).message(), st.message());
  EXPECT_EQ(call, nullptr);

  p.source = CosSinSource::OnTheFly();
  const int64_t section[2] = {4, 4};
  p.mrope = {section, 2, false};
  st = ApplyRope(t, p);
  EXPECT_NE(st.message().find("arithmetic = kFmaChain with mrope.num_sections = 2: M-RoPE"),
            std::string::npos)
      << st.message();

  VisionRopeParams vp;
  vp.arithmetic = kChain;
  const std::vector<int64_t> rows_cols(2 * 2 * 2, 0);
  vp.rows_cols64 = rows_cols.data();
  st = ApplyVisionRope(t, vp);
  EXPECT_NE(st.message().find("arithmetic = kFmaChain: vision RoPE"), std::string::npos)
      << st.message();

  RerotateParams rp;
  rp.arithmetic = kChain;
  st = RerotateRope(t.q, Tensor(), rp);
  EXPECT_NE(st.message().find("arithmetic = kFmaChain: RerotateRope supports kF64 and kF32"),
            std::string::npos)
      << st.message();

  std::shared_ptr<const RopeTable> table;
  st = RopeTable::Create(kHeadDim, f, 8, static_cast<RotationArithmetic>(7), &table);
  EXPECT_NE(st.message().find("arithmetic = 7: not a RotationArithmetic"), std::string::npos)
      << st.message();
  EXPECT_EQ(table, nullptr);
  EXPECT_EQ(q, before);
}

// ShiftRope is ApplyRope with the deltas as positions: kFmaChain gives ApplyRope's bits.
TEST(RopeChainTest, ShiftRopeIsApplyRopeWithTheDeltas) {
  constexpr int64_t kSeq = 4, kHeads = 2, kHeadDim = 32;
  std::vector<float> k(kSeq * kHeads * kHeadDim);
  test::FillNormal(k.data(), k.size(), 9);
  std::vector<float> shifted = k, rotated = k;
  ShiftParams sp;
  sp.arithmetic = kChain;
  sp.delta = 1234;
  ASSERT_TRUE(ShiftRope(TensorBSHD(shifted.data(), 1, kSeq, kHeads, kHeadDim), Tensor(), sp).ok());
  RopeParams p;
  p.arithmetic = kChain;
  const std::vector<int64_t> ids(kSeq, 1234);
  p.positions = Positions::Ids(ids.data());
  RopeTensors t;
  t.k = TensorBSHD(rotated.data(), 1, kSeq, kHeads, kHeadDim);
  ASSERT_TRUE(ApplyRope(t, p).ok());
  EXPECT_EQ(DifferingBits(shifted, rotated), 0u);
}

// Threads and RopeCall: the same bits as one serial ApplyRope.
TEST(RopeChainTest, ThreadsAndRopeCallGiveTheSameBits) {
  constexpr int64_t kSeq = 96, kHeads = 8, kHeadDim = 128;
  std::vector<float> in(kSeq * kHeads * kHeadDim);
  test::FillNormal(in.data(), in.size(), 21);
  RopeParams p;
  p.arithmetic = kChain;
  p.positions = Positions::Offset(77);
  p.exec.max_threads = 1;
  std::vector<float> serial = in;
  RopeTensors t;
  t.q = TensorBSHD(serial.data(), 1, kSeq, kHeads, kHeadDim);
  ASSERT_TRUE(ApplyRope(t, p).ok());
  // The chain runs: kF64's bits differ in some outputs (both are nearly always the correctly
  // rounded value, so only a large call shows it).
  std::vector<float> f64 = in;
  t.q = TensorBSHD(f64.data(), 1, kSeq, kHeads, kHeadDim);
  p.arithmetic = RotationArithmetic::kF64;
  ASSERT_TRUE(ApplyRope(t, p).ok());
  const size_t differ = DifferingBits(f64, serial);
  EXPECT_GT(differ, 0u);
  std::printf("kFmaChain and kF64 differ in %zu of %zu outputs\n", differ, serial.size());
  p.arithmetic = kChain;
  for (int threads : {2, 4}) {
    std::vector<float> q = in;
    t.q = TensorBSHD(q.data(), 1, kSeq, kHeads, kHeadDim);
    p.exec.max_threads = threads;
    ASSERT_TRUE(ApplyRope(t, p).ok());
    EXPECT_EQ(DifferingBits(q, serial), 0u) << threads << " threads";
  }
  std::vector<float> q = in;
  t.q = TensorBSHD(q.data(), 1, kSeq, kHeads, kHeadDim);
  p.exec.max_threads = 1;
  std::unique_ptr<RopeCall> call;
  ASSERT_TRUE(RopeCall::Create(t, p, &call).ok());
  ASSERT_TRUE(call->Apply(Positions::Offset(77)).ok());
  EXPECT_EQ(DifferingBits(q, serial), 0u);
}

}  // namespace
}  // namespace posenc
