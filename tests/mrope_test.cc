// M-RoPE (Qwen2-VL / Qwen2.5-VL sections, Qwen3-VL interleaved) on every SIMD target this CPU
// runs: against the double reference within the contract's bound (test::MaxUlp for f32, 1 + 3 *
// 2^-13 / 1 + 3 * 2^-16 ulp for f16 / bf16), text-only tokens (equal streams, or 1-D positions)
// bitwise equal to plain RoPE, every cos/sin source, every thread count bitwise; then validation,
// Hugging Face's own M-RoPE cos/sin (../shared/hf-configs/mrope_qwen_vl.ref.json) and the C API.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "posenc/freqs.h"
#include "tests/json_util.h"
#include "posenc/half.h"
#include "posenc/posenc.h"
#include "posenc/rope.h"
#include "posenc/targets.h"
#include "tests/rope_test_util.h"
#include "tests/shared_data.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/mrope_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"

#ifndef POSENC_TESTS_MROPE_TEST_HELPERS_
#define POSENC_TESTS_MROPE_TEST_HELPERS_
namespace posenc {
namespace mrope_test {

// Position ids [3, batch, seq] as Qwen2-VL's get_rope_index makes them: text tokens with equal
// streams, then an image block of grid_h x grid_w patches (t fixed, h = row, w = col), then text
// again continuing after the largest id; batch row b starts at offset 7 * b.
inline std::vector<int64_t> VisionTextIds(int64_t batch, int64_t seq, int64_t grid_h,
                                          int64_t grid_w) {
  std::vector<int64_t> ids(static_cast<size_t>(3 * batch * seq));
  for (int64_t b = 0; b < batch; ++b) {
    int64_t next = 7 * b, s = 0;
    const int64_t text = seq / 4;
    for (; s < text && s < seq; ++s, ++next)
      for (int j = 0; j < 3; ++j) ids[static_cast<size_t>((j * batch + b) * seq + s)] = next;
    int64_t largest = next;
    for (int64_t r = 0; r < grid_h && s < seq; ++r)
      for (int64_t c = 0; c < grid_w && s < seq; ++c, ++s) {
        const int64_t v[3] = {next, next + r, next + c};
        for (int j = 0; j < 3; ++j) {
          ids[static_cast<size_t>((j * batch + b) * seq + s)] = v[j];
          largest = std::max(largest, v[j]);
        }
      }
    next = largest + 1;
    for (; s < seq; ++s, ++next)
      for (int j = 0; j < 3; ++j) ids[static_cast<size_t>((j * batch + b) * seq + s)] = next;
  }
  return ids;
}

}  // namespace mrope_test
}  // namespace posenc
#endif

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

using test::RopeCase;
using test::RunRopeCase;

void ExpectDispatchedHere() { EXPECT_STREQ(hwy::TargetName(HWY_TARGET), ChosenTarget().c_str()); }

void ExpectWithinBound(const RopeCase& c, const char* what) {
  for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32}) {
    RopeCase ca = c;
    ca.params.arithmetic = a;
    const test::RopeOutcome o = RunRopeCase(ca);
    ASSERT_TRUE(o.status.ok()) << what << ": " << o.status.message();
    EXPECT_LE(o.max_ulp, test::MaxUlp(a))
        << what << (a == RotationArithmetic::kF32 ? " (f32)" : "");
    EXPECT_TRUE(o.outside_untouched) << what << ": wrote outside the output view";
  }
}

struct SectionSpec {
  int64_t head_dim, rotary_dim;
  std::vector<int64_t> section;
};

