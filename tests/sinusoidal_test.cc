// Sinusoidal encodings on every SIMD target: the seed example, each convention by hand, the
// double reference at positions up to 2^24, fused add == table + add, tables, threads, errors.
// Tolerances: a table entry within 0.5 ulp + 2^-50 of the exact sin/cos of the double angle; a
// fused add within 0.5 ulp(out) + 2^-25 of x * scale + exact PE (the table entry's own rounding).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "posenc/half.h"
#include "posenc/sinusoidal.h"
#include "posenc/targets.h"
#include "tests/rope_test_util.h"
#include "tests/sinusoidal_tester.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/sinusoidal_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

void ExpectDispatchedHere() { EXPECT_STREQ(hwy::TargetName(HWY_TARGET), ChosenTarget().c_str()); }

std::vector<float> Table(int64_t d, int64_t n, const SinusoidalParams& p) {
  std::vector<float> out(static_cast<size_t>(d * n));
  const Status st = WriteSinusoidal(p, EmbeddingBSD(out.data(), 1, n, d));
  EXPECT_TRUE(st.ok()) << st.message();
  return out;
}

HWY_NOINLINE void TestSeedExample() {
  ExpectDispatchedHere();
  // docs/math.md: d = 4, p = 0..3, interleaved, paper spacing (4-5 digits printed).
  const float expected[16] = {0, 1, 0, 1, 0.8415f, 0.5403f, 0.0100f, 0.99995f,
                              0.9093f, -0.4161f, 0.0200f, 0.99980f, 0.1411f, -0.9900f, 0.0300f, 0.99955f};
  const std::vector<float> t = Table(4, 4, SinusoidalParams());
  for (int i = 0; i < 16; ++i) EXPECT_NEAR(t[i], expected[i], 6e-5) << i;
}

HWY_NOINLINE void TestConventionsByHand() {
  ExpectDispatchedHere();
  const double s1 = std::sin(1.0), c1 = std::cos(1.0), s2 = std::sin(0.01), c2 = std::cos(0.01);
  SinusoidalParams p;
  p.positions = Positions::Offset(1);
  // d = 4, paper: w = {1, 10000^(-1/2) = 0.01}.
  const double interleaved[4] = {s1, c1, s2, c2}, sin_cos[4] = {s1, s2, c1, c2},
               cos_sin[4] = {c1, c2, s1, s2};
  for (const auto& [layout, want] :
       {std::pair<SinusoidalLayout, const double*>{SinusoidalLayout::kInterleaved, interleaved},
        {SinusoidalLayout::kConcatSinCos, sin_cos},
        {SinusoidalLayout::kConcatCosSin, cos_sin}}) {
    p.layout = layout;
    const std::vector<float> t = Table(4, 1, p);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(t[i], static_cast<float>(want[i])) << SinusoidalLayoutName(layout) << i;
  }
  // t2t, d = 6: half 3, w_i = exp(-i ln(10000) / 2) = {1, 0.01, 1e-4}; p = 100 with offset 2
  // (fairseq's padding_idx + 1 convention) gives angles {102, 1.02, 0.0102}.
  p.layout = SinusoidalLayout::kConcatSinCos;
  p.spacing = FrequencySpacing::kTensor2Tensor;
  p.positions = Positions::Offset(100);
  p.position_offset = 2;
  const std::vector<float> t = Table(6, 1, p);
  const double angles[3] = {102.0, 1.02, 0.0102};
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(t[i], std::sin(angles[i]), 1e-7) << i;
    EXPECT_NEAR(t[3 + i], std::cos(angles[i]), 1e-7) << i;
  }
  // t2t with d = 2: the denominator max(d/2 - 1, 1) = 1, w = {1}.
  p.position_offset = 0;
  p.positions = Positions::Offset(3);
  const std::vector<float> t2 = Table(2, 1, p);
  EXPECT_EQ(t2[0], static_cast<float>(std::sin(3.0)));
  EXPECT_EQ(t2[1], static_cast<float>(std::cos(3.0)));
}

