// RoPE on bf16 / f16 tensors, on every SIMD target: within 1 ulp of the storage type (at
// max(|x|, |y|) of each pair) of the exact double result, and bit-equal to rounding the f32
// result of the same rotation once (round to nearest even). Caches of any dtype with q/k of
// another.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "posenc/half.h"
#include "posenc/rope.h"
#include "posenc/targets.h"
#include "tests/rope_test_util.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/rope_half_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

uint16_t Round(DType dtype, double v) {
  return dtype == DType::kBF16 ? reference::RoundToBF16(v) : reference::RoundToF16(v);
}

struct HalfCase {
  HalfCase(DType dt, int64_t b, int64_t s, int64_t h, int64_t d)
      : dtype(dt), batch(b), seq(s), heads(h), head_dim(d) {}
  DType dtype;
  int64_t batch, seq, heads, head_dim;
  int64_t head_pad = 0;
  RopeParams params;
  bool in_place = true;
  bool specials = false;  // plant NaN, Inf, subnormals and the extremes among the inputs
};

// Special storage values planted every fifth element by a `specials` case (which also fills its
// second head with values below 2^-125, whose rotations are f32 subnormals: stores that bf16's
// AVX512_BF16 conversion would flush to zero): NaNs (both signs, a payload), infinities,
// subnormals, the smallest normals and the largest finite.
uint16_t SpecialHalf(DType dtype, size_t i) {
  static const uint16_t kBF16[] = {0x7FC0, 0xFFC1, 0x7F80, 0xFF80, 0x0001, 0x8035,
                                   0x007F, 0x0080, 0x8080, 0x7F7F, 0xFF7F, 0x0000};
  static const uint16_t kF16[] = {0x7E00, 0xFE01, 0x7C00, 0xFC00, 0x0001, 0x8035,
                                  0x03FF, 0x0400, 0x8400, 0x7BFF, 0xFBFF, 0x0000};
  return (dtype == DType::kBF16 ? kBF16 : kF16)[(i / 5) % 12];
}

// Runs the case on half tensors and checks both properties; also returns the output bits.
std::vector<uint16_t> CheckHalfCase(const HalfCase& c, const char* what) {
  const int64_t stride_h = c.head_dim + c.head_pad;
  const size_t n = static_cast<size_t>(c.batch * c.seq * c.heads * stride_h);
  std::vector<float> values(n);
  test::FillNormal(values.data(), n, 31);
  std::vector<uint16_t> in(n), out(n, 0x7E7E);
  for (size_t i = 0; i < n; ++i) {
    in[i] = Round(c.dtype, values[i]);
    if (!c.specials) continue;
    if (static_cast<int64_t>(i) / stride_h % c.heads == 1) {  // a head of tiny values only:
      uint16_t bits;                                          // its rotations are f32 subnormals
      std::memcpy(&bits, &values[i], 2);
      in[i] = static_cast<uint16_t>(bits & (c.dtype == DType::kBF16 ? 0x80FF : 0x83FF));
    } else if (i % 5 == 0) {
      in[i] = SpecialHalf(c.dtype, i);
    }
  }
  std::vector<float> widened(n);  // the half inputs, exactly, as f32
  EXPECT_TRUE(ConvertToF32(in.data(), c.dtype, n, widened.data()).ok());
  auto view = [&](void* data, DType dtype) {
    Tensor t = TensorBSHD(data, dtype, c.batch, c.seq, c.heads, c.head_dim);
    t.strides[2] = stride_h;
    t.strides[1] = c.heads * stride_h;
    t.strides[0] = c.seq * c.heads * stride_h;
    return t;
  };
  const std::vector<uint16_t> original = in;
  RopeTensors t;
  t.q = view(in.data(), c.dtype);
  if (!c.in_place) t.q_out = view(out.data(), c.dtype);
  const Status st = ApplyRope(t, c.params);
  EXPECT_TRUE(st.ok()) << what << ": " << st.message();
  const std::vector<uint16_t>& got = c.in_place ? in : out;

  // Exact result and the contract's measure (in ulp of the storage type).
  RopeTensors exact_t;
  std::vector<uint16_t> src = original;
  exact_t.q = view(src.data(), c.dtype);
  std::vector<double> exact(static_cast<size_t>(c.batch * c.seq * c.heads * c.head_dim));
  EXPECT_TRUE(reference::ApplyRopeF64(exact_t, c.params, exact.data(), nullptr).ok());
  Tensor got_view = view(const_cast<uint16_t*>(got.data()), c.dtype);
  const int64_t rotary = c.params.rotary_dim == 0 ? c.head_dim : c.params.rotary_dim;
  if (!c.specials) {  // the ulp measure is for finite values; specials: the RNE check below
    EXPECT_LE(reference::MaxPairUlpError(got_view, exact_t.q, exact.data(), rotary, c.params.pairs),
              1.0)
        << what;
  }

  // RNE of the f32 result: the f32 kernel (f32 arithmetic) on the widened inputs, rounded once.
  RopeTensors f32t;
  f32t.q = view(widened.data(), DType::kF32);
  RopeParams p32 = c.params;
  p32.arithmetic = RotationArithmetic::kF32;
  EXPECT_TRUE(ApplyRope(f32t, p32).ok());
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<int64_t>(i) % stride_h >= c.head_dim) {  // padding: untouched
      EXPECT_EQ(got[i], c.in_place ? original[i] : uint16_t{0x7E7E}) << what << " padding " << i;
      continue;
    }
    EXPECT_EQ(got[i], Round(c.dtype, widened[i])) << what << " element " << i;
    if (got[i] != Round(c.dtype, widened[i])) break;
  }
  return got;
}

