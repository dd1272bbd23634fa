// RoPE kernels on every SIMD target this CPU runs, against the double-precision reference.
// Tolerance: test::MaxUlp (2 ulp of max(|x|, |y|) of each pair with f64 rotation arithmetic, 3 with
// f32), the documented contract.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "hwy/aligned_allocator.h"

#include "lib/core/rope_plan.h"
#include "posenc/rope.h"
#include "posenc/targets.h"
#include "tests/rope_test_util.h"
#include "tests/rope_tester.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/rope_kernel_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

using test::RopeCase;
using test::RunRopeCase;

// The public API must dispatch to the target under test.
void ExpectDispatchedHere() { EXPECT_STREQ(hwy::TargetName(HWY_TARGET), ChosenTarget().c_str()); }

// Runs the case with both rotation arithmetics, each held to its own bound.
void ExpectWithinBound(const RopeCase& c, const char* what) {
  for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32}) {
    RopeCase ca = c;
    ca.params.arithmetic = a;
    const test::RopeOutcome o = RunRopeCase(ca);
    ASSERT_TRUE(o.status.ok()) << what << ": " << o.status.message();
    EXPECT_LE(o.max_ulp, test::MaxUlp(a)) << what << (a == RotationArithmetic::kF32 ? " (f32)" : "");
    EXPECT_TRUE(o.outside_untouched) << what << ": wrote outside the output view";
  }
}

// Both rotation arithmetics of one tester, each held to its own bound (RopeTester::Bound).
void TestBothArithmetics(test::RopeTester t) {
  for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32}) t.arithmetic(a).Test();
}

HWY_NOINLINE void TestHeadDims() {
  ExpectDispatchedHere();
  // 1026: more than 512 pairs, the row buffer moves from the stack to the heap.
  for (int64_t head_dim : {2, 4, 6, 8, 18, 34, 64, 80, 96, 128, 256, 1026}) {
    std::vector<int64_t> rotary = {0};
    if (head_dim >= 4) rotary.push_back(head_dim / 4 * 2);  // partial, even
    if (head_dim > 2) rotary.push_back(2);
    for (int64_t r : rotary)
      for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
        for (bool inverse : {false, true})
          for (bool in_place : {true, false}) {
            char what[128];
            snprintf(what, sizeof(what), "head_dim %d rotary %d %s inverse %d in_place %d",
                     static_cast<int>(head_dim), static_cast<int>(r), PairLayoutName(pairs),
                     inverse, in_place);
            TestBothArithmetics(test::RopeTester()
                                    .batch(2).seq(3).heads(3).kv_heads(1).head_dim(head_dim)
                                    .rotary_dim(r).pairs(pairs).inverse(inverse).offset(5)
                                    .inplace(in_place)
                                    .seed(static_cast<uint32_t>(head_dim * 100 + r))
                                    .label(what));
          }
  }
}

HWY_NOINLINE void TestStridesAndMisalignment() {
  ExpectDispatchedHere();
  for (bool bhsd : {false, true})
    for (size_t lead : {0, 1, 3})
      for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
        for (bool in_place : {true, false}) {
          TestBothArithmetics(test::RopeTester()
                                  .batch(2).seq(5).heads(4).kv_heads(2).head_dim(34)
                                  .head_pad(3, 1).token_pad(5, 0).batch_pad(7, 2).bhsd(bhsd)
                                  .rotary_dim(30).pairs(pairs).offset(100).lead(lead)
                                  .inplace(in_place)
                                  .label(bhsd ? "strided bhsd" : "strided bshd"));
        }
}

HWY_NOINLINE void TestQOnlyKOnlyGqa() {
  ExpectDispatchedHere();
  RopeCase c;
  c.params.positions = Positions::Offset(7);
  c.q = {1, 9, 8, 128};
  ExpectWithinBound(c, "q only");
  c.q.heads = 0;
  c.k = {1, 9, 2, 128};
  ExpectWithinBound(c, "k only");
  c.q = {1, 9, 32, 128};
  c.k = {1, 9, 8, 128};
  ExpectWithinBound(c, "GQA 32/8");
}

