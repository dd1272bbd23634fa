// RelativeRopeScores on every SIMD target this CPU runs, against the double-precision reference.
// Bound (docs/rerope.md, proved there): 0.5 ulp(score) + C * 2^-53 * M per score, plus the
// reference's own error (test::kReferenceError * 2^-53 * M); RunReropeCase reports the largest
// ratio of the error to that sum, which must be <= 1. Bitwise properties (table == on the fly,
// kCap with a wide window == kExact, threads) are checked on each target too.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "posenc/rerope.h"
#include "posenc/rope.h"
#include "posenc/targets.h"
#include "tests/rerope_test_util.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/rerope_kernel_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

using test::ReropeCase;
using test::ReropeOutcome;
using test::RunReropeCase;

void ExpectDispatchedHere() { EXPECT_STREQ(hwy::TargetName(HWY_TARGET), ChosenTarget().c_str()); }

const DistanceMode kModes[] = {DistanceMode::kExact, DistanceMode::kCap, DistanceMode::kLeaky,
                               DistanceMode::kLog};

std::string Describe(const ReropeCase& c) {
  char s[256];
  snprintf(s, sizeof(s),
           "mode %s w %d %s D %d r %d causal %d B %d Lq %d Lk %d H %d/%d %s bhsd %d pad %d lead %d",
           DistanceModeName(c.params.map.mode), static_cast<int>(c.params.map.window),
           PairLayoutName(c.params.pairs), static_cast<int>(c.head_dim),
           static_cast<int>(c.params.rotary_dim), c.params.causal, static_cast<int>(c.batch),
           static_cast<int>(c.q_len), static_cast<int>(c.k_len), static_cast<int>(c.heads),
           static_cast<int>(c.kv_heads), DTypeName(c.dtype), c.bhsd, static_cast<int>(c.pad),
           static_cast<int>(c.lead));
  return s;
}

ReropeOutcome ExpectWithinBound(const ReropeCase& c) {
  const ReropeOutcome o = RunReropeCase(c);
  EXPECT_TRUE(o.status.ok()) << Describe(c) << ": " << o.status.message();
  EXPECT_LE(o.max_error_ratio, 1.0) << Describe(c);
  EXPECT_TRUE(o.masked_ok) << Describe(c) << ": masked / finite scores wrong";
  EXPECT_TRUE(o.untouched) << Describe(c) << ": wrote outside the scores view or into q / k";
  return o;
}

ReropeCase BaseCase(DistanceMode mode) {
  ReropeCase c;
  c.batch = 2;
  c.q_len = 5;
  c.k_len = 37;  // two key tiles
  c.heads = 4;
  c.kv_heads = 2;
  c.params.map.mode = mode;
  c.params.map.window = 7;
  c.params.map.leak = 4.0;
  c.params.q_positions = Positions::Offset(c.k_len - c.q_len);
  return c;
}

HWY_NOINLINE void TestModesLayoutsAndHeadDims() {
  ExpectDispatchedHere();
  struct Dims {
    int64_t head_dim, rotary;
  };
  const Dims dims[] = {{2, 0},   {6, 0},   {7, 6},  {7, 2},   {8, 0},   {8, 4},   {18, 0},
                       {18, 10}, {33, 32}, {64, 0}, {64, 16}, {130, 0}, {130, 64}};
  double worst_ulp = 0.0;
  for (DistanceMode mode : kModes)
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
      for (const Dims& d : dims)
        for (bool causal : {false, true}) {
          ReropeCase c = BaseCase(mode);
          c.head_dim = d.head_dim;
          c.params.rotary_dim = d.rotary;
          c.params.pairs = pairs;
          c.params.causal = causal;
          // Non-causal: queries before, among and after the keys (negative distances mirror).
          if (!causal) c.params.q_positions = Positions::Offset(12);
          c.seed = static_cast<uint32_t>(d.head_dim * 31 + d.rotary);
          worst_ulp = std::max(worst_ulp, ExpectWithinBound(c).max_ulp);
        }
  // Well-conditioned scores are correctly rounded but for the tiny double error.
  EXPECT_LE(worst_ulp, 0.5 + 1e-6);
  std::printf("%s: worst error %.9f ulp of well-conditioned scores\n", hwy::TargetName(HWY_TARGET),
              worst_ulp);
}