// Sectioned and interleaved, odd section sizes and tails, partial rotary, both pair layouts,
// inverse, in place and out, padded strides, misaligned buffers, int32 and int64 ids.
HWY_NOINLINE void TestMRopeMatchesReference() {
  ExpectDispatchedHere();
  const SectionSpec specs[] = {{128, 128, {16, 24, 24}}, {128, 128, {24, 20, 20}},
                               {38, 36, {5, 7, 6}},      {12, 10, {1, 2, 2}},
                               {80, 64, {32, 0, 0}},     {20, 20, {3, 3, 2, 2}}};
  for (const SectionSpec& sp : specs)
    for (bool interleaved : {false, true})
      for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
        for (int variant = 0; variant < 4; ++variant) {
          const int64_t batch = 2, seq = 9;
          const int64_t n = static_cast<int64_t>(sp.section.size());
          std::vector<int64_t> ids64 = mrope_test::VisionTextIds(batch, seq, 2, 3);
          if (n == 4) {  // a fourth stream: the w ids shifted
            for (int64_t i = 0; i < batch * seq; ++i)
              ids64.push_back(ids64[2 * batch * seq + i] + 5);
          }
          std::vector<int32_t> ids32(ids64.begin(), ids64.end());
          RopeCase c;
          c.q = {batch, seq,         3, sp.head_dim, variant & 1 ? 3 : 0, variant & 1 ? 5 : 0,
                 0,     variant == 3};
          c.k = {batch, seq, 1, sp.head_dim};
          c.params.rotary_dim = sp.rotary_dim;
          c.params.pairs = pairs;
          c.params.inverse = variant == 2;
          c.params.freqs.base = 1e6;
          c.params.mrope = {sp.section.data(), n, interleaved};
          c.params.positions = variant & 2 ? Positions::StreamIds(ids32.data(), n)
                                           : Positions::StreamIds(ids64.data(), n);
          c.in_place = variant != 1;
          c.lead = static_cast<size_t>(variant);
          c.seed = static_cast<uint32_t>(sp.head_dim * 10 + variant);
          char what[160];
          snprintf(what, sizeof(what), "head_dim %d sections %d interleaved %d %s variant %d",
                   static_cast<int>(sp.head_dim), static_cast<int>(n), interleaved,
                   PairLayoutName(pairs), variant);
          ExpectWithinBound(c, what);
        }
}

// Text-only tokens: three equal streams, 1-D positions with the sections, or one section with
// one stream of ids give plain RoPE's bits (f32 both arithmetics, on the fly, table, f32 and bf16
// caches).
HWY_NOINLINE void TestTextOnlyIsPlainRope() {
  ExpectDispatchedHere();
  const int64_t batch = 2, seq = 13, head_dim = 128;
  const int64_t section[3] = {16, 24, 24};
  std::vector<int64_t> ids(static_cast<size_t>(batch * seq));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(3 * i + 1000);
  std::vector<int64_t> streams;
  for (int j = 0; j < 3; ++j) streams.insert(streams.end(), ids.begin(), ids.end());
  std::shared_ptr<const RopeTable> table;
  Frequencies f;
  f.base = 1e6;
  ASSERT_TRUE(RopeTable::Create(head_dim, f, 2000, &table).ok());
  std::vector<float> cos(2000 * 64), sin(2000 * 64);
  for (int64_t p = 0; p < 2000; ++p)
    for (int64_t i = 0; i < 64; ++i) {
      cos[p * 64 + i] = table->cos_row(p)[i];
      sin[p * 64 + i] = table->sin_row(p)[i];
    }
  std::vector<uint16_t> cos16(cos.size()), sin16(sin.size());
  ASSERT_TRUE(ConvertFromF32(cos.data(), cos.size(), DType::kBF16, cos16.data()).ok());
  ASSERT_TRUE(ConvertFromF32(sin.data(), sin.size(), DType::kBF16, sin16.data()).ok());
  for (int source = 0; source < 4; ++source)
    for (bool interleaved : {false, true})
      for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32}) {
        RopeCase plain;
        plain.q = {batch, seq, 4, head_dim};
        plain.k = {batch, seq, 2, head_dim};
        plain.params.freqs = f;
        plain.params.arithmetic = a;
        plain.params.positions = Positions::Ids(ids.data());
        if (source == 1) plain.params.source = CosSinSource::Table(table.get());
        if (source >= 2) {
          CosSinCache cc;
          cc.cos = source == 2 ? static_cast<const void*>(cos.data()) : cos16.data();
          cc.sin = source == 2 ? static_cast<const void*>(sin.data()) : sin16.data();
          cc.dtype = source == 2 ? DType::kF32 : DType::kBF16;
          cc.rows = 2000;
          plain.params.source = CosSinSource::Cache(cc);
        }
        const test::RopeOutcome want = RunRopeCase(plain);
        ASSERT_TRUE(want.status.ok()) << want.status.message();
        // M-RoPE case m must give plain RoPE's bits for q and k.
        auto expect_plain = [&](const RopeCase& m, const char* what) {
          const test::RopeOutcome got = RunRopeCase(m);
          ASSERT_TRUE(got.status.ok()) << what << ": " << got.status.message();
          EXPECT_EQ(0, std::memcmp(got.q.data(), want.q.data(), want.q.size() * 4))
              << what << ", source " << source;
          EXPECT_EQ(0, std::memcmp(got.k.data(), want.k.data(), want.k.size() * 4))
              << what << ", source " << source;
        };
        RopeCase m = plain;
        m.params.mrope = {section, 3, interleaved};
        m.params.positions = Positions::StreamIds(streams.data(), 3);
        expect_plain(m, "three equal streams");
        m.params.positions = Positions::Ids(ids.data());
        expect_plain(m, "1-D positions with sections");
        // One section and one stream of ids: the stream's ids are the positions (a plan once
        // read offset 0 instead, here and in the reference alike).
        const int64_t whole[1] = {head_dim / 2};
        m.params.mrope = {whole, 1, interleaved};
        m.params.positions = Positions::StreamIds(ids.data(), 1);
        expect_plain(m, "one section, one stream");
      }
}

