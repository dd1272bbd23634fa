// Every documented error: the status code, a message naming the argument and its value, and
// nothing written (inputs and outputs keep their bytes). posenc::reference must reject the same
// calls with the same message.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "posenc/rope.h"

namespace posenc {
namespace {

constexpr int64_t B = 2, S = 3, HQ = 4, HK = 2, D = 8;

struct Fixture {
  std::vector<float> q = std::vector<float>(B * S * HQ * D, 1.5f);
  std::vector<float> k = std::vector<float>(B * S * HK * D, 2.5f);
  std::vector<float> q_out = std::vector<float>(B * S * HQ * D, -7.f);
  std::vector<float> k_out = std::vector<float>(B * S * HK * D, -9.f);
  RopeTensors t;
  RopeParams p;
  Fixture() {
    t.q = TensorBSHD(q.data(), B, S, HQ, D);
    t.k = TensorBSHD(k.data(), B, S, HK, D);
    t.q_out = TensorBSHD(q_out.data(), B, S, HQ, D);
    t.k_out = TensorBSHD(k_out.data(), B, S, HK, D);
  }
  bool Untouched() const {
    auto all = [](const std::vector<float>& v, float x) {
      for (float f : v) {
        if (std::memcmp(&f, &x, 4) != 0) return false;
      }
      return true;
    };
    return all(q, 1.5f) && all(k, 2.5f) && all(q_out, -7.f) && all(k_out, -9.f);
  }
};

void ExpectError(const std::function<void(Fixture&)>& mutate, StatusCode code,
                 const std::string& needle) {
  for (bool use_reference : {false, true}) {
    Fixture f;
    mutate(f);
    const Status st = use_reference ? reference::ApplyRope(f.t, f.p) : ApplyRope(f.t, f.p);
    EXPECT_FALSE(st.ok()) << needle;
    EXPECT_EQ(st.code(), code) << st.message();
    EXPECT_NE(st.message().find(needle), std::string::npos)
        << "message \"" << st.message() << "\" lacks \"" << needle << "\"";
    EXPECT_TRUE(f.Untouched()) << "a failed call wrote: " << st.message();
  }
}

constexpr auto kInvalid = StatusCode::kInvalidArgument;

TEST(RopeErrorsTest, ValidCallSucceedsAndWrites) {
  Fixture f;
  ASSERT_TRUE(ApplyRope(f.t, f.p).ok());
  EXPECT_FALSE(f.Untouched());
}

TEST(RopeErrorsTest, AbsentAndNull) {
  ExpectError([](Fixture& f) { f.t.q.data = f.t.k.data = nullptr; f.t.q_out = f.t.k_out = {}; },
              kInvalid, "q.data and k.data are both null");
  ExpectError([](Fixture& f) { f.t.q.data = nullptr; }, kInvalid, "q_out is set but q.data is null");
  ExpectError([](Fixture& f) { f.t.k.data = nullptr; }, kInvalid, "k_out is set but k.data is null");
}

TEST(RopeErrorsTest, Shapes) {
  ExpectError([](Fixture& f) { f.t.q.shape[0] = 0; }, kInvalid, "q.shape[0] = 0");
  ExpectError([](Fixture& f) { f.t.k.shape[3] = -4; }, kInvalid, "k.shape[3] = -4");
  ExpectError([](Fixture& f) { f.t.k_out.shape[2] = 1; }, kInvalid, "k_out.shape = [2, 3, 1, 8]");
  ExpectError([](Fixture& f) { f.t.k.shape[1] = 2; f.t.k_out.shape[1] = 2; }, kInvalid,
              "k.shape[1] (seq) = 2: must equal q.shape[1] = 3");
  ExpectError([](Fixture& f) { f.t.q.dtype = f.t.q_out.dtype = DType::kBF16; }, kInvalid,
              "k.dtype = f32: must equal q.dtype = bf16");
  ExpectError([](Fixture& f) { f.t.q.dtype = static_cast<DType>(6); }, kInvalid,
              "q.dtype = 6: not a posenc::DType");
  ExpectError([](Fixture& f) { f.t.q_out.dtype = DType::kF16; }, kInvalid, "q_out.dtype = f16");
}

TEST(RopeErrorsTest, Strides) {
  ExpectError([](Fixture& f) { f.t.q.strides[3] = 2; }, kInvalid, "q.strides[3] = 2");
  ExpectError([](Fixture& f) { f.t.k.strides[1] = -1; }, kInvalid, "k.strides[1] = -1");
  // Heads of the output written over each other.
  ExpectError([](Fixture& f) { f.t.q_out.strides[2] = 4; }, kInvalid, "q_out: strides [96, 32, 4, 1]");
  // In place with aliasing tokens.
  ExpectError([](Fixture& f) { f.t.q_out = {}; f.t.q.strides[1] = 0; }, kInvalid,
              "make elements alias each other");
  ExpectError(
      [](Fixture& f) {
        f.t.q.strides[0] = std::numeric_limits<int64_t>::max() / 2;
      },
      kInvalid, "overflows");
}

// CheckView's faults at the extremes of int64_t (no step of its offset arithmetic may overflow
// unnoticed), and its alignment test (a mask) for both element sizes.
TEST(RopeErrorsTest, ViewFaultsAtTheExtremes) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  ExpectError([](Fixture& f) { f.t.q.shape[1] = kMin; }, kInvalid,
              "q.shape[1] = -9223372036854775808");
  ExpectError([](Fixture& f) { f.t.k_out.strides[0] = kMin; }, kInvalid,
              "k_out.strides[0] = -9223372036854775808");
  ExpectError([](Fixture& f) { f.t.q_out.strides[1] = kMax; }, kInvalid,
              "overflows 64-bit offsets");
  // A term that wraps to 2 (3 * (2^64 + 2) / 3): a small offset if unchecked.
  ExpectError([](Fixture& f) { f.t.q.strides[2] = 6148914691236517206; }, kInvalid,
              "overflows 64-bit offsets");
  // Terms that fit one by one and whose sum wraps to 2^64 + 3: a small offset if unchecked.
  ExpectError(
      [](Fixture& f) { f.t.k.strides[0] = f.t.k.strides[1] = f.t.k.strides[2] = kMax / 2; },
      kInvalid, "overflows 64-bit offsets");
  // Offsets that fit, bytes that do not.
  ExpectError([](Fixture& f) { f.t.q.strides[0] = kMax / 4; }, kInvalid,
              "overflows the 64-bit byte size / address space");
  ExpectError([](Fixture& f) { f.t.q_out.data = reinterpret_cast<char*>(f.q_out.data()) + 2; },
              kInvalid, "must be aligned to 4 bytes");
  ExpectError(
      [](Fixture& f) {
        f.t.q.dtype = f.t.q_out.dtype = f.t.k.dtype = f.t.k_out.dtype = DType::kBF16;
        f.t.k_out.data = reinterpret_cast<char*>(f.k_out.data()) + 1;
      },
      kInvalid, "k_out.data = ");
}

// In place with the outputs given as the inputs' own views (as Python's out_q=q passes them):
// q and k are still checked against each other, and an output apart from its input against the
// other tensor's input and output.
TEST(RopeErrorsTest, OverlapsWithOutputsGivenAsTheirInputs) {
  ExpectError(
      [](Fixture& f) {
        f.t.k = f.t.k_out = TensorBSHD(f.q.data() + 8, B, S, HK, D);
        f.t.q_out = f.t.q;
      },
      kInvalid, "q and k overlap");
  ExpectError([](Fixture& f) { f.t.q_out = f.t.q; f.t.k_out = TensorBSHD(f.q.data(), B, S, HK, D); },
              kInvalid, "q's output and k's input/output overlap");
  ExpectError([](Fixture& f) { f.t.k_out = f.t.k; f.t.q_out = TensorBSHD(f.k.data(), B, S, HK, D);
                               f.t.q_out.shape[2] = HQ; f.t.q_out.strides[1] = HQ * D;
                               f.t.q_out.strides[0] = S * HQ * D; },
              kInvalid, "overlap");
  Fixture f;
  f.t.q_out = f.t.q;
  f.t.k_out = f.t.k;
  ASSERT_TRUE(ApplyRope(f.t, f.p).ok());
  EXPECT_FALSE(f.Untouched());
}

TEST(RopeErrorsTest, Overlaps) {
  ExpectError([](Fixture& f) { f.t.k = f.t.k_out = TensorBSHD(f.q.data() + 8, B, S, HK, D); },
              kInvalid, "q and k overlap");
  ExpectError([](Fixture& f) { f.t.q_out = TensorBSHD(f.q.data() + 1, 1, S, HQ, D); f.t.q_out.shape[0] = B; },
              kInvalid, "q_out partially overlaps q");
  ExpectError([](Fixture& f) { f.t.k_out = TensorBSHD(f.q_out.data() + 16, B, 1, HK, D); f.t.k_out.shape[1] = S; },
              kInvalid, "overlap");
}

TEST(RopeErrorsTest, RotaryDimAndLayout) {
  ExpectError([](Fixture& f) { f.p.rotary_dim = 7; }, kInvalid, "rotary_dim = 7");
  ExpectError([](Fixture& f) { f.p.rotary_dim = 10; }, kInvalid, "rotary_dim = 10");
  ExpectError([](Fixture& f) { f.p.rotary_dim = -2; }, kInvalid, "rotary_dim = -2");
  ExpectError([](Fixture& f) { f.p.pairs = static_cast<PairLayout>(5); }, kInvalid, "pairs = 5");
  ExpectError([](Fixture& f) { f.p.exec.max_threads = -1; }, kInvalid, "exec.max_threads = -1");
  ExpectError([](Fixture& f) { f.p.arithmetic = static_cast<RotationArithmetic>(9); }, kInvalid,
              "arithmetic = 9");
}

TEST(RopeErrorsTest, Frequencies) {
  static const double inv3[3] = {1.0, 0.1, 0.01};
  static const double inv_nan[4] = {1.0, NAN, 0.1, 0.01};
  ExpectError([](Fixture& f) { f.p.freqs.inv_freq = inv3; f.p.freqs.inv_freq_len = 3; }, kInvalid,
              "freqs.inv_freq_len = 3: must be rotary_dim / 2 = 4");
  ExpectError([](Fixture& f) { f.p.freqs.inv_freq = inv_nan; f.p.freqs.inv_freq_len = 4; },
              kInvalid, "freqs.inv_freq[1] = nan");
  ExpectError([](Fixture& f) { f.p.freqs.inv_freq_len = 4; }, kInvalid,
              "freqs.inv_freq_len = 4 but freqs.inv_freq is null");
  ExpectError([](Fixture& f) { f.p.freqs.base = INFINITY; }, kInvalid, "freqs.base = inf");
  ExpectError([](Fixture& f) { f.p.freqs.base = -3; }, kInvalid, "freqs.base = -3");
  ExpectError([](Fixture& f) { f.p.freqs.attention_factor = NAN; }, kInvalid,
              "freqs.attention_factor = nan");
}

TEST(RopeErrorsTest, Positions) {
  ExpectError([](Fixture& f) { f.p.positions = Positions::Ids(static_cast<const int64_t*>(nullptr)); },
              kInvalid, "positions.ids64 is null");
  ExpectError([](Fixture& f) { f.p.positions = Positions::Ids(static_cast<const int32_t*>(nullptr)); },
              kInvalid, "positions.ids32 is null");
  ExpectError([](Fixture& f) { f.p.positions = Positions::PerBatch(nullptr); }, kInvalid,
              "positions.batch_offsets is null");
  ExpectError([](Fixture& f) { f.p.positions = Positions::Offset(std::numeric_limits<int64_t>::max() - 1); },
              kInvalid, "positions.offset = 9223372036854775806");
  static const int64_t huge[B * S] = {0, 1, 2, 3, int64_t{1} << 51, 5};
  ExpectError([](Fixture& f) { f.p.positions = Positions::Ids(huge); }, StatusCode::kOutOfRange,
              "positions[b=1, s=1] = 2251799813685248: angle");
}

TEST(RopeErrorsTest, TableAndCacheRanges) {
  std::shared_ptr<const RopeTable> table;
  ASSERT_TRUE(RopeTable::Create(D, Frequencies(), 16, &table).ok());
  std::shared_ptr<const RopeTable> table4;
  ASSERT_TRUE(RopeTable::Create(4, Frequencies(), 16, &table4).ok());
  static const int64_t ids[B * S] = {0, 1, 2, 3, 16, 5};
  static const int64_t neg[B * S] = {0, 1, -2, 3, 4, 5};
  const RopeTable* tp = table.get();
  const RopeTable* tp4 = table4.get();
  ExpectError([tp](Fixture& f) { f.p.source = CosSinSource::Table(tp); f.p.positions = Positions::Ids(ids); },
              StatusCode::kOutOfRange, "positions[b=1, s=1] = 16: outside the table's rows [0, 16)");
  ExpectError([tp](Fixture& f) { f.p.source = CosSinSource::Table(tp); f.p.positions = Positions::Ids(neg); },
              StatusCode::kOutOfRange, "positions[b=0, s=2] = -2");
  ExpectError([tp](Fixture& f) { f.p.source = CosSinSource::Table(tp); f.p.positions = Positions::Offset(14); },
              StatusCode::kOutOfRange, "= 16: outside the table's rows [0, 16)");
  ExpectError([](Fixture& f) { f.p.source = CosSinSource::Table(nullptr); }, kInvalid,
              "source.table is null");
  ExpectError([tp4](Fixture& f) { f.p.source = CosSinSource::Table(tp4); }, kInvalid,
              "source.table->rotary_dim() = 4: must equal rotary_dim = 8");

  static float cache[10 * 4];
  CosSinCache c;
  c.cos = c.sin = cache;
  c.rows = 10;
  ExpectError([c](Fixture& f) { f.p.source = CosSinSource::Cache(c); f.p.positions = Positions::Offset(8); },
              StatusCode::kOutOfRange, "= 10: outside the cache's rows [0, 10)");
  CosSinCache no_cos = c;
  no_cos.cos = nullptr;
  ExpectError([no_cos](Fixture& f) { f.p.source = CosSinSource::Cache(no_cos); }, kInvalid,
              "source.cache.cos is null");
  CosSinCache no_rows = c;
  no_rows.rows = 0;
  ExpectError([no_rows](Fixture& f) { f.p.source = CosSinSource::Cache(no_rows); }, kInvalid,
              "source.cache.rows = 0");
  CosSinCache bad_dtype = c;
  bad_dtype.dtype = static_cast<DType>(5);
  ExpectError([bad_dtype](Fixture& f) { f.p.source = CosSinSource::Cache(bad_dtype); }, kInvalid,
              "source.cache.dtype = 5: not a posenc::DType");
}

TEST(RopeErrorsTest, TableCreate) {
  std::shared_ptr<const RopeTable> table;
  Status st = RopeTable::Create(7, Frequencies(), 16, &table);
  EXPECT_EQ(st.code(), kInvalid);
  EXPECT_NE(st.message().find("rotary_dim = 7"), std::string::npos);
  st = RopeTable::Create(8, Frequencies(), 0, &table);
  EXPECT_NE(st.message().find("max_positions = 0"), std::string::npos);
  Frequencies bad;
  bad.base = 0.0;
  st = RopeTable::Create(8, bad, 16, &table);
  EXPECT_NE(st.message().find("freqs.base = 0"), std::string::npos);
  st = RopeTable::Create(8, Frequencies(), 16, nullptr);
  EXPECT_NE(st.message().find("out is null"), std::string::npos);
  EXPECT_EQ(table, nullptr);  // untouched by the failures
}

}  // namespace
}  // namespace posenc