HWY_NOINLINE void TestDecodePrefillTilesAndGqa() {
  ExpectDispatchedHere();
  struct Shape {
    int64_t q_len, k_len, heads, kv_heads, head_dim;
  };
  const Shape shapes[] = {{1, 1, 2, 1, 16},   {1, 7, 4, 1, 16},   {1, 8, 4, 2, 16},
                          {1, 9, 8, 2, 16},   {1, 300, 8, 2, 32}, {4, 33, 6, 3, 24},
                          {17, 65, 3, 1, 16}, {16, 32, 7, 1, 12}, {2, 40, 5, 5, 10},
                          {3, 19, 16, 2, 16}, {20, 20, 32, 8, 8}};
  for (DistanceMode mode : kModes)
    for (const Shape& s : shapes)
      for (bool causal : {false, true}) {
        ReropeCase c = BaseCase(mode);
        c.batch = 1;
        c.q_len = s.q_len;
        c.k_len = s.k_len;
        c.heads = s.heads;
        c.kv_heads = s.kv_heads;
        c.head_dim = s.head_dim;
        c.params.causal = causal;
        c.params.q_positions = Positions::Offset(s.k_len - s.q_len);
        c.params.scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
        ExpectWithinBound(c);
      }
}

HWY_NOINLINE void TestPositions() {
  ExpectDispatchedHere();
  const int64_t kBig = int64_t{1} << 24;
  // Sparse, unordered ids: a tile's distances are not a dense range (sorted-distinct rows).
  std::vector<int64_t> q_ids = {100, 5, kBig, 0, 77, -3, 9, kBig - 1};
  std::vector<int64_t> k_ids = {0, 1, 2, 50, 90,  1000000, kBig - 7, -20, 3,  4,  5,  6,
                                7, 8, 9, 10, 500, 501,     499,      12,  12, 12, 14, 15};
  std::vector<int32_t> q_ids32(q_ids.begin(), q_ids.end()), k_ids32(k_ids.begin(), k_ids.end());
  std::vector<int64_t> q_offsets = {kBig - 30, 4000}, k_offsets = {kBig - 60, 3990};
  for (DistanceMode mode : kModes)
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
      for (bool causal : {false, true}) {
        ReropeCase c = BaseCase(mode);
        c.q_len = 4;
        c.k_len = 12;
        c.head_dim = 20;
        c.params.pairs = pairs;
        c.params.causal = causal;
        c.params.map.window = 40;
        c.params.freqs.base = 500000.0;
        c.params.q_positions = Positions::Ids(q_ids.data());
        c.params.k_positions = Positions::Ids(k_ids.data());
        ExpectWithinBound(c);
        c.params.q_positions = Positions::Ids(q_ids32.data());
        c.params.k_positions = Positions::Ids(k_ids32.data());
        ExpectWithinBound(c);
        c.params.q_positions = Positions::PerBatch(q_offsets.data());
        c.params.k_positions = Positions::PerBatch(k_offsets.data());
        ExpectWithinBound(c);
        c.params.q_positions = Positions::Offset(-50);  // negative positions
        c.params.k_positions = Positions::Offset(-60);
        ExpectWithinBound(c);
        // Distances near 2^62: bounded angles for kCap / kLog; zero frequencies for the others.
        const std::vector<double> zeros(10, 0.0);
        if (mode == DistanceMode::kExact || mode == DistanceMode::kLeaky) {
          c.params.freqs.inv_freq = zeros.data();
          c.params.freqs.inv_freq_len = 10;
        }
        c.params.q_positions = Positions::Offset(int64_t{1} << 62);
        c.params.k_positions = Positions::Offset(-(int64_t{1} << 61));
        ExpectWithinBound(c);
      }
}