// Table and caches (f32, bf16, f16) with distinct streams: the row of each pair's stream.
HWY_NOINLINE void TestMRopeTableAndCaches() {
  ExpectDispatchedHere();
  const int64_t batch = 2, seq = 11, head_dim = 64, half = 32;
  const int64_t section[3] = {8, 12, 12};
  const std::vector<int64_t> ids = mrope_test::VisionTextIds(batch, seq, 3, 2);
  Frequencies f;
  f.base = 1e4;
  std::shared_ptr<const RopeTable> table;
  ASSERT_TRUE(RopeTable::Create(head_dim, f, 64, &table).ok());
  std::vector<float> cos(64 * half), sin(64 * half);
  for (int64_t p = 0; p < 64; ++p)
    for (int64_t i = 0; i < half; ++i) {
      cos[p * half + i] = table->cos_row(p)[i];
      sin[p * half + i] = table->sin_row(p)[i];
    }
  for (int source = 0; source < 4; ++source)
    for (bool interleaved : {false, true}) {
      std::vector<uint16_t> cos16(cos.size()), sin16(sin.size());
      const DType dt = source == 2 ? DType::kBF16 : source == 3 ? DType::kF16 : DType::kF32;
      RopeCase c;
      c.q = {batch, seq, 3, head_dim, 1, 2, 3};
      c.k = {batch, seq, 1, head_dim};
      c.params.mrope = {section, 3, interleaved};
      c.params.positions = Positions::StreamIds(ids.data(), 3);
      if (source == 0) {
        c.params.source = CosSinSource::Table(table.get());
      } else {
        CosSinCache cc;
        cc.dtype = dt;
        cc.rows = 64;
        if (dt == DType::kF32) {
          cc.cos = cos.data();
          cc.sin = sin.data();
        } else {
          ASSERT_TRUE(ConvertFromF32(cos.data(), cos.size(), dt, cos16.data()).ok());
          ASSERT_TRUE(ConvertFromF32(sin.data(), sin.size(), dt, sin16.data()).ok());
          cc.cos = cos16.data();
          cc.sin = sin16.data();
        }
        c.params.source = CosSinSource::Cache(cc);
      }
      char what[64];
      snprintf(what, sizeof(what), "source %d interleaved %d", source, interleaved);
      ExpectWithinBound(c, what);
    }
}