// Tables (WriteSinusoidal) in every convention, spacing and dtype against the double reference
// at positions up to 2^24 (test::SinusoidalTester: f32 within 0.5 ulp + 2^-50, bf16 / f16 the
// RNE of the f32 entry within 1 ulp).
HWY_NOINLINE void TestTablesAgainstReference() {
  ExpectDispatchedHere();
  std::vector<int64_t> ids = {0, 1, 2, 16777216, 16777215, 12345678, 9999999, 4000, -3, 131072};
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16})
    for (int64_t d : {2, 4, 6, 18, 64, 512, 768})
      for (SinusoidalLayout layout : {SinusoidalLayout::kInterleaved, SinusoidalLayout::kConcatSinCos,
                                      SinusoidalLayout::kConcatCosSin})
        for (FrequencySpacing spacing : {FrequencySpacing::kPaper, FrequencySpacing::kTensor2Tensor}) {
          test::SinusoidalTester()
              .seq(static_cast<int64_t>(ids.size())).d_model(d).dtype(dtype).layout(layout)
              .spacing(spacing).positions(Positions::Ids(ids.data()))
              .label(std::string(DTypeName(dtype)) + " d " + std::to_string(d) + " " +
                     SinusoidalLayoutName(layout) + " " + FrequencySpacingName(spacing))
              .Test();
        }
}

// Fused adds on strided, misaligned views, in place and out of place, every dtype: exactly the
// dtype's rounding of f32(x * scale + table), within its bound of the exact value; nothing
// outside the view written, x untouched out of place; in place and out give the same bits.
HWY_NOINLINE void TestFusedAdd() {
  ExpectDispatchedHere();
  std::vector<int64_t> offsets = {7, 1000000};
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16})
    for (double scale : {std::sqrt(34.0), 1.0})  // 1.0 takes the f32 path: the same bits
      for (size_t lead : {0, 1}) {
        test::SinusoidalTester t;
        t.batch(2).seq(5).d_model(34).token_pad(3).batch_pad(1).lead(lead).dtype(dtype)
            .layout(SinusoidalLayout::kConcatSinCos).x_scale(scale)
            .positions(Positions::PerBatch(offsets.data())).add(true).seed(11)
            .label(std::string(DTypeName(dtype)) + " add scale " + std::to_string(scale) +
                   " lead " + std::to_string(lead));
        const std::vector<uint8_t> in_place = t.inplace(true).Test();
        const std::vector<uint8_t> out_of_place = t.inplace(false).Test();
        EXPECT_EQ(in_place, out_of_place) << DTypeName(dtype) << ": in place vs out";
      }
}

HWY_NOINLINE void TestTableObjectAndThreads() {
  ExpectDispatchedHere();
  SinusoidalParams p;
  p.layout = SinusoidalLayout::kConcatCosSin;
  p.spacing = FrequencySpacing::kTensor2Tensor;
  p.position_offset = 1;
  std::shared_ptr<const SinusoidalTable> table;
  ASSERT_TRUE(SinusoidalTable::Create(p, 64, 3000, &table).ok());

  // Fused add from the table == on the fly, for 1, 2 and 8 threads (4 MB touched: split).
  const int64_t batch = 4, seq = 2048, d = 64;
  std::vector<float> x(static_cast<size_t>(batch * seq * d));
  test::FillNormal(x.data(), x.size(), 5);
  std::vector<int64_t> offsets = {0, 100, 500, 951};
  p.positions = Positions::PerBatch(offsets.data());
  std::vector<float> first;
  for (bool use_table : {false, true})
    for (int threads : {1, 2, 8}) {
      std::vector<float> y = x;
      SinusoidalParams q = p;
      q.exec.max_threads = threads;
      if (use_table) q.table = table.get();
      ASSERT_TRUE(AddSinusoidal(q, EmbeddingBSD(y.data(), batch, seq, d)).ok());
      if (first.empty()) first = y;
      EXPECT_EQ(std::memcmp(first.data(), y.data(), 4 * y.size()), 0)
          << (use_table ? "table" : "on the fly") << " threads " << threads;
    }
}

