// RerotateRope on bf16 / f16 keys, on every SIMD target, both ways of getting the rows (exact: on
// the fly; rows: RopeTables), in place and out, odd head sizes (vector tails), partial rotary,
// padded head strides and a buffer misaligned by one element:
// - within the stated half bound of the double reference (posenc/shift.h): exact 1 + 3 * 2^(p-23),
//   rows 1 + 7 * 2^(p-23) ulp_T of max(|x|, |y|), plus 2^(p-23) because the reference is run on
//   the widened inputs and rounded to f32 (half an ulp_f32 of an output below 2M);
// - bitwise the f32 kernel with f32 arithmetic on the widened inputs, rounded once (the half
//   kernels are that rotation and one rounding);
// - pass-through elements, padding and the input (out of place) untouched;
// - the same bits for 1 and 2 threads on a call large enough to be split.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "posenc/half.h"
#include "posenc/rope.h"
#include "posenc/shift.h"
#include "posenc/targets.h"
#include "tests/rope_test_util.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/rerotate_half_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"

#ifndef POSENC_TESTS_REROTATE_HALF_HELPERS_
#define POSENC_TESTS_REROTATE_HALF_HELPERS_
namespace posenc {
namespace rerotate_half_test {

uint16_t Round(DType dtype, double v) {
  return dtype == DType::kBF16 ? reference::RoundToBF16(v) : reference::RoundToF16(v);
}

// Frequencies of both sides (a longrope-like change), their tables, the positions.
struct Sides {
  std::vector<double> w_from, w_to;
  std::vector<int64_t> from, to;
  std::shared_ptr<const RopeTable> from_table, to_table;
};

// Rows of each table: small, as every case builds its own (QEMU runs this test per SVE length).
constexpr int64_t kTablePositions = 2000;

Sides MakeSides(int64_t rotary, int64_t tokens, bool tables) {
  Sides s;
  const size_t half = static_cast<size_t>(rotary / 2);
  s.w_from.resize(half);
  s.w_to.resize(half);
  for (size_t i = 0; i < half; ++i) {
    s.w_from[i] = std::pow(1e4, -2.0 * static_cast<double>(i) / static_cast<double>(rotary));
    s.w_to[i] = s.w_from[i] / (1.0 + 0.37 * static_cast<double>(i));
  }
  s.from.resize(static_cast<size_t>(tokens));
  s.to.resize(s.from.size());
  for (size_t i = 0; i < s.from.size(); ++i) {
    s.from[i] = static_cast<int64_t>((i * 977) % 1900 + 100);  // inside kTablePositions
    s.to[i] = s.from[i] - static_cast<int64_t>(i % 50);
  }
  if (!tables) return s;
  Frequencies f;
  f.inv_freq = s.w_from.data();
  f.inv_freq_len = rotary / 2;
  f.attention_factor = 1.2;
  EXPECT_TRUE(RopeTable::Create(rotary, f, kTablePositions, &s.from_table).ok());
  f.inv_freq = s.w_to.data();
  f.attention_factor = 1.1;
  EXPECT_TRUE(RopeTable::Create(rotary, f, kTablePositions, &s.to_table).ok());
  return s;
}

RerotateParams MakeParams(const Sides& s, int64_t rotary, PairLayout pairs, bool tables) {
  RerotateParams rp;
  rp.pairs = pairs;
  rp.rotary_dim = rotary;
  rp.from_freqs.inv_freq = s.w_from.data();
  rp.from_freqs.inv_freq_len = rotary / 2;
  rp.from_freqs.attention_factor = 1.2;
  rp.to_freqs.inv_freq = s.w_to.data();
  rp.to_freqs.inv_freq_len = rotary / 2;
  rp.to_freqs.attention_factor = 1.1;  // ratio 0.9166 <= 1
  rp.from_positions = Positions::Ids(static_cast<const int64_t*>(s.from.data()));
  rp.to_positions = Positions::Ids(static_cast<const int64_t*>(s.to.data()));
  if (tables) {
    rp.from_source = CosSinSource::Table(s.from_table.get());
    rp.to_source = CosSinSource::Table(s.to_table.get());
  }
  return rp;
}

struct HalfCase {
  DType dtype;
  int64_t batch, seq, heads, head_dim, rotary;
  int64_t head_pad;
  size_t lead;  // elements in front of the data: misaligned for every vector width
  PairLayout pairs;
  bool in_place, tables;
};

std::string Name(const HalfCase& c) {
  return std::string(DTypeName(c.dtype)) + " d=" + std::to_string(c.head_dim) +
         " r=" + std::to_string(c.rotary) + " pad=" + std::to_string(c.head_pad) +
         " lead=" + std::to_string(c.lead) + " " + PairLayoutName(c.pairs) +
         (c.in_place ? " in place" : " out of place") + (c.tables ? " tables" : " exact");
}

void CheckCase(const HalfCase& c) {
  SCOPED_TRACE(Name(c));
  const int64_t stride_h = c.head_dim + c.head_pad;
  const size_t n = static_cast<size_t>(c.batch * c.seq * c.heads * stride_h);
  const size_t dense = static_cast<size_t>(c.batch * c.seq * c.heads * c.head_dim);
  const Sides sides = MakeSides(c.rotary, c.batch * c.seq, c.tables);
  const RerotateParams rp = MakeParams(sides, c.rotary, c.pairs, c.tables);
  std::vector<float> values(n);
  test::FillNormal(values.data(), n, static_cast<uint32_t>(c.head_dim * 7 + c.rotary));
  const uint16_t kSentinel = 0x7E7E;
  std::vector<uint16_t> kbuf(n + c.lead + 8, kSentinel), obuf(n + c.lead + 8, kSentinel);
  uint16_t* k = kbuf.data() + c.lead;
  uint16_t* o = obuf.data() + c.lead;
  for (size_t i = 0; i < n; ++i) k[i] = Round(c.dtype, values[i]);
  auto view = [&](void* data, DType dtype, int64_t sh) {
    Tensor t = TensorBSHD(data, dtype, c.batch, c.seq, c.heads, c.head_dim);
    t.strides[2] = sh;
    t.strides[1] = c.heads * sh;
    t.strides[0] = c.seq * c.heads * sh;
    return t;
  };
  const std::vector<uint16_t> before(kbuf);
  const Tensor kv = view(k, c.dtype, stride_h);
  ASSERT_TRUE(RerotateRope(kv, c.in_place ? Tensor() : view(o, c.dtype, stride_h), rp).ok());
  const std::vector<uint16_t>& after = c.in_place ? kbuf : obuf;
  const uint16_t* got = c.in_place ? k : o;

  // The widened inputs, dense: the reference on them (f32 result) and the f32 kernel with f32
  // arithmetic (the half kernels' rotation before its one rounding).
  std::vector<uint16_t> in_dense(dense);
  for (int64_t t = 0; t < c.batch * c.seq * c.heads; ++t)
    std::memcpy(&in_dense[static_cast<size_t>(t * c.head_dim)], &before[c.lead + t * stride_h],
                static_cast<size_t>(c.head_dim) * 2);
  std::vector<float> widened(dense);
  ASSERT_TRUE(ConvertToF32(in_dense.data(), c.dtype, dense, widened.data()).ok());
  std::vector<float> ref = widened, f32k = widened;
  ASSERT_TRUE(reference::RerotateRope(view(ref.data(), DType::kF32, c.head_dim), Tensor(), rp).ok());
  RerotateParams p32 = rp;
  p32.arithmetic = RotationArithmetic::kF32;
  ASSERT_TRUE(RerotateRope(view(f32k.data(), DType::kF32, c.head_dim), Tensor(), p32).ok());

  const std::vector<double> exact(ref.begin(), ref.end());
  const double p = c.dtype == DType::kBF16 ? 7 : 10;
  const double bound = 1.0 + ((c.tables ? 7.0 : 3.0) + 1.0) * std::ldexp(1.0, p - 23);
  const Tensor got_view = view(const_cast<uint16_t*>(got), c.dtype, stride_h);
  const Tensor in_view = view(const_cast<uint16_t*>(before.data() + c.lead), c.dtype, stride_h);
  EXPECT_LE(reference::MaxPairUlpError(got_view, in_view, exact.data(), c.rotary, c.pairs), bound);

  size_t mismatches = 0;
  for (int64_t t = 0; t < c.batch * c.seq * c.heads; ++t)
    for (int64_t j = 0; j < c.head_dim; ++j) {
      const uint16_t want = j < c.rotary ? Round(c.dtype, f32k[static_cast<size_t>(t * c.head_dim + j)])
                                         : in_dense[static_cast<size_t>(t * c.head_dim + j)];
      mismatches += got[t * stride_h + j] != want;
    }
  EXPECT_EQ(mismatches, 0u) << "not the f32 rotation rounded once (or pass-through changed)";
  // Padding between heads and around the buffer: untouched.
  size_t touched = 0;
  for (size_t i = 0; i < after.size(); ++i) {
    const bool inside = i >= c.lead && i < c.lead + n &&
                        static_cast<int64_t>((i - c.lead) % static_cast<size_t>(stride_h)) < c.head_dim;
    if (!inside) touched += after[i] != (c.in_place ? before[i] : kSentinel);
  }
  EXPECT_EQ(touched, 0u);
  if (!c.in_place) EXPECT_EQ(kbuf, before);
}

}  // namespace rerotate_half_test
}  // namespace posenc
#endif

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