// bf16 / f16 tensors: within 1 + 3 * 2^-(23 - p) ulp_T of the exact result (rope.h).
HWY_NOINLINE void TestMRopeHalfTypes() {
  ExpectDispatchedHere();
  const int64_t batch = 2, seq = 9, heads = 3, head_dim = 128;
  const int64_t section[3] = {24, 20, 20};
  const std::vector<int64_t> ids = mrope_test::VisionTextIds(batch, seq, 2, 3);
  const size_t n = static_cast<size_t>(batch * seq * heads * head_dim);
  std::vector<float> values(n);
  test::FillNormal(values.data(), n, 5);
  for (DType dt : {DType::kBF16, DType::kF16})
    for (bool interleaved : {false, true}) {
      std::vector<uint16_t> in(n), out(n);
      ASSERT_TRUE(ConvertFromF32(values.data(), n, dt, in.data()).ok());
      std::vector<uint16_t> original = in;
      RopeTensors t;
      t.q = TensorBSHD(in.data(), dt, batch, seq, heads, head_dim);
      t.q_out = TensorBSHD(out.data(), dt, batch, seq, heads, head_dim);
      RopeParams p;
      p.mrope = {section, 3, interleaved};
      p.positions = Positions::StreamIds(ids.data(), 3);
      p.freqs.base = 5e5;
      ASSERT_TRUE(ApplyRope(t, p).ok());
      std::vector<double> exact(n);
      ASSERT_TRUE(reference::ApplyRopeF64(t, p, exact.data(), nullptr).ok());
      const double bound =
          dt == DType::kF16 ? 1 + 3 * std::ldexp(1.0, -13) : 1 + 3 * std::ldexp(1.0, -16);
      EXPECT_LE(reference::MaxPairUlpError(t.q_out, t.q, exact.data(), head_dim, PairLayout::kHalf),
                bound)
          << DTypeName(dt);
      EXPECT_EQ(in, original);
      // In place gives the same bits.
      std::vector<uint16_t> inplace = in;
      RopeTensors ti;
      ti.q = TensorBSHD(inplace.data(), dt, batch, seq, heads, head_dim);
      ASSERT_TRUE(ApplyRope(ti, p).ok());
      EXPECT_EQ(inplace, out);
    }
}

