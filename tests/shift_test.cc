// KV-cache position shift (posenc/shift.h) on every SIMD target: bitwise equal to ApplyRope with
// the deltas as positions; after n successive shifts within n * B * ulp_T(r) of the key rotated
// from scratch at the final position (r = the pair's norm; B the one-call bound), measured for
// n = 1000 (f32) and n = 100 (bf16, f16); validation; the C API.
#include "posenc/shift.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "posenc/half.h"
#include "posenc/posenc.h"
#include "posenc/rope.h"
#include "posenc/targets.h"
#include "tests/rope_test_util.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/shift_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

void ExpectDispatchedHere() { EXPECT_STREQ(hwy::TargetName(HWY_TARGET), ChosenTarget().c_str()); }

// Every delta kind, both layouts, partial rotary, in place and out: the bits of ApplyRope with the
// deltas as positions (per-batch / uniform deltas expanded by hand here).
HWY_NOINLINE void TestShiftIsRopeByDelta() {
  ExpectDispatchedHere();
  const int64_t batch = 2, seq = 7, heads = 3, head_dim = 72;
  const size_t n = static_cast<size_t>(batch * seq * heads * head_dim);
  std::vector<int64_t> per_token(static_cast<size_t>(batch * seq));
  for (size_t i = 0; i < per_token.size(); ++i) per_token[i] = static_cast<int64_t>(i * 37) - 200;
  const int64_t per_batch[2] = {-4096, 123457};
  for (int kind = 0; kind < 3; ++kind)
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
      for (int64_t rotary : {int64_t{0}, int64_t{40}})
        for (bool in_place : {true, false}) {
          std::vector<float> k(n), out(n, -1.f);
          test::FillNormal(k.data(), n, static_cast<uint32_t>(kind * 10 + rotary));
          std::vector<float> want = k;
          ShiftParams sp;
          sp.kind = static_cast<ShiftParams::DeltaKind>(kind);
          sp.delta = -77;
          sp.deltas = kind == 1 ? per_batch : per_token.data();
          sp.pairs = pairs;
          sp.rotary_dim = rotary;
          sp.freqs.base = 1e6;
          std::vector<int64_t> ids(static_cast<size_t>(batch * seq));
          for (int64_t b = 0; b < batch; ++b)
            for (int64_t s = 0; s < seq; ++s) {
              ids[static_cast<size_t>(b * seq + s)] =
                  kind == 0   ? -77
                  : kind == 1 ? per_batch[b]
                              : per_token[static_cast<size_t>(b * seq + s)];
            }
          const Tensor kv = TensorBSHD(k.data(), batch, seq, heads, head_dim);
          const Tensor ov =
              in_place ? Tensor() : TensorBSHD(out.data(), batch, seq, heads, head_dim);
          ASSERT_TRUE(ShiftRope(kv, ov, sp).ok());
          RopeTensors t;
          t.k = TensorBSHD(want.data(), batch, seq, heads, head_dim);
          RopeParams p;
          p.pairs = pairs;
          p.rotary_dim = rotary;
          p.freqs.base = 1e6;
          p.positions = Positions::Ids(static_cast<const int64_t*>(ids.data()));
          ASSERT_TRUE(ApplyRope(t, p).ok());
          const std::vector<float>& got = in_place ? k : out;
          EXPECT_EQ(0, std::memcmp(got.data(), want.data(), n * 4)) << kind << " " << in_place;
        }
}

// n successive shifts of a key rotated at p0 (random per-token deltas in [-64, 64]) against the
// key rotated once at p0 + sum of deltas in double: every element within n * B * ulp_T(r) of it.
template <class Store>
double ShiftDrift(DType dtype, int n, double* bound_out) {
  const int64_t batch = 1, seq = 6, heads = 2, head_dim = 64, half = 32;
  const size_t count = static_cast<size_t>(batch * seq * heads * head_dim);
  std::vector<float> x0(count);
  test::FillNormal(x0.data(), count, 77);
  std::vector<Store> k(count);
  if constexpr (std::is_same_v<Store, float>) {
    std::memcpy(k.data(), x0.data(), count * 4);
  } else {
    EXPECT_TRUE(ConvertFromF32(x0.data(), count, dtype, k.data()).ok());
  }
  std::vector<float> start(count);  // the exact stored start values
  EXPECT_TRUE(ConvertToF32(k.data(), dtype, count, start.data()).ok());
  std::vector<int64_t> total(static_cast<size_t>(seq), 0);
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> dist(-64, 64);
  std::vector<int64_t> deltas(static_cast<size_t>(seq));
  ShiftParams sp;
  sp.kind = ShiftParams::DeltaKind::kPerToken;
  sp.deltas = deltas.data();
  for (int step = 0; step < n; ++step) {
    for (int64_t s = 0; s < seq; ++s) {
      deltas[static_cast<size_t>(s)] = dist(rng);
      total[static_cast<size_t>(s)] += deltas[static_cast<size_t>(s)];
    }
    EXPECT_TRUE(
        ShiftRope(TensorBSHD(k.data(), dtype, batch, seq, heads, head_dim), Tensor(), sp).ok());
  }
  std::vector<double> exact(count);
  RopeTensors t;
  t.k = TensorBSHD(start.data(), batch, seq, heads, head_dim);
  RopeParams p;
  p.positions = Positions::Ids(static_cast<const int64_t*>(total.data()));
  EXPECT_TRUE(reference::ApplyRopeF64(t, p, nullptr, exact.data()).ok());
  std::vector<float> got(count);
  EXPECT_TRUE(ConvertToF32(k.data(), dtype, count, got.data()).ok());
  const double b = dtype == DType::kF32   ? 2.0
                   : dtype == DType::kF16 ? 1 + 3 * std::ldexp(1.0, -13)
                                          : 1 + 3 * std::ldexp(1.0, -16);
  const int bits = dtype == DType::kF32 ? 23 : dtype == DType::kF16 ? 10 : 7;
  double worst = 0;  // in units of n * B * 2^-bits * r
  for (size_t h = 0; h < count / head_dim; ++h)
    for (int64_t i = 0; i < half; ++i) {
      const size_t x = h * head_dim + i, y = x + half;
      const double r = std::hypot(static_cast<double>(start[x]), static_cast<double>(start[y]));
      const double bound = n * b * std::ldexp(r, -bits);
      worst = std::max(
          {worst, std::fabs(got[x] - exact[x]) / bound, std::fabs(got[y] - exact[y]) / bound});
    }
  *bound_out = b;
  return worst;
}