void ExpectDispatchedHere() { EXPECT_STREQ(hwy::TargetName(HWY_TARGET), ChosenTarget().c_str()); }

HWY_NOINLINE void TestHalfRerotate() {
  ExpectDispatchedHere();
  using rerotate_half_test::HalfCase;
  for (DType dt : {DType::kBF16, DType::kF16})
    for (int64_t head_dim : {int64_t{2}, int64_t{34}, int64_t{66}, int64_t{128}})
      for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
        for (bool tables : {false, true})
          for (bool in_place : {true, false}) {
            const int64_t rotary = head_dim == 128 ? 96 : head_dim;  // partial: pass-through tail
            const int64_t pad = head_dim == 34 ? 3 : 0;
            const size_t lead = in_place ? 1 : 3;
            rerotate_half_test::CheckCase(
                HalfCase{dt, 2, 5, 3, head_dim, rotary, pad, lead, pairs, in_place, tables});
          }
}

// A call large enough to be split across threads (768 KiB of bf16 / f16, 1.5 MiB read and
// written: above the 1 MiB below which a call runs serially): 1 and 2 threads, and the caller's
// arena, give the same bits.
HWY_NOINLINE void TestHalfRerotateThreads() {
  ExpectDispatchedHere();
  const int64_t seq = 384, heads = 8, head_dim = 128;
  const size_t n = static_cast<size_t>(seq * heads * head_dim);
  const rerotate_half_test::Sides sides = rerotate_half_test::MakeSides(head_dim, seq, true);
  std::vector<float> values(n);
  test::FillNormal(values.data(), n, 5);
  for (DType dt : {DType::kBF16, DType::kF16})
    for (bool tables : {false, true}) {
      std::vector<uint16_t> in(n);
      for (size_t i = 0; i < n; ++i) in[i] = rerotate_half_test::Round(dt, values[i]);
      RerotateParams rp = rerotate_half_test::MakeParams(sides, head_dim, PairLayout::kHalf, tables);
      std::vector<uint16_t> want = in;
      rp.exec.max_threads = 1;
      ASSERT_TRUE(RerotateRope(TensorBSHD(want.data(), dt, 1, seq, heads, head_dim), Tensor(), rp).ok());
      EXPECT_NE(want, in);
      for (int threads : {2, 0}) {
        std::vector<uint16_t> got = in;
        rp.exec.max_threads = threads;
        ASSERT_TRUE(RerotateRope(TensorBSHD(got.data(), dt, 1, seq, heads, head_dim), Tensor(), rp).ok());
        EXPECT_EQ(got, want) << DTypeName(dt) << " threads " << threads;
      }
    }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(RerotateHalfTest);
HWY_EXPORT_AND_TEST_P(RerotateHalfTest, TestHalfRerotate);
HWY_EXPORT_AND_TEST_P(RerotateHalfTest, TestHalfRerotateThreads);
}  // namespace posenc
#endif