HWY_NOINLINE void TestPositions() {
  ExpectDispatchedHere();
  const int64_t kMaxPos = int64_t{1} << 24;
  std::vector<int64_t> ids64 = {0, 1, kMaxPos, kMaxPos - 1, -5, -kMaxPos, 12345678, 3,
                                9999999, 16000000, 4000, 131072};
  std::vector<int32_t> ids32(ids64.begin(), ids64.end());
  std::vector<int64_t> offsets = {kMaxPos - 6, 2000};
  for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved}) {
    RopeCase c;
    c.q = {2, 6, 3, 64};
    c.k = {2, 6, 1, 64};
    c.params.pairs = pairs;
    c.params.positions = Positions::Ids(ids64.data());
    ExpectWithinBound(c, "ids64 up to 2^24");
    c.params.positions = Positions::Ids(ids32.data());
    ExpectWithinBound(c, "ids32 up to 2^24");
    c.params.positions = Positions::PerBatch(offsets.data());
    ExpectWithinBound(c, "per-batch offsets");
    c.params.positions = Positions::Offset(kMaxPos - 6);
    c.params.freqs.base = 500000.0;  // Llama-3 theta
    ExpectWithinBound(c, "offset near 2^24, theta 5e5");
  }
}

HWY_NOINLINE void TestFrequenciesAndFactor() {
  ExpectDispatchedHere();
  std::vector<double> inv = {1.0, 0.5, 0.25, 1e-3, 3.0, 1e-6, 0.7, 0.0};
  RopeCase c;
  c.q = {1, 20, 2, 16};
  c.params.positions = Positions::Offset(1000);
  c.params.freqs.inv_freq = inv.data();
  c.params.freqs.inv_freq_len = 8;
  c.params.freqs.attention_factor = 1.2;
  ExpectWithinBound(c, "explicit inv_freq, attention factor 1.2");
}

HWY_NOINLINE void TestInverseUndoesForward() {
  ExpectDispatchedHere();
  for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32})
  for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved}) {
    std::vector<float> x(4 * 8 * 96);
    test::FillNormal(x.data(), x.size(), 99);
    std::vector<float> y = x;
    RopeTensors t;
    t.q = TensorBSHD(y.data(), 1, 4, 8, 96);
    RopeParams p;
    p.pairs = pairs;
    p.arithmetic = a;
    p.positions = Positions::Offset(1 << 20);
    ASSERT_TRUE(ApplyRope(t, p).ok());
    p.inverse = true;
    ASSERT_TRUE(ApplyRope(t, p).ok());
    // Two roundings of the contract plus the rotation of an already rounded value.
    for (size_t i = 0; i < x.size(); ++i) {
      const size_t j = i % 96;
      const size_t partner = static_cast<size_t>(test::Partner(static_cast<int64_t>(j), 96, pairs));
      const double m = std::max(std::fabs(x[i]), std::fabs(x[i - j + partner]));
      ASSERT_LE(std::fabs(y[i] - x[i]), 2 * test::MaxUlp(a) * test::UlpOf(m)) << i;
    }
  }
}

HWY_NOINLINE void TestTableAndCaches() {
  ExpectDispatchedHere();
  Frequencies freqs;
  freqs.base = 10000.0;
  freqs.attention_factor = 0.9;
  std::shared_ptr<const RopeTable> table;
  ASSERT_TRUE(RopeTable::Create(64, freqs, 300, &table).ok());
  for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32})
  for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved}) {
    RopeCase c;
    c.params.arithmetic = a;
    c.q = {2, 7, 3, 80};
    c.k = {2, 7, 2, 80};
    c.params.rotary_dim = 64;
    c.params.pairs = pairs;
    c.params.freqs = freqs;
    std::vector<int64_t> ids = {0, 299, 17, 5, 250, 251, 1, 2, 3, 4, 5, 6, 7, 8};
    c.params.positions = Positions::Ids(ids.data());
    const test::RopeOutcome fly = RunRopeCase(c);
    ASSERT_TRUE(fly.status.ok()) << fly.status.message();
    c.params.source = CosSinSource::Table(table.get());
    const test::RopeOutcome tab = RunRopeCase(c);
    ASSERT_TRUE(tab.status.ok()) << tab.status.message();
    EXPECT_LE(tab.max_ulp, test::MaxUlp(a));
    EXPECT_EQ(fly.q, tab.q) << "table and on-the-fly differ";
    EXPECT_EQ(fly.k, tab.k) << "table and on-the-fly differ";

    // Caller caches: by position (the table's rows) and per token.
    CosSinCache cache;
    cache.cos = table->cos_row(0);
    cache.sin = table->sin_row(0);
    cache.rows = 300;
    c.params.source = CosSinSource::Cache(cache);
    const test::RopeOutcome byp = RunRopeCase(c);
    ASSERT_TRUE(byp.status.ok()) << byp.status.message();
    EXPECT_LE(byp.max_ulp, test::MaxUlp(a));
    EXPECT_EQ(fly.q, byp.q);

    std::vector<float> cos_tok, sin_tok;
    for (int64_t id : ids) {
      cos_tok.insert(cos_tok.end(), table->cos_row(id), table->cos_row(id) + 32);
      sin_tok.insert(sin_tok.end(), table->sin_row(id), table->sin_row(id) + 32);
    }
    cache.kind = CosSinCache::Kind::kPerToken;
    cache.cos = cos_tok.data();
    cache.sin = sin_tok.data();
    c.params.source = CosSinSource::Cache(cache);
    c.params.positions = Positions::Offset(0);  // unused by per-token caches
    const test::RopeOutcome tok = RunRopeCase(c);
    ASSERT_TRUE(tok.status.ok()) << tok.status.message();
    EXPECT_LE(tok.max_ulp, test::MaxUlp(a));
    EXPECT_EQ(fly.k, tok.k);
  }
}