HWY_NOINLINE void TestShiftDriftBound() {
  ExpectDispatchedHere();
  double b;
  const double f32 = ShiftDrift<float>(DType::kF32, 1000, &b);
  EXPECT_LE(f32, 1.0);
  const double bf16 = ShiftDrift<uint16_t>(DType::kBF16, 100, &b);
  EXPECT_LE(bf16, 1.0);
  const double f16 = ShiftDrift<uint16_t>(DType::kF16, 100, &b);
  EXPECT_LE(f16, 1.0);
  // The measured fraction of the linear bound (docs/shift.md quotes these).
  printf("shift drift / (n * B * ulp_T(r)): f32 n=1000 %.4f, bf16 n=100 %.4f, f16 n=100 %.4f\n",
         f32, bf16, f16);
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(ShiftKernelTest);
HWY_EXPORT_AND_TEST_P(ShiftKernelTest, TestShiftIsRopeByDelta);
HWY_EXPORT_AND_TEST_P(ShiftKernelTest, TestShiftDriftBound);

namespace {

TEST(ShiftErrorsTest, NamesArgumentAndWritesNothing) {
  std::vector<float> k(2 * 3 * 64, 0.25f);
  const std::vector<float> before = k;
  const Tensor kv = TensorBSHD(k.data(), 2, 3, 1, 64);
  ShiftParams sp;
  sp.kind = ShiftParams::DeltaKind::kPerBatch;
  Status st = ShiftRope(kv, Tensor(), sp);
  EXPECT_EQ(st.message(), "deltas is null");
  sp.kind = static_cast<ShiftParams::DeltaKind>(7);
  st = ShiftRope(kv, Tensor(), sp);
  EXPECT_NE(st.message().find("kind = 7"), std::string::npos) << st.message();
  sp.kind = ShiftParams::DeltaKind::kUniform;
  sp.freqs.attention_factor = 0.5;
  st = ShiftRope(kv, Tensor(), sp);
  EXPECT_NE(st.message().find("freqs.attention_factor = 0.5"), std::string::npos) << st.message();
  sp.freqs.attention_factor = 1.0;
  sp.delta = int64_t{1} << 52;  // angle beyond 2^50
  st = ShiftRope(kv, Tensor(), sp);
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("deltas[b=0, s=0]"), std::string::npos) << st.message();
  sp.kind = ShiftParams::DeltaKind::kPerToken;
  std::vector<float> zeros(2 * 3 * 64, 0.f);  // bit patterns read as int64 deltas 0
  sp.deltas = reinterpret_cast<const int64_t*>(zeros.data());  // deltas inside the output
  st = ShiftRope(TensorBSHD(zeros.data(), 2, 3, 1, 64), Tensor(), sp);
  EXPECT_NE(st.message().find("overlaps k (in place)"), std::string::npos) << st.message();
  EXPECT_EQ(k, before);
  EXPECT_FALSE(reference::ShiftRope(TensorBSHD(zeros.data(), 2, 3, 1, 64), Tensor(), sp).ok());
  EXPECT_EQ(zeros, std::vector<float>(2 * 3 * 64, 0.f));
  EXPECT_EQ(k, before);
}

TEST(ShiftCApiTest, PerBatchEqualsCpp) {
  std::vector<float> a(2 * 5 * 2 * 32);
  test::FillNormal(a.data(), a.size(), 9);
  std::vector<float> b = a;
  const int64_t deltas[2] = {-3, 1000};
  posenc_tensor k = posenc_tensor_bshd(a.data(), POSENC_F32, 2, 5, 2, 32);
  posenc_shift_params cp;
  posenc_shift_params_init(&cp);
  cp.kind = POSENC_SHIFT_PER_BATCH;
  cp.deltas = deltas;
  cp.pairs = POSENC_PAIRS_INTERLEAVED;
  ASSERT_EQ(posenc_rope_shift(&k, nullptr, &cp), POSENC_OK) << posenc_last_error();
  ShiftParams sp;
  sp.kind = ShiftParams::DeltaKind::kPerBatch;
  sp.deltas = deltas;
  sp.pairs = PairLayout::kInterleaved;
  ASSERT_TRUE(ShiftRope(TensorBSHD(b.data(), 2, 5, 2, 32), Tensor(), sp).ok());
  EXPECT_EQ(a, b);
  const int bad_kind = 9;  // a C caller may store any int in the enum field
  std::memcpy(&cp.kind, &bad_kind, sizeof bad_kind);
  EXPECT_EQ(posenc_rope_shift(&k, nullptr, &cp), POSENC_INVALID_ARGUMENT);
  EXPECT_NE(std::string(posenc_last_error()).find("params.kind = 9"), std::string::npos);
}

}  // namespace
}  // namespace posenc
#endif
