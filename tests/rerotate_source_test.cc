// RerotateRope's cos/sin sources (posenc/shift.h), on every SIMD target, f32 keys:
// - bitwise, where the contract says so: every row-way combination (a table on either side or
//   both; by-position and per-token caches holding the tables' values; a bf16 cache and an f32
//   cache holding the same (widened) values) gives the bits of both sides as tables, and a side on
//   the fly inside the row way computes exactly its table's row;
// - within the row way's bound of the double reference: B + 4 ulp of max(|x|, |y|) (6 with kF64,
//   7 with kF32), plus 1 for the reference's own rounding to f32; and not bitwise the exact way
//   (which the test shows it is not required to be: only within both bounds of each other);
// - errors of a side's source name the side and write nothing.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "posenc/half.h"
#include "posenc/posenc.h"
#include "posenc/rope.h"
#include "posenc/shift.h"
#include "posenc/targets.h"
#include "tests/rope_test_util.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/rerotate_source_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"

#ifndef POSENC_TESTS_REROTATE_SOURCE_HELPERS_
#define POSENC_TESTS_REROTATE_SOURCE_HELPERS_
namespace posenc {
namespace rerotate_source_test {

// Table / cache rows: small, as every case builds its own (QEMU runs this test per SVE length).
constexpr int64_t kBatch = 2, kSeq = 7, kHeads = 3, kMaxPos = 1600;

// Both sides: frequencies, factors, positions, their tables and caches with the tables' values.
struct Setup {
  int64_t rotary;
  std::vector<double> w_from, w_to;
  std::vector<int64_t> from, to;
  std::shared_ptr<const RopeTable> from_table, to_table;
  std::vector<float> from_cos, from_sin, to_cos, to_sin;          // by position, [kMaxPos, r/2]
  std::vector<float> from_tok_cos, from_tok_sin, to_tok_cos, to_tok_sin;  // per token
  std::vector<uint16_t> from_cos16, from_sin16;                   // bf16 by position
  std::vector<float> from_cos16w, from_sin16w;                    // the same widened
};

void Rows(const RopeTable& t, std::vector<float>* cos, std::vector<float>* sin) {
  const size_t half = static_cast<size_t>(t.rotary_dim() / 2);
  cos->assign(t.cos_row(0), t.cos_row(0) + t.max_positions() * half);
  sin->assign(t.sin_row(0), t.sin_row(0) + t.max_positions() * half);
}

void PerToken(const RopeTable& t, const std::vector<int64_t>& pos, std::vector<float>* cos,
              std::vector<float>* sin) {
  const size_t half = static_cast<size_t>(t.rotary_dim() / 2);
  cos->clear();
  sin->clear();
  for (int64_t p : pos) {
    cos->insert(cos->end(), t.cos_row(p), t.cos_row(p) + half);
    sin->insert(sin->end(), t.sin_row(p), t.sin_row(p) + half);
  }
}

std::unique_ptr<Setup> MakeSetup(int64_t rotary, double m_from, double m_to) {
  auto s = std::make_unique<Setup>();
  s->rotary = rotary;
  const size_t half = static_cast<size_t>(rotary / 2);
  s->w_from.resize(half);
  s->w_to.resize(half);
  for (size_t i = 0; i < half; ++i) {
    s->w_from[i] = std::pow(1e4, -2.0 * static_cast<double>(i) / static_cast<double>(rotary));
    s->w_to[i] = s->w_from[i] / (1.0 + 0.5 * static_cast<double>(i));
  }
  for (int64_t t = 0; t < kBatch * kSeq; ++t) {
    s->from.push_back((t * 613) % 1400 + 100);
    s->to.push_back(s->from.back() + 37 - t);
  }
  Frequencies f;
  f.inv_freq = s->w_from.data();
  f.inv_freq_len = rotary / 2;
  f.attention_factor = m_from;
  EXPECT_TRUE(RopeTable::Create(rotary, f, kMaxPos, &s->from_table).ok());
  f.inv_freq = s->w_to.data();
  f.attention_factor = m_to;
  EXPECT_TRUE(RopeTable::Create(rotary, f, kMaxPos, &s->to_table).ok());
  Rows(*s->from_table, &s->from_cos, &s->from_sin);
  Rows(*s->to_table, &s->to_cos, &s->to_sin);
  PerToken(*s->from_table, s->from, &s->from_tok_cos, &s->from_tok_sin);
  PerToken(*s->to_table, s->to, &s->to_tok_cos, &s->to_tok_sin);
  const size_t n = s->from_cos.size();
  s->from_cos16.resize(n);
  s->from_sin16.resize(n);
  s->from_cos16w.resize(n);
  s->from_sin16w.resize(n);
  EXPECT_TRUE(ConvertFromF32(s->from_cos.data(), n, DType::kBF16, s->from_cos16.data()).ok());
  EXPECT_TRUE(ConvertFromF32(s->from_sin.data(), n, DType::kBF16, s->from_sin16.data()).ok());
  EXPECT_TRUE(ConvertToF32(s->from_cos16.data(), DType::kBF16, n, s->from_cos16w.data()).ok());
  EXPECT_TRUE(ConvertToF32(s->from_sin16.data(), DType::kBF16, n, s->from_sin16w.data()).ok());
  return s;
}

RerotateParams BaseParams(const Setup& s, PairLayout pairs, RotationArithmetic a, double m_from,
                          double m_to) {
  RerotateParams rp;
  rp.pairs = pairs;
  rp.arithmetic = a;
  rp.rotary_dim = s.rotary;
  rp.from_freqs.inv_freq = s.w_from.data();
  rp.from_freqs.inv_freq_len = s.rotary / 2;
  rp.from_freqs.attention_factor = m_from;
  rp.to_freqs.inv_freq = s.w_to.data();
  rp.to_freqs.inv_freq_len = s.rotary / 2;
  rp.to_freqs.attention_factor = m_to;
  rp.from_positions = Positions::Ids(static_cast<const int64_t*>(s.from.data()));
  rp.to_positions = Positions::Ids(static_cast<const int64_t*>(s.to.data()));
  return rp;
}

CosSinSource Cache(const void* cos, const void* sin, DType dt, CosSinCache::Kind kind) {
  CosSinCache c;
  c.kind = kind;
  c.cos = cos;
  c.sin = sin;
  c.dtype = dt;
  c.rows = kMaxPos;
  return CosSinSource::Cache(c);
}

}  // namespace rerotate_source_test
}  // namespace posenc
#endif

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