// Every thread count gives the same bits (a call large enough to be split).
HWY_NOINLINE void TestMRopeThreadCounts() {
  ExpectDispatchedHere();
  const int64_t batch = 2, seq = 160, head_dim = 128;
  const int64_t section[3] = {16, 24, 24};
  const std::vector<int64_t> ids = mrope_test::VisionTextIds(batch, seq, 8, 12);
  RopeCase c;
  c.q = {batch, seq, 8, head_dim};
  c.k = {batch, seq, 2, head_dim};
  c.params.mrope = {section, 3, false};
  c.params.positions = Positions::StreamIds(ids.data(), 3);
  c.params.exec.max_threads = 1;
  const test::RopeOutcome one = RunRopeCase(c);
  ASSERT_TRUE(one.status.ok()) << one.status.message();
  EXPECT_LE(one.max_ulp, test::kMaxUlp);
  for (int threads : {0, 2, 3}) {
    c.params.exec.max_threads = threads;
    const test::RopeOutcome o = RunRopeCase(c);
    ASSERT_TRUE(o.status.ok());
    EXPECT_EQ(0, std::memcmp(o.q.data(), one.q.data(), one.q.size() * 4)) << threads;
    EXPECT_EQ(0, std::memcmp(o.k.data(), one.k.data(), one.k.size() * 4)) << threads;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(MRopeKernelTest);
HWY_EXPORT_AND_TEST_P(MRopeKernelTest, TestMRopeMatchesReference);
HWY_EXPORT_AND_TEST_P(MRopeKernelTest, TestTextOnlyIsPlainRope);
HWY_EXPORT_AND_TEST_P(MRopeKernelTest, TestMRopeTableAndCaches);
HWY_EXPORT_AND_TEST_P(MRopeKernelTest, TestMRopeHalfTypes);
HWY_EXPORT_AND_TEST_P(MRopeKernelTest, TestMRopeThreadCounts);

namespace {

// A q of [batch, seq, 1, 128] whose first half is 1 and second half 0: rotating it (f64
// arithmetic, half pairs) writes cos_i to element i and sin_i to element 64 + i exactly.
std::vector<float> UnitHeads(int64_t tokens, int64_t head_dim) {
  std::vector<float> q(static_cast<size_t>(tokens * head_dim), 0.f);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t i = 0; i < head_dim / 2; ++i) q[static_cast<size_t>(t * head_dim + i)] = 1.f;
  return q;
}

TEST(MRopeErrorsTest, NamesArgumentAndWritesNothing) {
  const int64_t batch = 1, seq = 4, head_dim = 128;
  std::vector<float> q(static_cast<size_t>(batch * seq * 2 * head_dim), 0.5f);
  const std::vector<float> before = q;
  std::vector<int64_t> ids(static_cast<size_t>(3 * batch * seq), 2);
  int64_t good[3] = {16, 24, 24}, bad_sum[3] = {16, 24, 23}, negative[3] = {-1, 33, 32};
  struct Case {
    MRopeSections mrope;
    Positions positions;
    CosSinSource source;
    const char* expect;
  };
  CosSinCache per_token;
  per_token.kind = CosSinCache::Kind::kPerToken;
  std::vector<float> cs(static_cast<size_t>(batch * seq * 64), 0.5f);
  per_token.cos = cs.data();
  per_token.sin = cs.data();
  const Case cases[] = {
      {{bad_sum, 3, false},
       Positions::StreamIds(ids.data(), 3),
       {},
       "mrope.section = [16, 24, 23] sums to 63: must sum to rotary_dim / 2 = 64"},
      {{negative, 3, false},
       Positions::StreamIds(ids.data(), 3),
       {},
       "mrope.section[0] = -1: must be in [0, rotary_dim / 2 = 64]"},
      {{good, 5, false},
       Positions::StreamIds(ids.data(), 3),
       {},
       "mrope.num_sections = 5: must be in [0, 4]"},
      {{nullptr, 3, false},
       Positions::StreamIds(ids.data(), 3),
       {},
       "mrope.section is null but mrope.num_sections = 3"},
      {{good, 3, false},
       Positions::StreamIds(ids.data(), 2),
       {},
       "positions.streams = 2: must equal mrope.num_sections = 3"},
      {{},
       Positions::StreamIds(ids.data(), 3),
       {},
       "positions.kind = kStreamIds64: multi-stream ids need mrope sections"},
      {{good, 3, false},
       Positions::StreamIds(static_cast<const int64_t*>(nullptr), 3),
       {},
       "positions.ids64 is null"},
      {{good, 3, false},
       Positions::StreamIds(ids.data(), 3),
       CosSinSource::Cache(per_token),
       "with source.cache.kind = kPerToken"},
  };
  for (const Case& c : cases) {
    RopeTensors t;
    t.q = TensorBSHD(q.data(), batch, seq, 2, head_dim);
    RopeParams p;
    p.mrope = c.mrope;
    p.positions = c.positions;
    p.source = c.source;
    for (int ref = 0; ref < 2; ++ref) {
      const Status st = ref ? reference::ApplyRope(t, p) : ApplyRope(t, p);
      EXPECT_FALSE(st.ok()) << c.expect;
      EXPECT_NE(st.message().find(c.expect), std::string::npos) << st.message();
      EXPECT_EQ(q, before);
    }
  }
  // Stream ids are rejected by the other entries.
  RopeTensors t;
  t.q = TensorBSHD(q.data(), batch, seq, 2, head_dim);
  RopeParams p;
  p.positions = Positions::StreamIds(ids.data(), 3);
  p.source = CosSinSource::Table(nullptr);
  // A stream beyond the table's rows names the stream.
  std::shared_ptr<const RopeTable> table;
  ASSERT_TRUE(RopeTable::Create(head_dim, Frequencies(), 3, &table).ok());
  p.source = CosSinSource::Table(table.get());
  p.mrope = {good, 3, false};
  ids[static_cast<size_t>(2 * batch * seq + 1)] = 9;  // stream 2 (w), token s = 1
  const Status st = ApplyRope(t, p);
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("stream 2 of positions[b=0, s=1] = 9"), std::string::npos)
      << st.message();
  EXPECT_EQ(q, before);
}

// HF's own cos/sin (transformers 5.24 Qwen2_5_VLRotaryEmbedding + apply_multimodal_rotary_pos_emb
// and Qwen3VLTextRotaryEmbedding) for the position ids of the file, via ApplyRope(config).
TEST(MRopeHfGoldenTest, QwenVlCosSin) {
  POSENC_REQUIRE_SHARED("hf-configs/mrope_qwen_vl.ref.json");
  const nlohmann::json ref =
      test::ReadJsonFile(test::SharedPath("hf-configs/mrope_qwen_vl.ref.json"));
  ASSERT_EQ(ref.size(), 2u);
  for (const auto& [name, m] : ref.items()) {
    RopeConfig config;
    ASSERT_TRUE(ParseHfConfig(m["config_json"].dump(), &config).ok()) << name;
    ASSERT_TRUE(config.mrope.present()) << name;
    const auto& pid = m["position_ids"];  // [3, batch, seq]
    const int64_t batch = static_cast<int64_t>(pid[0].size());
    const int64_t seq = static_cast<int64_t>(pid[0][0].size());
    std::vector<int64_t> ids;
    int64_t max_id = 0;
    for (const auto& stream : pid)
      for (const auto& row : stream)
        for (const auto& v : row) {
          ids.push_back(v.get<int64_t>());
          max_id = std::max(max_id, ids.back());
        }
    const int64_t head_dim = config.head_dim, half = head_dim / 2;
    ASSERT_EQ(head_dim, 128) << name;
    std::vector<float> q = UnitHeads(batch * seq, head_dim);
    RopeTensors t;
    t.q = TensorBSHD(q.data(), batch, seq, 1, head_dim);
    RopeParams p;
    p.positions = Positions::StreamIds(ids.data(), 3);
    const Status st = ApplyRope(t, config, p);
    ASSERT_TRUE(st.ok()) << name << ": " << st.message();
    // Against HF's float64 values: our cos/sin are the f32 roundings of the exact values (half
    // an ulp, <= 2^-25 for |v| <= 1, plus the engine's 2^-52). Against HF's float32 values: HF
    // rounds inv_freq to f32 (relative 2^-24) and the angle p * inv_freq to f32, so its angle is
    // off by up to ~p * 2^-23 rad; allow (max_id + 1) * 2^-21.
    const double tol64 = std::ldexp(1.0, -24);
    const double tol32 = static_cast<double>(max_id + 1) * std::ldexp(1.0, -21);
    double worst64 = 0, worst32 = 0;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t s = 0; s < seq; ++s)
        for (int64_t i = 0; i < head_dim; ++i) {
          // HF's rows repeat the pair angles twice ([cos, cos]); element i and half + i of ours
          // are cos_i and sin_i.
          const int64_t pair = i % half;
          const double got_cos = q[static_cast<size_t>((b * seq + s) * head_dim + pair)];
          const double got_sin = q[static_cast<size_t>((b * seq + s) * head_dim + half + pair)];
          worst64 = std::max({worst64, std::fabs(got_cos - m["cos_f64"][b][s][i].get<double>()),
                              std::fabs(got_sin - m["sin_f64"][b][s][i].get<double>())});
          worst32 = std::max({worst32, std::fabs(got_cos - m["cos_f32"][b][s][i].get<double>()),
                              std::fabs(got_sin - m["sin_f32"][b][s][i].get<double>())});
        }
    EXPECT_LE(worst64, tol64) << name;
    EXPECT_LE(worst32, tol32) << name;
    // And a wrong layout (interleaved flipped) is far off: the test can fail.
    RopeConfig flipped = config;
    flipped.mrope.interleaved = !flipped.mrope.interleaved;
    std::vector<float> q2 = UnitHeads(batch * seq, head_dim);
    t.q = TensorBSHD(q2.data(), batch, seq, 1, head_dim);
    ASSERT_TRUE(ApplyRope(t, flipped, p).ok());
    EXPECT_NE(q2, q) << name;
  }
}

