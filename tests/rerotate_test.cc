// Fused undo-at-p / redo-at-p' (posenc::RerotateRope) on every SIMD target: against
// reference::RerotateRope (double, rounded once) within B + 1 ulp of max(|x|, |y|) (the kernel is
// within B of the exact value, the rounded reference within 1); bitwise across thread counts; a
// longrope short -> long switch equals rotating the unrotated keys with the long factors within
// 2B + 1 ulp; errors name from / to.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "posenc/rope.h"
#include "posenc/shift.h"
#include "posenc/targets.h"
#include "tests/rope_test_util.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/rerotate_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

void ExpectDispatchedHere() { EXPECT_STREQ(hwy::TargetName(HWY_TARGET), ChosenTarget().c_str()); }

HWY_NOINLINE void TestRerotateMatchesReference() {
  ExpectDispatchedHere();
  for (int64_t head_dim : {int64_t{2}, int64_t{34}, int64_t{96}, int64_t{128}})
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
      for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32})
        for (bool in_place : {true, false}) {
          const int64_t batch = 2, seq = 5, heads = 3;
          const int64_t rotary = head_dim > 2 ? head_dim - 2 : head_dim;
          const size_t n = static_cast<size_t>(batch * seq * heads * head_dim);
          std::vector<float> k(n), out(n, -1.f);
          test::FillNormal(k.data(), n, static_cast<uint32_t>(head_dim));
          const std::vector<float> in = k;
          std::vector<double> w_from(static_cast<size_t>(rotary / 2)), w_to(w_from.size());
          for (size_t i = 0; i < w_from.size(); ++i) {
            w_from[i] = std::pow(1e4, -2.0 * static_cast<double>(i) / static_cast<double>(rotary));
            w_to[i] = w_from[i] / (1.0 + 0.37 * static_cast<double>(i));  // a longrope-like change
          }
          std::vector<int64_t> from(static_cast<size_t>(batch * seq)), to(from.size());
          for (size_t i = 0; i < from.size(); ++i) {
            from[i] = static_cast<int64_t>(i * 1000 + 4090);
            to[i] = from[i] - static_cast<int64_t>(i * 7);
          }
          RerotateParams rp;
          rp.pairs = pairs;
          rp.arithmetic = a;
          rp.rotary_dim = rotary;
          rp.from_freqs.inv_freq = w_from.data();
          rp.from_freqs.inv_freq_len = rotary / 2;
          rp.from_freqs.attention_factor = 1.2;
          rp.to_freqs.inv_freq = w_to.data();
          rp.to_freqs.inv_freq_len = rotary / 2;
          rp.to_freqs.attention_factor = 1.1;  // ratio 0.9166 <= 1
          rp.from_positions = Positions::Ids(static_cast<const int64_t*>(from.data()));
          rp.to_positions = Positions::Ids(static_cast<const int64_t*>(to.data()));
          const Tensor kv = TensorBSHD(k.data(), batch, seq, heads, head_dim);
          const Tensor ov =
              in_place ? Tensor() : TensorBSHD(out.data(), batch, seq, heads, head_dim);
          ASSERT_TRUE(RerotateRope(kv, ov, rp).ok());
          std::vector<float> ref = in, ref_out(n);
          ASSERT_TRUE(reference::RerotateRope(TensorBSHD(ref.data(), batch, seq, heads, head_dim),
                                              Tensor(), rp)
                          .ok());
          const std::vector<float>& got = in_place ? k : out;
          const double bound = test::MaxUlp(a) + 1.0;
          EXPECT_LE(test::MaxUlpApart(got, ref, in, head_dim, rotary, pairs), bound)
              << head_dim << " " << PairLayoutName(pairs);
          for (size_t h = 0; h < n / static_cast<size_t>(head_dim); ++h)  // pass-through bits
            for (int64_t j = rotary; j < head_dim; ++j)
              EXPECT_EQ(got[h * head_dim + j], in[h * head_dim + j]);
          if (!in_place) {
            EXPECT_EQ(k, in);
          }
          // Every thread count: the same bits.
          std::vector<float> k1 = in;
          rp.exec.max_threads = 1;
          ASSERT_TRUE(
              RerotateRope(TensorBSHD(k1.data(), batch, seq, heads, head_dim), Tensor(), rp).ok());
          EXPECT_EQ(0, std::memcmp(k1.data(), got.data(), n * 4));
        }
}