void ExpectDispatchedHere() { EXPECT_STREQ(hwy::TargetName(HWY_TARGET), ChosenTarget().c_str()); }

HWY_NOINLINE void TestSourcesBitwiseAndBound() {
  ExpectDispatchedHere();
  namespace rs = rerotate_source_test;
  using Kind = CosSinCache::Kind;
  for (int64_t head_dim : {int64_t{2}, int64_t{34}, int64_t{128}})
    for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
      for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32})
        for (double m_from : {1.0, 1.19}) {
          const double m_to = m_from == 1.0 ? 1.0 : 1.07;
          const int64_t rotary = head_dim == 128 ? 96 : head_dim;
          SCOPED_TRACE("d=" + std::to_string(head_dim) + " " + PairLayoutName(pairs) +
                       (a == RotationArithmetic::kF64 ? " f64" : " f32") +
                       " m_from=" + std::to_string(m_from));
          const auto s = rs::MakeSetup(rotary, m_from, m_to);
          const size_t n = static_cast<size_t>(rs::kBatch * rs::kSeq * rs::kHeads * head_dim);
          std::vector<float> in(n);
          test::FillNormal(in.data(), n, static_cast<uint32_t>(head_dim + 11));
          auto run = [&](const RerotateParams& rp, bool in_place = true) {
            std::vector<float> k = in, out(n, -7.f);
            const Tensor kv = TensorBSHD(k.data(), rs::kBatch, rs::kSeq, rs::kHeads, head_dim);
            const Tensor ov = in_place ? Tensor()
                                       : TensorBSHD(out.data(), rs::kBatch, rs::kSeq, rs::kHeads,
                                                    head_dim);
            const Status st = RerotateRope(kv, ov, rp);
            EXPECT_TRUE(st.ok()) << st.message();
            if (!in_place) {
              EXPECT_EQ(k, in);
            }
            return in_place ? k : out;
          };
          const RerotateParams base = rs::BaseParams(*s, pairs, a, m_from, m_to);
          RerotateParams tables = base;
          tables.from_source = CosSinSource::Table(s->from_table.get());
          tables.to_source = CosSinSource::Table(s->to_table.get());
          const std::vector<float> want = run(tables);
          EXPECT_EQ(run(tables, false), want);

          // Every row-way combination: the bits of both tables.
          std::vector<std::pair<std::string, RerotateParams>> same;
          RerotateParams p = base;
          p.from_source = tables.from_source;
          same.push_back({"from table, to on the fly", p});
          p = base;
          p.to_source = tables.to_source;
          same.push_back({"from on the fly, to table", p});
          p = base;
          p.from_source = rs::Cache(s->from_cos.data(), s->from_sin.data(), DType::kF32,
                                    Kind::kByPosition);
          p.to_source = rs::Cache(s->to_cos.data(), s->to_sin.data(), DType::kF32, Kind::kByPosition);
          same.push_back({"by-position caches", p});
          p = base;
          p.from_source = rs::Cache(s->from_tok_cos.data(), s->from_tok_sin.data(), DType::kF32,
                                    Kind::kPerToken);
          p.to_source = rs::Cache(s->to_tok_cos.data(), s->to_tok_sin.data(), DType::kF32,
                                  Kind::kPerToken);
          p.from_positions = Positions::Offset(1 << 30);  // ignored by per-token caches
          p.to_positions = Positions::Offset(1 << 30);
          same.push_back({"per-token caches", p});
          p = tables;
          p.exec.max_threads = 1;
          same.push_back({"tables, 1 thread", p});
          for (const auto& [what, params] : same) EXPECT_EQ(run(params), want) << what;

          // A bf16 cache: its values widened exactly, so an f32 cache of the widened values.
          p = tables;
          p.from_source = rs::Cache(s->from_cos16.data(), s->from_sin16.data(), DType::kBF16,
                                    Kind::kByPosition);
          RerotateParams pw = tables;
          pw.from_source = rs::Cache(s->from_cos16w.data(), s->from_sin16w.data(), DType::kF32,
                                     Kind::kByPosition);
          EXPECT_EQ(run(p), run(pw)) << "bf16 cache";

          // The bound against the double reference (tables: exact cos/sin of the table's
          // frequencies), rounded to f32.
          std::vector<float> ref = in;
          ASSERT_TRUE(reference::RerotateRope(
                          TensorBSHD(ref.data(), rs::kBatch, rs::kSeq, rs::kHeads, head_dim),
                          Tensor(), tables)
                          .ok());
          const double row_bound = test::MaxUlp(a) + 4.0;
          EXPECT_LE(test::MaxUlpApart(want, ref, in, head_dim, rotary, pairs), row_bound + 1.0);
          // The exact way is held to B + 1 against the same reference (rerotate_test.cc); the
          // two ways are within both bounds of each other.
          const std::vector<float> exact = run(base);
          EXPECT_LE(test::MaxUlpApart(exact, ref, in, head_dim, rotary, pairs), test::MaxUlp(a) + 1.0);
          EXPECT_LE(test::MaxUlpApart(exact, want, in, head_dim, rotary, pairs),
                    row_bound + test::MaxUlp(a));
          for (size_t h = 0; h < n / static_cast<size_t>(head_dim); ++h)  // pass-through bits
            for (int64_t j = rotary; j < head_dim; ++j)
              EXPECT_EQ(want[h * head_dim + j], in[h * head_dim + j]);
        }
}