// Computed rows of consecutive positions come in blocks (the engine for the first row, a
// rotation for the next, lib/kernels/rope_tokens-inl.h ComputedRows): every token of a call must
// get the bits it gets alone (one CosSinRow), whatever the block cuts: runs longer than a block,
// runs broken by ids or by the batch, negative positions, angles crossing 2^20 (where blocks stop),
// rotary dims with 1-lane tails and partial rotary, both layouts and arithmetics. An attention
// factor other than 1 takes one row per token: the same comparison holds.
HWY_NOINLINE void TestComputedRowBlocksEqualTokensAlone() {
  ExpectDispatchedHere();
  struct Run {
    const char* name;
    int64_t batch, seq;
    std::vector<int64_t> ids;  // [batch, seq]
  };
  std::vector<Run> runs;
  auto run_from = [](const char* name, int64_t batch, int64_t seq, auto id) {
    Run r{name, batch, seq, {}};
    for (int64_t t = 0; t < batch * seq; ++t) r.ids.push_back(id(t));
    return r;
  };
  runs.push_back(run_from("0..149 (2 full blocks and a part)", 1, 150,
                          [](int64_t t) { return t; }));
  runs.push_back(run_from("-70..9", 1, 80, [](int64_t t) { return t - 70; }));
  runs.push_back(run_from("across 2^20", 1, 140, [](int64_t t) { return 1048500 + t; }));
  runs.push_back(run_from("two batches from 5 and 3", 2, 70,
                          [](int64_t t) { return t < 70 ? 5 + t : 3 + (t - 70); }));
  runs.push_back(run_from("broken runs", 1, 90, [](int64_t t) {
    return t < 40 ? t : t < 80 ? 60 + t : (t % 3);  // 0..39, 100..139, 2 0 1 2 0 ...
  }));
  for (const Run& r : runs)
  for (int64_t rotary : {2, 34, 128, 20})
  for (double factor : {1.0, 0.9})
  for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32})
  for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved}) {
    const int64_t heads = 3, head_dim = rotary == 20 ? 80 : rotary;
    const int64_t per_token = heads * head_dim;
    std::vector<float> whole(static_cast<size_t>(r.batch * r.seq * per_token));
    test::FillNormal(whole.data(), whole.size(), 21);
    std::vector<float> alone = whole;
    RopeParams p;
    p.pairs = pairs;
    p.arithmetic = a;
    p.rotary_dim = rotary;
    p.freqs.base = rotary == 2 ? 10000.0 : 500000.0;
    p.freqs.attention_factor = factor;
    p.exec.max_threads = 1;
    p.positions = Positions::Ids(r.ids.data());
    RopeTensors t;
    t.q = TensorBSHD(whole.data(), r.batch, r.seq, heads, head_dim);
    ASSERT_TRUE(ApplyRope(t, p).ok());
    for (size_t j = 0; j < r.ids.size(); ++j) {
      RopeParams one = p;
      one.positions = Positions::Offset(r.ids[j]);
      RopeTensors tj;
      tj.q = TensorBSHD(alone.data() + j * static_cast<size_t>(per_token), 1, 1, heads, head_dim);
      ASSERT_TRUE(ApplyRope(tj, one).ok());
    }
    ASSERT_EQ(std::memcmp(whole.data(), alone.data(), 4 * whole.size()), 0)
        << r.name << ", rotary " << rotary << ", factor " << factor << ", "
        << (a == RotationArithmetic::kF64 ? "kF64" : "kF32") << ", " << PairLayoutName(pairs);
  }
}