// Keys rotated at p with short factors, switched to p' with long factors in one pass, equal the
// unrotated keys rotated at p' with the long factors within 2B + 1 ulp (two rotations' error,
// measured against a rounded result).
HWY_NOINLINE void TestLongRopeSwitch() {
  ExpectDispatchedHere();
  const int64_t batch = 1, seq = 64, heads = 4, head_dim = 96, half = 48;
  const size_t n = static_cast<size_t>(batch * seq * heads * head_dim);
  std::vector<float> x(n);
  test::FillNormal(x.data(), n, 3);
  std::vector<double> w_short(half), w_long(half);
  for (int64_t i = 0; i < half; ++i) {
    const double w = std::pow(1e4, -2.0 * static_cast<double>(i) / 96.0);
    w_short[i] = w / (1.0 + 0.01 * static_cast<double>(i));
    w_long[i] = w / (1.0 + 0.5 * static_cast<double>(i));
  }
  RopeParams p;
  p.freqs.inv_freq = w_short.data();
  p.freqs.inv_freq_len = half;
  p.positions = Positions::Offset(4000);
  std::vector<float> k = x;
  RopeTensors t;
  t.k = TensorBSHD(k.data(), batch, seq, heads, head_dim);
  ASSERT_TRUE(ApplyRope(t, p).ok());
  RerotateParams rp;
  rp.from_freqs = p.freqs;
  rp.to_freqs.inv_freq = w_long.data();
  rp.to_freqs.inv_freq_len = half;
  rp.from_positions = Positions::Offset(4000);
  rp.to_positions = Positions::Offset(4100);
  ASSERT_TRUE(RerotateRope(t.k, Tensor(), rp).ok());
  std::vector<float> want = x;
  p.freqs = rp.to_freqs;
  p.positions = Positions::Offset(4100);
  t.k = TensorBSHD(want.data(), batch, seq, heads, head_dim);
  ASSERT_TRUE(ApplyRope(t, p).ok());
  EXPECT_LE(test::MaxUlpApart(k, want, x, head_dim, head_dim, PairLayout::kHalf),
            2 * test::kMaxUlp + 1.0);
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(RerotateKernelTest);
HWY_EXPORT_AND_TEST_P(RerotateKernelTest, TestRerotateMatchesReference);
HWY_EXPORT_AND_TEST_P(RerotateKernelTest, TestLongRopeSwitch);

namespace {
TEST(RerotateErrorsTest, NamesSideAndWritesNothing) {
  std::vector<float> k(2 * 3 * 64, 0.25f);
  const std::vector<float> before = k;
  const Tensor kv = TensorBSHD(k.data(), 2, 3, 1, 64);
  RerotateParams rp;
  rp.from_freqs.base = -1;
  Status st = RerotateRope(kv, Tensor(), rp);
  EXPECT_EQ(st.message().rfind("from: freqs.base = -1", 0), 0u) << st.message();
  rp.from_freqs.base = 1e4;
  rp.to_positions = Positions::Ids(static_cast<const int64_t*>(nullptr));
  st = RerotateRope(kv, Tensor(), rp);
  EXPECT_EQ(st.message().rfind("to: positions.ids64 is null", 0), 0u) << st.message();
  rp.to_positions = Positions::Offset(0);
  rp.from_freqs.attention_factor = 0;
  st = RerotateRope(kv, Tensor(), rp);
  EXPECT_NE(st.message().find("from_freqs.attention_factor = 0"), std::string::npos)
      << st.message();
  EXPECT_FALSE(reference::RerotateRope(kv, Tensor(), rp).ok());
  EXPECT_EQ(k, before);
}
}  // namespace
}  // namespace posenc
#endif