HWY_NOINLINE void TestHalfPrecisionStridesMisalignment() {
  ExpectDispatchedHere();
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16})
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
      for (bool bhsd : {false, true})
        for (int64_t pad : {0, 3})
          for (size_t lead : {0, 1, 3}) {
            ReropeCase c = BaseCase(lead == 1 ? DistanceMode::kCap : DistanceMode::kLeaky);
            c.dtype = dtype;
            c.head_dim = 26;
            c.params.rotary_dim = 22;
            c.params.pairs = pairs;
            c.params.causal = pad == 0;
            c.bhsd = bhsd;
            c.pad = pad;
            c.lead = lead;
            ExpectWithinBound(c);
          }
}

HWY_NOINLINE void TestFrequenciesFactorScale() {
  ExpectDispatchedHere();
  const std::vector<double> inv = {1.0, 0.5, 3.0, 1e-3, 0.0, 1e-6, 0.7, 2.5};
  for (DistanceMode mode : kModes)
    for (double factor : {1.0, 0.6, 1.3})
      for (double scale : {1.0, 0.0883883, -2.0}) {
        ReropeCase c = BaseCase(mode);
        c.head_dim = 20;
        c.params.rotary_dim = 16;
        c.params.freqs.inv_freq = inv.data();
        c.params.freqs.inv_freq_len = 8;
        c.params.freqs.attention_factor = factor;
        c.params.scale = scale;
        c.params.causal = true;
        ExpectWithinBound(c);
        c.params.freqs = Frequencies();
        c.params.freqs.base = 1e6;
        c.params.freqs.attention_factor = factor;
        c.params.causal = false;
        ExpectWithinBound(c);
      }
  // Large and small inputs (no overflow): the bound is relative to M.
  for (float magnitude : {1e-20f, 1e15f}) {
    ReropeCase c = BaseCase(DistanceMode::kLog);
    c.head_dim = 16;
    c.magnitude = magnitude;
    ExpectWithinBound(c);
  }
}

// Runs posenc::RelativeRopeScores and returns the scores (ASSERTs success).
std::vector<float> Scores(const ReropeCase& c) {
  const ReropeOutcome o = RunReropeCase(c);
  EXPECT_TRUE(o.status.ok()) << o.status.message();
  return o.scores;
}

HWY_NOINLINE void TestTableEqualsOnTheFly() {
  ExpectDispatchedHere();
  for (DistanceMode mode : kModes)
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
      for (bool causal : {false, true}) {
        ReropeCase c = BaseCase(mode);
        c.head_dim = 24;
        c.params.rotary_dim = 20;
        c.params.pairs = pairs;
        c.params.causal = causal;
        c.params.freqs.attention_factor = 0.9;
        if (!causal) c.params.q_positions = Positions::Offset(3);
        const std::vector<float> fly = Scores(c);
        std::shared_ptr<const RelativeRopeTable> table;
        // kCap: a table for every distance stores only rows 0..w.
        const int64_t max_distance = mode == DistanceMode::kCap ? (int64_t{1} << 40) : 64;
        ASSERT_TRUE(
            RelativeRopeTable::Create(20, c.params.freqs, c.params.map, max_distance, &table).ok());
        if (mode == DistanceMode::kCap) {
          EXPECT_EQ(table->stored_rows(), c.params.map.window + 1);
        }
        c.params.table = table.get();
        c.params.freqs = Frequencies();  // ignored with a table
        const ReropeOutcome tab = ExpectWithinBound(c);
        EXPECT_EQ(0, std::memcmp(fly.data(), tab.scores.data(), fly.size() * 4))
            << Describe(c) << ": table and on-the-fly differ";
      }
}

