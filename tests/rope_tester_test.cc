// RopeTester (tests/rope_tester.h) across dtypes on every SIMD target: f32 (both arithmetics),
// bf16 and f16, both pair layouts, forward and inverse, in place and out, odd head dims and
// partial rotary (every tail), GQA, misaligned and strided views, thread counts; each call within
// the proved bound of its dtype, and in place, out of place and every thread count give the same
// bits.
#include <cstdint>
#include <cstdio>
#include <string>

#include "posenc/rope.h"
#include "posenc/targets.h"
#include "tests/rope_tester.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/rope_tester_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

HWY_NOINLINE void TestEveryDtypeAndLayout() {
  EXPECT_STREQ(hwy::TargetName(HWY_TARGET), ChosenTarget().c_str());
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16})
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
      for (bool inverse : {false, true})
        for (int64_t head_dim : {2, 10, 34, 66, 128})
          for (int64_t rotary : {int64_t{0}, head_dim / 4 * 2}) {
            if (rotary == 0 && head_dim / 4 * 2 == 0) continue;
            char what[160];
            std::snprintf(what, sizeof(what), "%s %s inverse %d head_dim %d rotary %d",
                          DTypeName(dtype), PairLayoutName(pairs), inverse,
                          static_cast<int>(head_dim), static_cast<int>(rotary));
            test::RopeTester t;
            t.batch(2).seq(7).heads(3).kv_heads(1).head_dim(head_dim).rotary_dim(rotary)
                .pairs(pairs).inverse(inverse).dtype(dtype).offset(1000).lead(1)
                .seed(static_cast<uint32_t>(head_dim * 31 + rotary)).label(what);
            const test::RopeTestResult in_place = t.inplace(true).Test();
            const test::RopeTestResult out_of_place = t.inplace(false).Test();
            EXPECT_EQ(in_place.q_bytes, out_of_place.q_bytes) << what << ": q in place vs out";
            EXPECT_EQ(in_place.k_bytes, out_of_place.k_bytes) << what << ": k in place vs out";
            if (dtype == DType::kF32) {
              t.arithmetic(RotationArithmetic::kF32).inplace(true).Test();
            }
          }
}

HWY_NOINLINE void TestStridedAndMisaligned() {
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16})
    for (bool bhsd : {false, true})
      for (size_t lead : {0, 1, 3}) {
        test::RopeTester()
            .batch(3).seq(5).heads(4).kv_heads(2).head_dim(40).rotary_dim(24)
            .head_pad(3, 1).token_pad(5, 0).batch_pad(7, 2).bhsd(bhsd).lead(lead)
            .pairs(PairLayout::kInterleaved).dtype(dtype).offset(70000).base(500000.0)
            .attention_factor(0.75).inplace(false)
            .label(std::string(DTypeName(dtype)) + (bhsd ? " strided bhsd" : " strided bshd"))
            .Test();
      }
}

// Calls above the serial threshold (lib/parallel/split.h: 1 MiB) with 1 and 4 threads.
HWY_NOINLINE void TestThreadCounts() {
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
    test::RopeTester t;
    t.batch(2).seq(300).heads(8).kv_heads(2).head_dim(128).dtype(dtype).offset(3)
        .pairs(PairLayout::kHalf).inplace(true).label(std::string(DTypeName(dtype)) + " threads");
    const test::RopeTestResult one = t.max_threads(1).Test();
    const test::RopeTestResult four = t.max_threads(4).Test();
    EXPECT_EQ(one.q_bytes, four.q_bytes) << DTypeName(dtype) << ": 1 vs 4 threads";
    EXPECT_EQ(one.k_bytes, four.k_bytes) << DTypeName(dtype) << ": 1 vs 4 threads";
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(RopeTesterTest);
HWY_EXPORT_AND_TEST_P(RopeTesterTest, TestEveryDtypeAndLayout);
HWY_EXPORT_AND_TEST_P(RopeTesterTest, TestStridedAndMisaligned);
HWY_EXPORT_AND_TEST_P(RopeTesterTest, TestThreadCounts);
}  // namespace posenc
#endif