HWY_NOINLINE void TestThreadCounts() {
  ExpectDispatchedHere();
  for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32}) {
  RopeCase c;
  c.params.arithmetic = a;
  c.q = {2, 40, 16, 128};  // 2.6 MB touched: split across tasks
  c.k = {2, 40, 4, 128};
  c.params.positions = Positions::Offset(4000);
  c.in_place = false;
  c.params.exec.max_threads = 1;
  const test::RopeOutcome one = RunRopeCase(c);
  ASSERT_TRUE(one.status.ok());
  EXPECT_LE(one.max_ulp, test::MaxUlp(a));
  for (int threads : {2, 8, 0}) {
    c.params.exec.max_threads = threads;
    const test::RopeOutcome many = RunRopeCase(c);
    ASSERT_TRUE(many.status.ok());
    EXPECT_EQ(one.q, many.q) << threads << " threads";
    EXPECT_EQ(one.k, many.k) << threads << " threads";
  }
  }
}

// Out-of-place calls writing >= kernels::kStreamingStoreBytes use streaming stores on
// x86 where a head's outputs are 16-byte aligned: the bits must equal the same call in place
// (ordinary stores), for both layouts and arithmetics, full and partial rotary (the pass-through
// copy), aligned outputs (one streaming store per vector) and outputs offset by 4 and 1 floats
// (16-byte aligned: one per 16-byte block, StreamBlocks; unaligned: never streamed).
HWY_NOINLINE void TestStreamingStoresMatchInPlace() {
  ExpectDispatchedHere();
#if !HWY_ARCH_X86
  GTEST_SKIP() << "streaming stores are x86-only (and 7 MiB calls are slow under QEMU)";
#endif
  constexpr int64_t heads = 8, head_dim = 128;  // q alone: exactly the threshold's bytes of output
  static_assert(kernels::kStreamingStoreBytes % (heads * head_dim * 4) == 0, "whole tokens");
  const int64_t tokens = kernels::kStreamingStoreBytes / (heads * head_dim * 4);
  const size_t n = static_cast<size_t>(tokens * heads * head_dim);
  auto in = hwy::AllocateAligned<float>(n + 64);
  auto out = hwy::AllocateAligned<float>(n + 64);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  for (size_t i = 0; i < n + 64; ++i) in[i] = dist(rng);
  std::vector<float> expected(n);
  for (size_t lead : {0, 4, 1})
    for (int64_t rotary : {head_dim, head_dim - 32})
      for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
        for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32}) {
          RopeParams p;
          p.pairs = pairs;
          p.arithmetic = a;
          p.rotary_dim = rotary;
          p.positions = Positions::Offset(3);
          p.exec.max_threads = 1;
          std::copy(in.get() + lead, in.get() + lead + n, expected.begin());
          RopeTensors e;  // in place: ordinary stores
          e.q = TensorBSHD(expected.data(), 1, tokens, heads, head_dim);
          ASSERT_TRUE(ApplyRope(e, p).ok());
          std::fill(out.get(), out.get() + n + 64, -7.0f);
          RopeTensors t;
          t.q = TensorBSHD(in.get() + lead, 1, tokens, heads, head_dim);
          t.q_out = TensorBSHD(out.get() + lead, 1, tokens, heads, head_dim);
          ASSERT_TRUE(ApplyRope(t, p).ok());
          EXPECT_EQ(0, std::memcmp(out.get() + lead, expected.data(), n * sizeof(float)))
              << "lead " << lead << " rotary " << rotary << " " << PairLayoutName(pairs)
              << (a == RotationArithmetic::kF32 ? " f32" : " f64");
          for (size_t i = 0; i < lead; ++i) EXPECT_EQ(out[i], -7.0f);
          for (size_t i = lead + n; i < n + 64; ++i) ASSERT_EQ(out[i], -7.0f);
        }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(RopeKernelTest);
HWY_EXPORT_AND_TEST_P(RopeKernelTest, TestHeadDims);
HWY_EXPORT_AND_TEST_P(RopeKernelTest, TestStridesAndMisalignment);
HWY_EXPORT_AND_TEST_P(RopeKernelTest, TestQOnlyKOnlyGqa);
HWY_EXPORT_AND_TEST_P(RopeKernelTest, TestPositions);
HWY_EXPORT_AND_TEST_P(RopeKernelTest, TestFrequenciesAndFactor);
HWY_EXPORT_AND_TEST_P(RopeKernelTest, TestInverseUndoesForward);
HWY_EXPORT_AND_TEST_P(RopeKernelTest, TestTableAndCaches);
HWY_EXPORT_AND_TEST_P(RopeKernelTest, TestComputedRowBlocksEqualTokensAlone);
HWY_EXPORT_AND_TEST_P(RopeKernelTest, TestThreadCounts);
HWY_EXPORT_AND_TEST_P(RopeKernelTest, TestStreamingStoresMatchInPlace);
}  // namespace posenc
#endif