HWY_NOINLINE void TestCapWideWindowEqualsExactAndMapsAgreeInside() {
  ExpectDispatchedHere();
  for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
    for (bool causal : {false, true}) {
      ReropeCase c = BaseCase(DistanceMode::kExact);
      c.head_dim = 34;
      c.params.pairs = pairs;
      c.params.causal = causal;
      if (!causal) c.params.q_positions = Positions::Offset(-4);
      const std::vector<float> exact = Scores(c);
      // Every |d| <= 40 here: a window of 40 (or more) caps nothing.
      for (int64_t w : {40, 41, 1000}) {
        c.params.map.mode = DistanceMode::kCap;
        c.params.map.window = w;
        EXPECT_EQ(exact, Scores(c)) << "kCap with window " << w << " != kExact";
      }
      // Inside the window every map is f(d) = d: the same bits as kExact there, and the
      // capped / leaky / log scores differ from kExact beyond it.
      for (DistanceMode mode : {DistanceMode::kCap, DistanceMode::kLeaky, DistanceMode::kLog}) {
        c.params.map.mode = mode;
        c.params.map.window = 9;
        const std::vector<float> mapped = Scores(c);
        size_t inside = 0, beyond_differs = 0, beyond = 0;
        for (int64_t i = 0; i < c.q_len; ++i)
          for (int64_t j = 0; j < c.k_len; ++j) {
            const int64_t d = (causal ? c.k_len - c.q_len : -4) + i - j;
            for (int64_t bh = 0; bh < c.batch * c.heads; ++bh) {
              const size_t at = static_cast<size_t>((bh * c.q_len + i) * c.k_len + j);
              if (std::llabs(d) <= 9) {
                EXPECT_EQ(exact[at], mapped[at]) << DistanceModeName(mode) << " d " << d;
                ++inside;
              } else if (!(causal && d < 0)) {
                ++beyond;
                beyond_differs += exact[at] != mapped[at];
              }
            }
          }
        EXPECT_GT(inside, 0u);
        EXPECT_GT(beyond_differs, beyond * 9 / 10) << DistanceModeName(mode);
      }
    }
}

// kExact against "rotate q at p_i and k at p_j with ApplyRope, then dot" (in double). The
// difference is bounded by kExact's own bound, ApplyRope's contract (each rotated element within
// 2 ulp of max(|x|, |y|), attention factor m <= 1: 2^-20 * m * a per pair, a = (|qx| + |qy|)
// (|kx| + |ky|)), the different rounding of the angles (p_i w, p_j w vs (p_i - p_j) w: at most
// 2^-53 (|p_i| + |p_j| + |d|) w_max m^2 a per pair) and the double dot (2^-45 of the rest).
HWY_NOINLINE void TestExactMatchesRopeThenDot() {
  ExpectDispatchedHere();
  for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
    for (int64_t rotary : {0, 24})
      for (int64_t offset : {0, 1 << 20}) {
        const int64_t B = 2, Lq = 6, Lk = 20, H = 4, KV = 2, D = 32;
        const double m = 0.8;
        std::vector<float> q(B * Lq * H * D), k(B * Lk * KV * D);
        std::mt19937 rng(static_cast<uint32_t>(rotary + offset));
        std::normal_distribution<float> dist;
        for (float& x : q) x = dist(rng);
        for (float& x : k) x = dist(rng);
        std::vector<float> scores(B * H * Lq * Lk);
        RelativeRopeTensors t;
        t.q = TensorBSHD(q.data(), B, Lq, H, D);
        t.k = TensorBSHD(k.data(), B, Lk, KV, D);
        t.scores = TensorBSHD(scores.data(), B, H, Lq, Lk);
        RelativeRopeParams p;
        p.pairs = pairs;
        p.rotary_dim = rotary;
        p.freqs.base = 10000.0;
        p.freqs.attention_factor = m;
        p.q_positions = Positions::Offset(offset + Lk - Lq);
        p.k_positions = Positions::Offset(offset);
        p.causal = true;
        ASSERT_TRUE(RelativeRopeScores(t, p).ok());

        std::vector<float> qr = q, kr = k;
        RopeTensors rt;
        rt.q = TensorBSHD(qr.data(), B, Lq, H, D);
        RopeParams rp;
        rp.pairs = pairs;
        rp.rotary_dim = rotary;
        rp.freqs = p.freqs;
        rp.positions = p.q_positions;
        ASSERT_TRUE(ApplyRope(rt, rp).ok());
        rt.q = TensorBSHD(kr.data(), B, Lk, KV, D);
        rp.positions = p.k_positions;
        ASSERT_TRUE(ApplyRope(rt, rp).ok());

        const int64_t r = rotary == 0 ? D : rotary, half = r / 2;
        for (int64_t b = 0; b < B; ++b)
          for (int64_t h = 0; h < H; ++h)
            for (int64_t i = 0; i < Lq; ++i)
              for (int64_t j = 0; j < Lk; ++j) {
                const float s = scores[((b * H + h) * Lq + i) * Lk + j];
                const int64_t pi = offset + Lk - Lq + i, pj = offset + j;
                if (pj > pi) {
                  EXPECT_TRUE(std::isinf(s) && s < 0);
                  continue;
                }
                const float* qi = &q[((b * Lq + i) * H + h) * D];
                const float* kj = &k[((b * Lk + j) * KV + h / 2) * D];
                const float* qri = &qr[((b * Lq + i) * H + h) * D];
                const float* krj = &kr[((b * Lk + j) * KV + h / 2) * D];
                double dot = 0.0, a_sum = 0.0, pass = 0.0;
                for (int64_t e = 0; e < D; ++e) dot += static_cast<double>(qri[e]) * krj[e];
                for (int64_t t2 = 0; t2 < half; ++t2) {
                  const int64_t ix = pairs == PairLayout::kInterleaved ? 2 * t2 : t2;
                  const int64_t iy = pairs == PairLayout::kInterleaved ? 2 * t2 + 1 : t2 + half;
                  a_sum += (std::fabs(qi[ix]) + std::fabs(qi[iy])) *
                           (std::fabs(kj[ix]) + std::fabs(kj[iy]));
                }
                for (int64_t e = r; e < D; ++e)
                  pass += std::fabs(static_cast<double>(qi[e]) * kj[e]);
                const double magnitude = m * m * a_sum + pass;
                const double angle_slack =
                    0x1p-53 * static_cast<double>(std::llabs(pi) + std::llabs(pj) + (pi - pj)) * m *
                    m * a_sum;
                const double tol = reference::RelativeRopeErrorBound(s, magnitude, D, r) +
                                   0x1p-20 * m * a_sum + angle_slack + 0x1p-45 * magnitude;
                EXPECT_LE(std::fabs(s - dot), tol)
                    << "b " << b << " h " << h << " i " << i << " j " << j;
              }
      }
}