// A call that is split across threads (f32, 768 KiB, 1.5 MiB read and written: above the 1 MiB
// below which a call runs serially): the row way gives the same bits for 1 and 2 threads.
HWY_NOINLINE void TestSourcesThreads() {
  ExpectDispatchedHere();
  namespace rs = rerotate_source_test;
  const int64_t seq = 256, heads = 6, head_dim = 128;
  const size_t n = static_cast<size_t>(seq * heads * head_dim);
  const auto s = rs::MakeSetup(head_dim, 1.19, 1.19);
  std::vector<int64_t> from(seq), to(seq);
  for (int64_t t = 0; t < seq; ++t) {
    from[t] = t + 500;
    to[t] = t + 100;
  }
  RerotateParams rp = rs::BaseParams(*s, PairLayout::kHalf, RotationArithmetic::kF64, 1.19, 1.19);
  rp.from_positions = Positions::Ids(static_cast<const int64_t*>(from.data()));
  rp.to_positions = Positions::Ids(static_cast<const int64_t*>(to.data()));
  rp.from_source = CosSinSource::Table(s->from_table.get());
  std::vector<float> in(n);
  test::FillNormal(in.data(), n, 9);
  std::vector<float> want = in;
  rp.exec.max_threads = 1;
  ASSERT_TRUE(RerotateRope(TensorBSHD(want.data(), 1, seq, heads, head_dim), Tensor(), rp).ok());
  for (int threads : {2, 0}) {
    std::vector<float> got = in;
    rp.exec.max_threads = threads;
    ASSERT_TRUE(RerotateRope(TensorBSHD(got.data(), 1, seq, heads, head_dim), Tensor(), rp).ok());
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), n * 4)) << threads;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(RerotateSourceTest);
HWY_EXPORT_AND_TEST_P(RerotateSourceTest, TestSourcesBitwiseAndBound);
HWY_EXPORT_AND_TEST_P(RerotateSourceTest, TestSourcesThreads);

