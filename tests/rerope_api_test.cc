// RelativeRopeScores' contract outside the kernels: every validation error (code, a message
// naming the argument and its value, nothing written; posenc::reference rejects the same calls
// with the same message), the distance maps (continuity, slopes, mirror, the deterministic ln),
// RelativeRopeTable (errors, storage, the accuracy of its rows: Lemma 1 of docs/rerope.md) and
// the config overload.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "posenc/freqs.h"
#include "posenc/rerope.h"

namespace posenc {
namespace {

constexpr int64_t B = 2, LQ = 3, LK = 5, HQ = 4, HK = 2, D = 8;
constexpr auto kInvalid = StatusCode::kInvalidArgument;
constexpr auto kRange = StatusCode::kOutOfRange;

struct Fixture {
  std::vector<float> q = std::vector<float>(B * LQ * HQ * D, 1.5f);
  std::vector<float> k = std::vector<float>(B * LK * HK * D, 2.5f);
  std::vector<float> scores = std::vector<float>(B * HQ * LQ * LK, -7.f);
  RelativeRopeTensors t;
  RelativeRopeParams p;
  Fixture() {
    t.q = TensorBSHD(q.data(), B, LQ, HQ, D);
    t.k = TensorBSHD(k.data(), B, LK, HK, D);
    t.scores = TensorBSHD(scores.data(), B, HQ, LQ, LK);
  }
  bool Untouched() const {
    auto all = [](const std::vector<float>& v, float x) {
      for (float f : v) {
        if (std::memcmp(&f, &x, 4) != 0) return false;
      }
      return true;
    };
    return all(q, 1.5f) && all(k, 2.5f) && all(scores, -7.f);
  }
};

void ExpectError(const std::function<void(Fixture&)>& mutate, StatusCode code,
                 const std::string& needle) {
  for (bool use_reference : {false, true}) {
    Fixture f;
    mutate(f);
    const Status st =
        use_reference ? reference::RelativeRopeScores(f.t, f.p) : RelativeRopeScores(f.t, f.p);
    EXPECT_FALSE(st.ok()) << needle;
    EXPECT_EQ(st.code(), code) << st.message();
    EXPECT_NE(st.message().find(needle), std::string::npos)
        << "message \"" << st.message() << "\" lacks \"" << needle << "\"";
    EXPECT_TRUE(f.Untouched()) << "a failed call wrote: " << st.message();
  }
}

void ExpectOk(const std::function<void(Fixture&)>& mutate) {
  Fixture f;
  mutate(f);
  const Status st = RelativeRopeScores(f.t, f.p);
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_FALSE(f.Untouched());
}

TEST(ReropeErrorsTest, ValidCallsSucceed) {
  ExpectOk([](Fixture&) {});
  for (DistanceMode mode : {DistanceMode::kCap, DistanceMode::kLeaky, DistanceMode::kLog}) {
    ExpectOk([mode](Fixture& f) {
      f.p.map = {mode, 2, 3.0};
      f.p.causal = true;
    });
  }
}

TEST(ReropeErrorsTest, Views) {
  ExpectError([](Fixture& f) { f.t.q.data = nullptr; }, kInvalid, "q.data is null");
  ExpectError([](Fixture& f) { f.t.k.data = nullptr; }, kInvalid, "k.data is null");
  ExpectError([](Fixture& f) { f.t.scores.data = nullptr; }, kInvalid, "scores.data is null");
  ExpectError([](Fixture& f) { f.t.q.shape[0] = 0; }, kInvalid, "q.shape[0] = 0");
  ExpectError([](Fixture& f) { f.t.k.shape[1] = -2; }, kInvalid, "k.shape[1] = -2");
  ExpectError([](Fixture& f) { f.t.k.strides[3] = 2; }, kInvalid, "k.strides[3] = 2");
  ExpectError([](Fixture& f) { f.t.scores.strides[0] = -1; }, kInvalid, "scores.strides[0] = -1");
  ExpectError([](Fixture& f) { f.t.q.dtype = static_cast<DType>(7); }, kInvalid,
              "q.dtype = 7: not a posenc::DType");
  ExpectError([](Fixture& f) { f.t.q.strides[0] = std::numeric_limits<int64_t>::max() / 2; },
              kInvalid, "overflows");
}

TEST(ReropeErrorsTest, DtypesAndShapes) {
  ExpectError([](Fixture& f) { f.t.k.dtype = DType::kBF16; }, kInvalid,
              "k.dtype = bf16: must equal q.dtype = f32");
  ExpectError([](Fixture& f) { f.t.scores.dtype = DType::kF16; }, kInvalid,
              "scores.dtype = f16: must be f32");
  ExpectError([](Fixture& f) { f.t.k.shape[0] = 1; }, kInvalid,
              "k.shape[0] (batch) = 1: must equal q.shape[0] = 2");
  ExpectError([](Fixture& f) { f.t.k.shape[3] = 6; }, kInvalid,
              "k.shape[3] (head_dim) = 6: must equal q.shape[3] = 8");
  ExpectError([](Fixture& f) { f.t.k.shape[2] = 3; }, kInvalid,
              "q.shape[2] (heads) = 4 is not a multiple of k.shape[2] (kv_heads) = 3");
  ExpectError([](Fixture& f) { f.t.scores.shape[3] = 4; }, kInvalid,
              "scores.shape = [2, 4, 3, 4]: must be [batch, heads, q_len, k_len] = [2, 4, 3, 5]");
  ExpectError([](Fixture& f) { f.t.scores = TensorBSHD(f.scores.data(), B, LQ, HQ, LK); }, kInvalid,
              "scores.shape = [2, 3, 4, 5]");
}

TEST(ReropeErrorsTest, Overlaps) {
  ExpectError([](Fixture& f) { f.t.scores.strides[2] = 0; }, kInvalid,
              "make elements alias each other");
  ExpectError([](Fixture& f) { f.t.scores.data = f.q.data() + 3; }, kInvalid,
              "scores overlaps q in memory");
  ExpectError([](Fixture& f) { f.t.scores.data = f.k.data(); }, kInvalid,
              "scores overlaps k in memory");
}

TEST(ReropeErrorsTest, RotaryLayoutMapScaleThreads) {
  ExpectError([](Fixture& f) { f.p.rotary_dim = 7; }, kInvalid,
              "rotary_dim = 7: must be even, > 0 (or 0 for head_dim) and <= head_dim = 8");
  ExpectError([](Fixture& f) { f.p.rotary_dim = 10; }, kInvalid, "rotary_dim = 10");
  ExpectError([](Fixture& f) { f.p.rotary_dim = -2; }, kInvalid, "rotary_dim = -2");
  ExpectError([](Fixture& f) { f.p.pairs = static_cast<PairLayout>(5); }, kInvalid,
              "pairs = 5: not a PairLayout");
  ExpectError([](Fixture& f) { f.p.map.mode = static_cast<DistanceMode>(9); }, kInvalid,
              "map.mode = 9: not a DistanceMode");
  ExpectError(
      [](Fixture& f) {
        f.p.map = {DistanceMode::kCap, 0, 0.0};
      },
      kInvalid, "map.window = 0: must be > 0 for mode cap");
  ExpectError(
      [](Fixture& f) {
        f.p.map = {DistanceMode::kLog, -3, 0.0};
      },
      kInvalid, "map.window = -3: must be > 0 for mode log");
  ExpectError(
      [](Fixture& f) {
        f.p.map = {DistanceMode::kLeaky, 4, 1.0};
      },
      kInvalid, "map.leak = 1: must be finite and > 1 for mode leaky");
  ExpectError(
      [](Fixture& f) {
        f.p.map = {DistanceMode::kLeaky, 4, 0.5};
      },
      kInvalid, "map.leak = 0.5");
  ExpectError(
      [](Fixture& f) {
        f.p.map = {DistanceMode::kLeaky, 4, NAN};
      },
      kInvalid, "map.leak = nan");
  ExpectError(
      [](Fixture& f) {
        f.p.map = {DistanceMode::kLeaky, 4, INFINITY};
      },
      kInvalid, "map.leak = inf");
  ExpectError([](Fixture& f) { f.p.scale = INFINITY; }, kInvalid, "scale = inf: must be finite");
  ExpectError([](Fixture& f) { f.p.scale = NAN; }, kInvalid, "scale = nan");
  ExpectError([](Fixture& f) { f.p.exec.max_threads = -1; }, kInvalid,
              "exec.max_threads = -1: must be >= 0");
  // kExact ignores window and leak.
  ExpectOk([](Fixture& f) { f.p.map = {DistanceMode::kExact, -5, 0.0}; });
}

TEST(ReropeErrorsTest, Positions) {
  ExpectError(
      [](Fixture& f) { f.p.q_positions = Positions::Ids(static_cast<const int64_t*>(nullptr)); },
      kInvalid, "q_positions.ids64 is null");
  ExpectError(
      [](Fixture& f) { f.p.k_positions = Positions::Ids(static_cast<const int32_t*>(nullptr)); },
      kInvalid, "k_positions.ids32 is null");
  ExpectError([](Fixture& f) { f.p.k_positions = Positions::PerBatch(nullptr); }, kInvalid,
              "k_positions.batch_offsets is null");
  ExpectError([](Fixture& f) { f.p.q_positions.kind = static_cast<Positions::Kind>(7); }, kInvalid,
              "q_positions.kind = 7: not a Positions::Kind");
  ExpectError(
      [](Fixture& f) {
        f.p.q_positions = Positions::Offset(std::numeric_limits<int64_t>::max() - 1);
      },
      kInvalid, "q_positions.offset = 9223372036854775806: offset + seq - 1 overflows int64");
  // Distances that do not fit in int64.
  ExpectError(
      [](Fixture& f) {
        f.p.q_positions = Positions::Offset(std::numeric_limits<int64_t>::max() - 10);
        f.p.k_positions = Positions::Offset(-10);
      },
      kInvalid,
      "distance q_positions[b=0, s=2] - k_positions[b=0, s=0] = 9223372036854775799 - -10 "
      "overflows int64");
  static const int64_t k_ids[B * LK] = {0, 1, 2, std::numeric_limits<int64_t>::min(), 4, 5, 6,
                                        7, 8, 9};
  ExpectError([](Fixture& f) { f.p.k_positions = Positions::Ids(k_ids); }, kInvalid,
              "k_positions[b=0, s=3]");
}

TEST(ReropeErrorsTest, AngleLimit) {
  constexpr int64_t kFar = int64_t{1} << 51;
  ExpectError([](Fixture& f) { f.p.q_positions = Positions::Offset(kFar); }, kRange,
              "distance q_positions[b=0, s=2] - k_positions[b=0, s=0] = 2251799813685250: angle "
              "|f(d) * inv_freq| = 2251799813685250 exceeds 2^50");
  // Mirrored: the most negative distance counts too.
  ExpectError([](Fixture& f) { f.p.k_positions = Positions::Offset(kFar); }, kRange,
              "distance q_positions[b=0, s=0] - k_positions[b=0, s=4] = 2251799813685252: angle");
  // ... unless causal masking drops it, or the map caps it.
  ExpectOk([](Fixture& f) {
    f.p.k_positions = Positions::Offset(kFar);
    f.p.causal = true;
  });
  ExpectOk([](Fixture& f) {
    f.p.q_positions = Positions::Offset(kFar);
    f.p.map = {DistanceMode::kCap, 4096, 0.0};
  });
  // The log map grows slowly: 2^51 maps to ~4e5 * (1 + ln(2^51 / 4e5)).
  ExpectOk([](Fixture& f) {
    f.p.q_positions = Positions::Offset(kFar);
    f.p.map = {DistanceMode::kLog, 400000, 0.0};
  });
  ExpectError(
      [](Fixture& f) {
        f.p.q_positions = Positions::Offset(kFar);
        f.p.map = {DistanceMode::kLeaky, 16, 1.5};
      },
      kRange, "exceeds 2^50");
}

TEST(ReropeErrorsTest, Frequencies) {
  static const double inv3[3] = {1.0, 0.1, 0.01};
  static const double inv_nan[4] = {1.0, NAN, 0.1, 0.01};
  ExpectError(
      [](Fixture& f) {
        f.p.freqs.inv_freq = inv3;
        f.p.freqs.inv_freq_len = 3;
      },
      kInvalid, "freqs.inv_freq_len = 3: must be rotary_dim / 2 = 4");
  ExpectError(
      [](Fixture& f) {
        f.p.freqs.inv_freq = inv_nan;
        f.p.freqs.inv_freq_len = 4;
      },
      kInvalid, "freqs.inv_freq[1] = nan");
  ExpectError([](Fixture& f) { f.p.freqs.base = 0.0; }, kInvalid, "freqs.base = 0");
  ExpectError([](Fixture& f) { f.p.freqs.attention_factor = NAN; }, kInvalid,
              "freqs.attention_factor = nan");
  ExpectError([](Fixture& f) { f.p.freqs.attention_factor = 1e200; }, kInvalid,
              "freqs.attention_factor = 9.9999999999999997e+199: its square overflows");
}

TEST(ReropeErrorsTest, Table) {
  const DistanceMap cap{DistanceMode::kCap, 3, 0.0};
  std::shared_ptr<const RelativeRopeTable> t8, t4, t_small, t_cap;
  ASSERT_TRUE(RelativeRopeTable::Create(D, Frequencies(), DistanceMap(), 4, &t_small).ok());
  ASSERT_TRUE(RelativeRopeTable::Create(D, Frequencies(), DistanceMap(), 64, &t8).ok());
  ASSERT_TRUE(RelativeRopeTable::Create(4, Frequencies(), DistanceMap(), 64, &t4).ok());
  ASSERT_TRUE(RelativeRopeTable::Create(D, Frequencies(), cap, 1000, &t_cap).ok());
  const RelativeRopeTable* small = t_small.get();
  const RelativeRopeTable* four = t4.get();
  const RelativeRopeTable* capped = t_cap.get();
  ExpectError([four](Fixture& f) { f.p.table = four; }, kInvalid,
              "table->rotary_dim() = 4: must equal rotary_dim = 8");
  ExpectError([small](Fixture& f) { f.p.table = small; }, kRange,
              "distance q_positions[b=0, s=0] - k_positions[b=0, s=4] = 4: outside the table's "
              "distances [0, 4)");
  ExpectError([capped](Fixture& f) { f.p.table = capped; }, kInvalid,
              "table->map() (mode cap, window 3, leak 0) differs from map (mode exact");
  ExpectError(
      [capped](Fixture& f) {
        f.p.table = capped;
        f.p.map = {DistanceMode::kCap, 4, 0.0};
      },
      kInvalid, "differs from map (mode cap, window 4");
  ExpectOk([capped](Fixture& f) {
    f.p.table = capped;
    f.p.map = {DistanceMode::kCap, 3, 7.0};  // leak is not part of a cap map
    f.p.freqs.base = -1.0;                   // ignored with a table
  });
  const RelativeRopeTable* full = t8.get();
  ExpectOk([full](Fixture& f) { f.p.table = full; });
}

TEST(ReropeErrorsTest, TableCreate) {
  std::shared_ptr<const RelativeRopeTable> table;
  auto expect = [&](Status st, StatusCode code, const std::string& needle) {
    EXPECT_EQ(st.code(), code) << st.message();
    EXPECT_NE(st.message().find(needle), std::string::npos) << st.message();
  };
  expect(RelativeRopeTable::Create(7, Frequencies(), DistanceMap(), 16, &table), kInvalid,
         "rotary_dim = 7: must be even and > 0");
  expect(RelativeRopeTable::Create(0, Frequencies(), DistanceMap(), 16, &table), kInvalid,
         "rotary_dim = 0");
  expect(RelativeRopeTable::Create(8, Frequencies(), DistanceMap(), 0, &table), kInvalid,
         "max_distance = 0: must be > 0");
  expect(RelativeRopeTable::Create(8, Frequencies(), DistanceMap(), int64_t{1} << 40, &table),
         kInvalid, "max_distance = 1099511627776");
  expect(RelativeRopeTable::Create(8, Frequencies(), {DistanceMode::kLeaky, 5, 0.9}, 16, &table),
         kInvalid, "map.leak = 0.9");
  Frequencies bad;
  bad.base = -1.0;
  expect(RelativeRopeTable::Create(8, bad, DistanceMap(), 16, &table), kInvalid, "freqs.base = -1");
  Frequencies fast;
  const double inv[4] = {1e12, 1.0, 1.0, 1.0};
  fast.inv_freq = inv;
  fast.inv_freq_len = 4;
  expect(RelativeRopeTable::Create(8, fast, DistanceMap(), 5000, &table), kRange,
         "max_distance - 1 = 4999: angle");
  expect(RelativeRopeTable::Create(8, Frequencies(), DistanceMap(), 16, nullptr), kInvalid,
         "out is null");
  EXPECT_EQ(table, nullptr);  // untouched by the failures
}

TEST(ReropeErrorsTest, ConfigOverload) {
  RopeConfig config;
  config.head_dim = D;
  config.partial_rotary_factor = 0.5;  // rotary_dim 4
  Fixture f;
  std::vector<float> by_config, by_hand;
  ASSERT_TRUE(RelativeRopeScores(f.t, config, f.p).ok());
  by_config = f.scores;
  f.p.rotary_dim = 4;
  ASSERT_TRUE(RelativeRopeScores(f.t, f.p).ok());
  EXPECT_EQ(by_config, f.scores);
  // rotary_dim must be 0 or the config's; no table; the config's own errors pass through.
  f.p.rotary_dim = 6;
  Status st = RelativeRopeScores(f.t, config, f.p);
  EXPECT_NE(st.message().find("rotary_dim = 6: the config gives rotary_dim = 4"), std::string::npos)
      << st.message();
  f.p.rotary_dim = 0;
  std::shared_ptr<const RelativeRopeTable> table;
  ASSERT_TRUE(RelativeRopeTable::Create(4, Frequencies(), DistanceMap(), 16, &table).ok());
  f.p.table = table.get();
  st = RelativeRopeScores(f.t, config, f.p);
  EXPECT_NE(st.message().find("table: RelativeRopeScores with a config"), std::string::npos);
  f.p.table = nullptr;
  config.rope_type = RopeType::kLinear;  // factor missing
  st = RelativeRopeScores(f.t, config, f.p);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("factor"), std::string::npos) << st.message();
}

TEST(ReropeErrorsTest, ReferenceF64NeedsOutput) {
  Fixture f;
  const Status st = reference::RelativeRopeScoresF64(f.t, f.p, nullptr, nullptr);
  EXPECT_NE(st.message().find("scores64 is null"), std::string::npos);
}

TEST(DistanceMapTest, ValuesContinuityAndMirror) {
  using reference::MappedDistance;
  const int64_t w = 512;
  const DistanceMap exact{DistanceMode::kExact, 0, 0.0}, cap{DistanceMode::kCap, w, 0.0};
  const DistanceMap leaky{DistanceMode::kLeaky, w, 16.0}, log{DistanceMode::kLog, w, 0.0};
  for (int64_t d : {int64_t{0}, int64_t{1}, int64_t{511}, int64_t{512}}) {
    for (const DistanceMap& m : {exact, cap, leaky, log}) {
      EXPECT_EQ(MappedDistance(m, d), static_cast<double>(d))
          << DistanceModeName(m.mode) << " " << d;
      EXPECT_EQ(MappedDistance(m, -d), -static_cast<double>(d));
    }
  }
  EXPECT_EQ(MappedDistance(exact, 1 << 30), static_cast<double>(1 << 30));
  EXPECT_EQ(MappedDistance(cap, 513), 512.0);
  EXPECT_EQ(MappedDistance(cap, -100000), -512.0);
  EXPECT_EQ(MappedDistance(leaky, 512 + 32), 514.0);  // slope 1/16 beyond w, exact here
  EXPECT_EQ(MappedDistance(leaky, -(512 + 160)), -522.0);
  // kLog: continuous with slope 1 at w; concave, increasing, below the identity.
  const double f1 = MappedDistance(log, w + 1);
  EXPECT_NEAR(f1, w + 1.0, 1.0 / (2.0 * w));
  double prev = MappedDistance(log, w);
  for (int64_t d = w + 1; d < w + 5000; ++d) {
    const double f = MappedDistance(log, d);
    EXPECT_GT(f, prev) << d;
    EXPECT_LE(f - prev, 1.0) << d;
    EXPECT_LT(f, static_cast<double>(d));
    prev = f;
  }
  // The definition: w * (1 + ln(d / w)) with posenc's own ln (within 2 ulp of libm's here).
  for (int64_t d : {513, 1000, 4096, 131072, 1 << 24, 1 << 30}) {
    const double want = w * (1.0 + std::log(static_cast<double>(d) / w));
    EXPECT_NEAR(MappedDistance(log, d), want, 4 * std::fabs(want) * 0x1p-52) << d;
  }
}

// Lemma 1 of docs/rerope.md: every stored cos / sin is within 4 * 2^-53 of the true value of its
// double angle (times m^2, with one more rounding), for angles up to 2^29. Checked against
// long double cos / sin.
TEST(RelativeRopeTableTest, RowsAreAccurateAndStoredAsDocumented) {
  const double inv[8] = {1.0, 3.14159265358979, 1000.0, 12345.678, 1e5, 0.001, 7e-7, 0.5};
  for (double m : {1.0, 1.25}) {
    Frequencies f;
    f.inv_freq = inv;
    f.inv_freq_len = 8;
    f.attention_factor = m;
    std::shared_ptr<const RelativeRopeTable> table;
    ASSERT_TRUE(RelativeRopeTable::Create(16, f, DistanceMap(), 5000, &table).ok());
    EXPECT_EQ(table->stored_rows(), 5000);
    EXPECT_EQ(table->max_distance(), 5000);
    double worst = 0.0;
    for (int64_t a = 0; a < 5000; ++a) {
      for (int t = 0; t < 8; ++t) {
        const long double theta = static_cast<long double>(static_cast<double>(a) * inv[t]);
        const long double m2 = static_cast<long double>(m) * m;
        const long double ec = m2 * std::cos(theta), es = m2 * std::sin(theta);
        worst = std::max(worst, static_cast<double>(std::fabs(table->cos_row(a)[t] - ec) / m2));
        worst = std::max(worst, static_cast<double>(std::fabs(table->sin_row(a)[t] - es) / m2));
      }
    }
    EXPECT_LE(worst, 7 * 0x1p-53) << "m " << m;
    std::printf("table rows, attention factor %.2f: worst error %.3f * 2^-53 * m^2\n", m,
                worst / 0x1p-53);
  }
  std::shared_ptr<const RelativeRopeTable> cap;
  ASSERT_TRUE(
      RelativeRopeTable::Create(8, Frequencies(), {DistanceMode::kCap, 100, 0.0}, 1 << 30, &cap)
          .ok());
  EXPECT_EQ(cap->stored_rows(), 101);
  EXPECT_EQ(cap->max_distance(), 1 << 30);
  std::shared_ptr<const RelativeRopeTable> log;
  ASSERT_TRUE(
      RelativeRopeTable::Create(8, Frequencies(), {DistanceMode::kLog, 100, 0.0}, 300, &log).ok());
  EXPECT_EQ(log->stored_rows(), 300);
  // Row 200 of the log map is the angle f(200) = 100 (1 + ln 2).
  const double f200 = reference::MappedDistance(log->map(), 200);
  EXPECT_NEAR(log->cos_row(200)[0], std::cos(f200), 1e-15);
  EXPECT_NEAR(log->sin_row(200)[0], std::sin(f200), 1e-15);
}

}  // namespace
}  // namespace posenc