// A Qwen2.5-VL / Qwen3-VL config applies its M-RoPE: equal to ApplyRope with the sections by
// hand, text-only (1-D ids) equal to plain RoPE with the config's frequencies.
TEST(MRopeConfigTest, ConfigUsesModelSections) {
  for (const char* file : {"qwen2.5-vl-7b-instruct.json", "qwen3-vl-8b-instruct.json"}) {
    RopeConfig config;
    ASSERT_TRUE(
        LoadHfConfig(std::string(POSENC_SOURCE_DIR) + "/tools/configs/" + file, &config).ok())
        << file;
    ASSERT_TRUE(config.mrope.present()) << file;
    RopeFrequencies f;
    ASSERT_TRUE(ComputeFrequencies(config, 0, &f).ok());
    const int64_t batch = 2, seq = 10, head_dim = config.head_dim;
    const std::vector<int64_t> ids = mrope_test::VisionTextIds(batch, seq, 2, 2);
    std::vector<float> a(static_cast<size_t>(batch * seq * 2 * head_dim));
    test::FillNormal(a.data(), a.size(), 3);
    std::vector<float> b = a, c = a, d = a;
    RopeParams p;
    p.positions = Positions::StreamIds(ids.data(), 3);
    RopeTensors t;
    t.q = TensorBSHD(a.data(), batch, seq, 2, head_dim);
    ASSERT_TRUE(ApplyRope(t, config, p).ok()) << file;
    RopeParams by_hand = p;
    by_hand.freqs.inv_freq = f.inv_freq.data();
    by_hand.freqs.inv_freq_len = static_cast<int64_t>(f.inv_freq.size());
    by_hand.mrope = {config.mrope.section.data(), 3, config.mrope.interleaved};
    t.q = TensorBSHD(b.data(), batch, seq, 2, head_dim);
    ASSERT_TRUE(ApplyRope(t, by_hand).ok());
    EXPECT_EQ(a, b) << file;
    by_hand.mrope = {config.mrope.section.data(), 3, !config.mrope.interleaved};
    t.q = TensorBSHD(c.data(), batch, seq, 2, head_dim);
    ASSERT_TRUE(ApplyRope(t, by_hand).ok());
    EXPECT_NE(a, c) << file;  // the layout matters for these ids
    // Text-only: stream 0's ids as 1-D positions through the config = plain RoPE.
    std::vector<int64_t> text(ids.begin(), ids.begin() + batch * seq);
    std::vector<float> e = d;
    p.positions = Positions::Ids(text.data());
    t.q = TensorBSHD(d.data(), batch, seq, 2, head_dim);
    ASSERT_TRUE(ApplyRope(t, config, p).ok());
    RopeParams plain;
    plain.positions = Positions::Ids(text.data());
    plain.freqs = by_hand.freqs;
    t.q = TensorBSHD(e.data(), batch, seq, 2, head_dim);
    ASSERT_TRUE(ApplyRope(t, plain).ok());
    EXPECT_EQ(d, e) << file;
  }
}