HWY_NOINLINE void TestThreadCounts() {
  ExpectDispatchedHere();
  for (DistanceMode mode : {DistanceMode::kExact, DistanceMode::kCap}) {
    ReropeCase c = BaseCase(mode);
    c.q_len = 33;
    c.k_len = 100;
    c.heads = 8;
    c.kv_heads = 2;
    c.head_dim = 64;
    c.params.causal = mode == DistanceMode::kCap;
    c.params.map.window = 20;
    c.params.exec.max_threads = 1;
    const ReropeOutcome one = ExpectWithinBound(c);
    for (int threads : {2, 8, 0}) {
      c.params.exec.max_threads = threads;
      EXPECT_EQ(one.scores, Scores(c)) << threads << " threads";
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(ReropeKernelTest);
HWY_EXPORT_AND_TEST_P(ReropeKernelTest, TestModesLayoutsAndHeadDims);
HWY_EXPORT_AND_TEST_P(ReropeKernelTest, TestDecodePrefillTilesAndGqa);
HWY_EXPORT_AND_TEST_P(ReropeKernelTest, TestPositions);
HWY_EXPORT_AND_TEST_P(ReropeKernelTest, TestHalfPrecisionStridesMisalignment);
HWY_EXPORT_AND_TEST_P(ReropeKernelTest, TestFrequenciesFactorScale);
HWY_EXPORT_AND_TEST_P(ReropeKernelTest, TestTableEqualsOnTheFly);
HWY_EXPORT_AND_TEST_P(ReropeKernelTest, TestCapWideWindowEqualsExactAndMapsAgreeInside);
HWY_EXPORT_AND_TEST_P(ReropeKernelTest, TestExactMatchesRopeThenDot);
HWY_EXPORT_AND_TEST_P(ReropeKernelTest, TestThreadCounts);
}  // namespace posenc
#endif