namespace {
namespace rs = rerotate_source_test;

// A side's bad source is named with its side, and nothing is written.
TEST(RerotateSourceErrorsTest, NamesSideAndWritesNothing) {
  const int64_t head_dim = 64;
  const auto s = rs::MakeSetup(head_dim, 1.0, 1.0);
  std::shared_ptr<const RopeTable> narrow;
  Frequencies f;
  ASSERT_TRUE(RopeTable::Create(32, f, 16, &narrow).ok());
  std::vector<float> k(static_cast<size_t>(rs::kBatch * rs::kSeq * rs::kHeads * head_dim), 0.5f);
  const std::vector<float> before = k;
  const Tensor kv = TensorBSHD(k.data(), rs::kBatch, rs::kSeq, rs::kHeads, head_dim);
  const RerotateParams base =
      rs::BaseParams(*s, PairLayout::kHalf, RotationArithmetic::kF64, 1.0, 1.0);
  struct Bad {
    RerotateParams p;
    const char* prefix;
  };
  std::vector<Bad> bad;
  RerotateParams p = base;
  p.from_source = CosSinSource::Table(nullptr);
  bad.push_back({p, "from: source.table is null"});
  p = base;
  p.to_source = CosSinSource::Table(narrow.get());
  bad.push_back({p, "to: source.table->rotary_dim() = 32"});
  p = base;
  p.to_source = rs::Cache(s->to_cos.data(), nullptr, DType::kF32, CosSinCache::Kind::kByPosition);
  bad.push_back({p, "to: source.cache.sin is null"});
  p = base;
  p.from_source = rs::Cache(s->from_cos.data(), s->from_sin.data(), DType::kF32,
                            CosSinCache::Kind::kByPosition);
  p.from_positions = Positions::Offset(rs::kMaxPos);  // past the cache's rows
  bad.push_back({p, "from: "});
  p = base;
  p.from_source = rs::Cache(s->from_cos.data(), s->from_sin.data(), static_cast<DType>(9),
                            CosSinCache::Kind::kByPosition);
  bad.push_back({p, "from: source.cache.dtype = 9"});
  p = base;
  p.to_source.kind = static_cast<CosSinSource::Kind>(7);
  bad.push_back({p, "to: source.kind = 7"});
  p = base;
  p.from_source = rs::Cache(s->from_cos.data(), s->from_sin.data(), DType::kF32,
                            CosSinCache::Kind::kByPosition);
  p.from_freqs.attention_factor = 0;  // the factor a from cache carries
  bad.push_back({p, "from_freqs.attention_factor = 0"});
  p = base;
  p.to_source = rs::Cache(k.data(), s->to_sin.data(), DType::kF32, CosSinCache::Kind::kPerToken);
  bad.push_back({p, "to: "});  // the cache overlaps the keys it would write
  for (const Bad& b : bad) {
    const Status st = RerotateRope(kv, Tensor(), b.p);
    EXPECT_FALSE(st.ok()) << b.prefix;
    EXPECT_NE(st.message().find(b.prefix), std::string::npos) << st.message();
    EXPECT_FALSE(reference::RerotateRope(kv, Tensor(), b.p).ok()) << b.prefix;
    EXPECT_EQ(k, before) << b.prefix;
  }
}
// posenc_rope_rerotate gives the bits of posenc::RerotateRope: exact way, tables, bf16 caches.
TEST(RerotateSourceErrorsTest, CApiMatchesCpp) {
  const int64_t head_dim = 64, half = 32;
  const auto s = rs::MakeSetup(head_dim, 1.19, 1.07);
  const size_t n = static_cast<size_t>(rs::kBatch * rs::kSeq * rs::kHeads * head_dim);
  std::vector<float> in(n);
  test::FillNormal(in.data(), n, 77);
  posenc_rope_table *from_table = nullptr, *to_table = nullptr;
  ASSERT_EQ(posenc_rope_table_create(head_dim, 0.0, s->w_from.data(), half, 1.19, rs::kMaxPos,
                                     &from_table),
            POSENC_OK);
  ASSERT_EQ(posenc_rope_table_create(head_dim, 0.0, s->w_to.data(), half, 1.07, rs::kMaxPos,
                                     &to_table),
            POSENC_OK);
  for (int variant = 0; variant < 3; ++variant) {
    RerotateParams rp = rs::BaseParams(*s, PairLayout::kInterleaved, RotationArithmetic::kF32,
                                       1.19, 1.07);
    posenc_rerotate_params cp;
    posenc_rerotate_params_init(&cp);
    cp.pairs = POSENC_PAIRS_INTERLEAVED;
    cp.arithmetic = POSENC_ARITH_F32;
    for (posenc_rerotate_side* side : {&cp.from, &cp.to}) {
      const bool from = side == &cp.from;
      side->base = 0.0;
      side->inv_freq = from ? s->w_from.data() : s->w_to.data();
      side->inv_freq_len = half;
      side->attention_factor = from ? 1.19 : 1.07;
      side->positions.kind = POSENC_POSITIONS_IDS64;
      side->positions.ids64 = from ? s->from.data() : s->to.data();
    }
    if (variant == 1) {  // tables on both sides
      rp.from_source = CosSinSource::Table(s->from_table.get());
      rp.to_source = CosSinSource::Table(s->to_table.get());
      cp.from.source = cp.to.source = POSENC_SOURCE_TABLE;
      cp.from.table = from_table;
      cp.to.table = to_table;
    } else if (variant == 2) {  // a bf16 by-position cache on the from side
      rp.from_source = rs::Cache(s->from_cos16.data(), s->from_sin16.data(), DType::kBF16,
                                 CosSinCache::Kind::kByPosition);
      cp.from.source = POSENC_SOURCE_CACHE_BY_POSITION;
      cp.from.cache_cos = s->from_cos16.data();
      cp.from.cache_sin = s->from_sin16.data();
      cp.from.cache_dtype = POSENC_BF16;
      cp.from.cache_rows = rs::kMaxPos;
    }
    std::vector<float> a = in, b = in;
    ASSERT_TRUE(
        RerotateRope(TensorBSHD(a.data(), rs::kBatch, rs::kSeq, rs::kHeads, head_dim), Tensor(), rp)
            .ok());
    posenc_tensor t = posenc_tensor_bshd(b.data(), POSENC_F32, rs::kBatch, rs::kSeq, rs::kHeads,
                                         head_dim);
    ASSERT_EQ(posenc_rope_rerotate(&t, nullptr, &cp), POSENC_OK) << posenc_last_error();
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), n * 4)) << variant;
    EXPECT_NE(a, in);
  }
  posenc_rope_table_destroy(from_table);
  posenc_rope_table_destroy(to_table);
}
}  // namespace
}  // namespace posenc
#endif