HWY_NOINLINE void TestHalfRope() {
  EXPECT_STREQ(hwy::TargetName(HWY_TARGET), ChosenTarget().c_str());
  std::vector<int64_t> ids = {0, 1, 16777216, 12345678, -4, 4000, 131071, 77, 9999999, 5, 6, 7};
  for (DType dtype : {DType::kBF16, DType::kF16})
    for (int64_t head_dim : {2, 6, 18, 64, 128})
      for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
        for (bool inverse : {false, true})
          for (bool in_place : {true, false}) {
            HalfCase c(dtype, 2, 6, 3, head_dim);
            c.head_pad = head_dim > 6 ? 3 : 0;
            c.params.pairs = pairs;
            c.params.inverse = inverse;
            c.params.rotary_dim = head_dim >= 18 ? head_dim - 4 : 0;
            c.params.positions = Positions::Ids(ids.data());
            c.in_place = in_place;
            CheckHalfCase(c, DTypeName(dtype));
          }
}

HWY_NOINLINE void TestSpecialValues() {
  // Heads long enough for full-vector paired stores on every target (64 pairs), specials among
  // the inputs: NaN outputs canonical, subnormal results rounded, overflow to Inf, as the f32
  // kernel's result rounded once.
  std::vector<int64_t> ids = {0, 1, 16777216, 12345678, -4, 4000, 131071, 77, 9999999, 5, 6, 7};
  for (DType dtype : {DType::kBF16, DType::kF16})
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
      for (bool in_place : {true, false}) {
        HalfCase c(dtype, 2, 6, 3, 128);
        c.params.pairs = pairs;
        c.params.positions = Positions::Ids(ids.data());
        c.in_place = in_place;
        c.specials = true;
        CheckHalfCase(c, "specials");
      }
}

HWY_NOINLINE void TestCachesOfAnyDtype() {
  // Caches in each dtype, q in each dtype: cache values are used as given (widened exactly).
  Frequencies f;
  std::shared_ptr<const RopeTable> table;
  ASSERT_TRUE(RopeTable::Create(32, f, 64, &table).ok());
  for (DType cache_dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
    std::vector<uint16_t> cos16(64 * 16), sin16(64 * 16);
    CosSinCache cache;
    cache.rows = 64;
    cache.dtype = cache_dtype;
    if (cache_dtype == DType::kF32) {
      cache.cos = table->cos_row(0);
      cache.sin = table->sin_row(0);
    } else {
      ASSERT_TRUE(ConvertFromF32(table->cos_row(0), cos16.size(), cache_dtype, cos16.data()).ok());
      ASSERT_TRUE(ConvertFromF32(table->sin_row(0), sin16.size(), cache_dtype, sin16.data()).ok());
      cache.cos = cos16.data();
      cache.sin = sin16.data();
    }
    for (DType q_dtype : {DType::kBF16, DType::kF16}) {
      HalfCase c(q_dtype, 1, 5, 2, 32);
      c.params.source = CosSinSource::Cache(cache);
      c.params.positions = Positions::Offset(40);
      CheckHalfCase(c, "cache");
    }
    // f32 q with a half cache: within the f32 contract against the reference reading the cache.
    test::RopeCase rc;
    rc.q = {1, 5, 2, 32};
    rc.params.source = CosSinSource::Cache(cache);
    rc.params.positions = Positions::Offset(40);
    const test::RopeOutcome o = test::RunRopeCase(rc);
    ASSERT_TRUE(o.status.ok()) << o.status.message();
    EXPECT_LE(o.max_ulp, test::kMaxUlp) << DTypeName(cache_dtype);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(RopeHalfTest);
HWY_EXPORT_AND_TEST_P(RopeHalfTest, TestHalfRope);
HWY_EXPORT_AND_TEST_P(RopeHalfTest, TestCachesOfAnyDtype);
HWY_EXPORT_AND_TEST_P(RopeHalfTest, TestSpecialValues);
}  // namespace posenc
#endif