// Blocks of consecutive positions (rows after the first rotated, lib/kernels/sinusoidal_rotate-inl.h)
// give the engine's bits: each row equals the same position written alone (a 1-row call, always
// the engine), for odd widths (vector tails), every layout, starts that cross 0 (the rotated
// sin(0) cannot prove its rounding: the engine takes over), reach past the rotation's 2^20 angle
// limit mid-table, and use a position offset; f32 and bf16 tables, fused adds in place and out.
HWY_NOINLINE void TestBlocksEqualRowsAlone() {
  ExpectDispatchedHere();
  const int64_t n = 150;  // two full blocks of 64 and a partial one
  for (int64_t d : {2, 6, 18, 130, 768})
    for (SinusoidalLayout layout : {SinusoidalLayout::kInterleaved, SinusoidalLayout::kConcatSinCos,
                                    SinusoidalLayout::kConcatCosSin})
      for (int64_t start : {int64_t{0}, int64_t{-70}, int64_t{4000}, int64_t{1048500}}) {
        SinusoidalParams p;
        p.layout = layout;
        p.spacing = d == 130 ? FrequencySpacing::kTensor2Tensor : FrequencySpacing::kPaper;
        p.position_offset = 3;
        p.positions = Positions::Offset(start);
        const std::vector<float> table = Table(d, n, p);
        std::vector<uint16_t> bf16(static_cast<size_t>(d * n));
        ASSERT_TRUE(WriteSinusoidal(p, EmbeddingBSD(bf16.data(), DType::kBF16, 1, n, d)).ok());
        std::vector<float> x(static_cast<size_t>(d * n)), in_place, out(x.size());
        test::FillNormal(x.data(), x.size(), 13);
        in_place = x;
        p.x_scale = 0.75;
        ASSERT_TRUE(AddSinusoidal(p, EmbeddingBSD(in_place.data(), 1, n, d)).ok());
        const EmbeddingView xv = EmbeddingBSD(x.data(), 1, n, d);
        const EmbeddingView ov = EmbeddingBSD(out.data(), 1, n, d);
        ASSERT_TRUE(AddSinusoidal(p, xv, &ov).ok());
        for (int64_t j = 0; j < n; ++j) {
          SinusoidalParams one = p;
          one.positions = Positions::Offset(start + j);
          const std::vector<float> row = Table(d, 1, one);
          const size_t at = static_cast<size_t>(j * d);
          ASSERT_EQ(std::memcmp(row.data(), table.data() + at, 4 * d), 0)
              << "d " << d << " " << SinusoidalLayoutName(layout) << " start " << start << " row " << j;
          for (int64_t i = 0; i < d; ++i) {
            const float want = static_cast<float>(static_cast<double>(x[at + i]) * 0.75 + row[i]);
            ASSERT_EQ(bf16[at + i], reference::RoundToBF16(row[i])) << j << " " << i;
            ASSERT_EQ(in_place[at + i], want) << "in place, row " << j << " " << i;
            ASSERT_EQ(out[at + i], want) << "out of place, row " << j << " " << i;
          }
        }
      }
}