// The C API: stream ids + sections, equal to the C++ call; the config path; errors name the field.
TEST(MRopeCApiTest, StreamIdsAndSections) {
  const int64_t batch = 2, seq = 9, head_dim = 64;
  const std::vector<int64_t> ids = mrope_test::VisionTextIds(batch, seq, 2, 3);
  std::vector<float> a(static_cast<size_t>(batch * seq * head_dim));
  test::FillNormal(a.data(), a.size(), 11);
  std::vector<float> b = a;
  const int64_t section[3] = {8, 12, 12};
  posenc_tensor q = posenc_tensor_bshd(a.data(), POSENC_F32, batch, seq, 1, head_dim);
  posenc_rope_params cp;
  posenc_rope_params_init(&cp);
  cp.positions.kind = POSENC_POSITIONS_STREAM_IDS64;
  cp.positions.ids64 = ids.data();
  cp.positions.streams = 3;
  cp.mrope_section = section;
  cp.mrope_section_len = 3;
  cp.mrope_interleaved = 1;
  ASSERT_EQ(posenc_rope_apply(&q, nullptr, nullptr, nullptr, &cp), POSENC_OK)
      << posenc_last_error();
  RopeTensors t;
  t.q = TensorBSHD(b.data(), batch, seq, 1, head_dim);
  RopeParams p;
  p.positions = Positions::StreamIds(ids.data(), 3);
  p.mrope = {section, 3, true};
  ASSERT_TRUE(ApplyRope(t, p).ok());
  EXPECT_EQ(a, b);
  cp.positions.streams = 2;
  EXPECT_EQ(posenc_rope_apply(&q, nullptr, nullptr, nullptr, &cp), POSENC_INVALID_ARGUMENT);
  EXPECT_NE(std::string(posenc_last_error()).find("positions.streams = 2"), std::string::npos);
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace posenc
#endif