// bf16 / f16 tables and fused adds at positions up to 2^24, d_model 130 (a tail on every
// target): the RNE of the f32 result, within 1 ulp of the storage type of the exact double value.
HWY_NOINLINE void TestHalfPrecision() {
  ExpectDispatchedHere();
  std::vector<int64_t> ids = {0, 3, 4000, 16777216, 12345678, -7};
  for (DType dtype : {DType::kBF16, DType::kF16})
    for (bool add : {false, true}) {
      test::SinusoidalTester()
          .seq(static_cast<int64_t>(ids.size())).d_model(130).dtype(dtype)
          .layout(SinusoidalLayout::kConcatCosSin).positions(Positions::Ids(ids.data()))
          .x_scale(3.0).add(add).seed(9)
          .label(std::string(DTypeName(dtype)) + (add ? " add" : " table"))
          .Test();
    }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(SinusoidalTest);
HWY_EXPORT_AND_TEST_P(SinusoidalTest, TestSeedExample);
HWY_EXPORT_AND_TEST_P(SinusoidalTest, TestConventionsByHand);
HWY_EXPORT_AND_TEST_P(SinusoidalTest, TestTablesAgainstReference);
HWY_EXPORT_AND_TEST_P(SinusoidalTest, TestFusedAdd);
HWY_EXPORT_AND_TEST_P(SinusoidalTest, TestTableObjectAndThreads);
HWY_EXPORT_AND_TEST_P(SinusoidalTest, TestBlocksEqualRowsAlone);
HWY_EXPORT_AND_TEST_P(SinusoidalTest, TestHalfPrecision);

// ---------------------------------------------------------------- errors (target independent)
void ExpectSinusoidalError(const std::function<Status(std::vector<float>&)>& call,
                           StatusCode code, const std::string& needle) {
  std::vector<float> buf(4 * 8 * 16, 3.5f);
  const Status st = call(buf);
  EXPECT_EQ(st.code(), code) << st.message();
  EXPECT_NE(st.message().find(needle), std::string::npos)
      << "message \"" << st.message() << "\" lacks \"" << needle << "\"";
  for (float v : buf) ASSERT_EQ(v, 3.5f) << "a failed call wrote: " << st.message();
}

TEST(SinusoidalErrorsTest, EveryError) {
  const auto kInvalid = StatusCode::kInvalidArgument;
  auto view = [](std::vector<float>& b, int64_t d) { return EmbeddingBSD(b.data(), 2, 4, d); };
  ExpectSinusoidalError([&](std::vector<float>& b) { return WriteSinusoidal(SinusoidalParams(), view(b, 7)); },
                        kInvalid, "out.d_model = 7: must be even");
  ExpectSinusoidalError([&](std::vector<float>& b) {
    EmbeddingView v = view(b, 8);
    v.data = nullptr;
    return AddSinusoidal(SinusoidalParams(), v);
  }, kInvalid, "x.data is null");
  ExpectSinusoidalError([&](std::vector<float>& b) {
    EmbeddingView v = view(b, 8);
    v.seq = 0;
    return WriteSinusoidal(SinusoidalParams(), v);
  }, kInvalid, "out.shape[1] = 0");
  ExpectSinusoidalError([&](std::vector<float>& b) {
    SinusoidalParams p;
    p.base = -1;
    return WriteSinusoidal(p, view(b, 8));
  }, kInvalid, "base = -1");
  ExpectSinusoidalError([&](std::vector<float>& b) {
    SinusoidalParams p;
    p.x_scale = NAN;
    return AddSinusoidal(p, view(b, 8));
  }, kInvalid, "x_scale = nan");
  ExpectSinusoidalError([&](std::vector<float>& b) {
    SinusoidalParams p;
    p.layout = static_cast<SinusoidalLayout>(9);
    return WriteSinusoidal(p, view(b, 8));
  }, kInvalid, "layout = 9");
  ExpectSinusoidalError([&](std::vector<float>& b) {
    SinusoidalParams p;
    p.spacing = static_cast<FrequencySpacing>(4);
    return WriteSinusoidal(p, view(b, 8));
  }, kInvalid, "spacing = 4");
  ExpectSinusoidalError([&](std::vector<float>& b) {
    SinusoidalParams p;
    p.positions = Positions::Ids(static_cast<const int64_t*>(nullptr));
    return WriteSinusoidal(p, view(b, 8));
  }, kInvalid, "positions.ids64 is null");
  ExpectSinusoidalError([&](std::vector<float>& b) {
    SinusoidalParams p;
    p.position_offset = INT64_MAX;
    p.positions = Positions::Offset(5);
    return WriteSinusoidal(p, view(b, 8));
  }, kInvalid, "position + position_offset overflows");
  ExpectSinusoidalError([&](std::vector<float>& b) {
    SinusoidalParams p;
    p.positions = Positions::Offset(int64_t{1} << 52);
    return WriteSinusoidal(p, view(b, 8));
  }, StatusCode::kOutOfRange, "exceeds 2^50");
  ExpectSinusoidalError([&](std::vector<float>& b) {
    EmbeddingView x = view(b, 8);
    EmbeddingView out = x;
    out.data = b.data() + 3;
    return AddSinusoidal(SinusoidalParams(), x, &out);
  }, kInvalid, "out partially overlaps x");
  ExpectSinusoidalError([&](std::vector<float>& b) {
    EmbeddingView v = view(b, 8);
    v.stride_seq = 4;
    return WriteSinusoidal(SinusoidalParams(), v);
  }, kInvalid, "make elements alias each other");
  ExpectSinusoidalError([&](std::vector<float>& b) {
    EmbeddingView x = view(b, 8);
    EmbeddingView out = EmbeddingBSD(b.data() + 64, DType::kBF16, 2, 4, 8);
    return AddSinusoidal(SinusoidalParams(), x, &out);
  }, kInvalid, "out.dtype = bf16: must equal x.dtype = f32");
  std::shared_ptr<const SinusoidalTable> table;
  ASSERT_TRUE(SinusoidalTable::Create(SinusoidalParams(), 8, 6, &table).ok());
  ExpectSinusoidalError([&](std::vector<float>& b) {
    SinusoidalParams p;
    p.table = table.get();
    p.positions = Positions::Offset(3);  // positions 3..6, the table holds 0..5
    return AddSinusoidal(p, view(b, 8));
  }, StatusCode::kOutOfRange, "= 6: outside the table's rows [0, 6)");
  ExpectSinusoidalError([&](std::vector<float>& b) {
    SinusoidalParams p;
    p.table = table.get();
    return AddSinusoidal(p, view(b, 16));
  }, kInvalid, "table->d_model() = 8: must equal d_model = 16");
  // The reference rejects the same way.
  std::vector<float> b(64, 1.f);
  EXPECT_NE(reference::WriteSinusoidal(SinusoidalParams(), view(b, 7)).message().find("must be even"),
            std::string::npos);
  std::shared_ptr<const SinusoidalTable> none;
  EXPECT_NE(SinusoidalTable::Create(SinusoidalParams(), 7, 6, &none).message().find("d_model = 7"),
            std::string::npos);
  EXPECT_EQ(none, nullptr);
}
}  // namespace posenc
#endif
