// What every public entry shares (issue 16 item 2): the one angle-limit check, with one message
// form from each entry that checks it, and the one exception guard (lib/core/guard.h), provoked
// through the public API by failing the N-th allocation of a call, for every N the call reaches:
// no exception escapes, a Status entry returns kInternal naming itself, a C entry returning a
// size returns its fallback 0, a C++ list returns empty, and outputs are untouched.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "posenc/freqs.h"
#include "posenc/posenc.h"
#include "posenc/rerope.h"
#include "posenc/rope.h"
#include "posenc/sinusoidal.h"
#include "posenc/targets.h"

// Fault injection: the global allocation functions of this binary (which posenc's library, static
// or shared, also calls) fail the allocation that g_fail_at counts down to, on this thread only.
namespace {
thread_local int64_t g_fail_at = -1;  // -1: never fail
thread_local bool g_failed = false;   // set when the armed allocation failed
}  // namespace

void* operator new(std::size_t size) {
  if (g_fail_at >= 0 && g_fail_at-- == 0) {
    g_failed = true;
    throw std::bad_alloc();
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// Not inlined: g++ would otherwise see free() on memory from operator new and warn
// (-Wmismatched-new-delete), though both are these replacements.
__attribute__((noinline)) void operator delete(void* p) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace posenc {
namespace {

// Runs call() with the n-th allocation failing, for n = 0, 1, ... until a run completes without
// reaching the armed allocation; check(result, failed) judges each run. Returns the number of
// runs in which an allocation failed (the allocations the call makes).
template <class Call, class Check>
int SweepAllocationFailures(const Call& call, const Check& check) {
  for (int n = 0;; ++n) {
    g_failed = false;
    g_fail_at = n;
    auto result = call();
    g_fail_at = -1;
    const bool failed = g_failed;
    check(result, failed);
    if (!failed) return n;
    if (n > 100000) {
      ADD_FAILURE() << "the call did not finish without failing";
      return n;
    }
  }
}

// `entries`: the entry called, then any public entry it calls in turn (whose guard then reports).
void ExpectGuardedStatus(const Status& st, bool failed, std::vector<std::string> entries) {
  if (!failed) {
    EXPECT_TRUE(st.ok()) << st.message();
    return;
  }
  EXPECT_EQ(st.code(), StatusCode::kInternal) << st.message();
  bool named = false;
  for (const std::string& e : entries) named = named || st.message() == "out of memory in " + e;
  EXPECT_TRUE(named) << st.message();
}

TEST(GuardTest, RopeTableCreateReportsOutOfMemory) {
  Frequencies f;
  f.base = 10000.0 + 1.0 / 7;  // not yet cached by another test of this binary
  std::shared_ptr<const RopeTable> table;
  const int runs = SweepAllocationFailures(
      [&] { return RopeTable::Create(64, f, 300, &table); },
      [&](const Status& st, bool failed) {
        ExpectGuardedStatus(st, failed, {"posenc::RopeTable::Create"});
        if (failed) {
          EXPECT_EQ(table, nullptr);  // on failure *out is left unchanged
        }
      });
  EXPECT_GE(runs, 3);  // the table, its frequencies, cos and sin at least
  ASSERT_NE(table, nullptr);
}

TEST(GuardTest, SinusoidalTableCreateReportsOutOfMemory) {
  std::shared_ptr<const SinusoidalTable> table;
  const int runs = SweepAllocationFailures(
      [&] { return SinusoidalTable::Create(SinusoidalParams(), 16, 40, &table); },
      [&](const Status& st, bool failed) {
        ExpectGuardedStatus(st, failed, {"posenc::SinusoidalTable::Create"});
        if (failed) {
          EXPECT_EQ(table, nullptr);
        }
      });
  EXPECT_GE(runs, 2);
  ASSERT_NE(table, nullptr);
}

TEST(GuardTest, ApplyRopeReportsOutOfMemoryAndWritesNothing) {
  // 300 tokens: more than the positions snapshot holds inline, so the call allocates.
  constexpr int64_t kSeq = 300, kDim = 8;
  std::vector<float> q(kSeq * kDim), out(kSeq * kDim, -7.0f);
  for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<float>(i % 13) - 6.0f;
  std::vector<int64_t> ids(kSeq);
  for (int64_t s = 0; s < kSeq; ++s) ids[static_cast<size_t>(s)] = kSeq - s;
  RopeTensors t;
  t.q = TensorBSHD(q.data(), DType::kF32, 1, kSeq, 1, kDim);
  t.q_out = TensorBSHD(out.data(), DType::kF32, 1, kSeq, 1, kDim);
  RopeParams p;
  p.positions = Positions::Ids(ids.data());
  const int runs = SweepAllocationFailures(
      [&] { return ApplyRope(t, p); },
      [&](const Status& st, bool failed) {
        ExpectGuardedStatus(st, failed, {"posenc::ApplyRope"});
        if (failed) {
          for (float v : out) ASSERT_EQ(v, -7.0f) << "a failed call wrote its output";
        }
      });
  EXPECT_GE(runs, 1);
}

// What a runtime calls once per generated token, with a warm frequency memo, allocates nothing: no
// message text is formatted on success (a token name once was, in every angle check) and no row
// scratch is taken from the heap. A call that allocated would fail its first run here.
TEST(GuardTest, DecodeStepsAllocateNothing) {
  constexpr int64_t kHeads = 4, kKvHeads = 2, kDim = 128;
  std::vector<float> q(kHeads * kDim, 0.5f), k(kKvHeads * kDim, -0.25f);
  std::vector<float> q_out(q.size()), k_out(k.size());
  std::shared_ptr<const RopeTable> table;
  ASSERT_TRUE(RopeTable::Create(kDim, Frequencies(), 4096, &table).ok());
  for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
    for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32})
      for (bool use_table : {false, true})
        for (bool out_of_place : {false, true}) {
          RopeParams p;
          p.pairs = pairs;
          p.arithmetic = a;
          p.positions = Positions::Offset(4000);
          if (use_table) p.source = CosSinSource::Table(table.get());
          RopeTensors t;
          t.q = TensorBSHD(q.data(), DType::kF32, 1, 1, kHeads, kDim);
          t.k = TensorBSHD(k.data(), DType::kF32, 1, 1, kKvHeads, kDim);
          if (out_of_place) {
            t.q_out = TensorBSHD(q_out.data(), DType::kF32, 1, 1, kHeads, kDim);
            t.k_out = TensorBSHD(k_out.data(), DType::kF32, 1, 1, kKvHeads, kDim);
          }
          ASSERT_TRUE(ApplyRope(t, p).ok());  // warms the frequency memo
          const int runs = SweepAllocationFailures(
              [&] { return ApplyRope(t, p); },
              [&](const Status& st, bool failed) {
                ExpectGuardedStatus(st, failed, {"posenc::ApplyRope"});
              });
          EXPECT_EQ(runs, 0) << PairLayoutName(pairs) << ", arithmetic " << static_cast<int>(a)
                             << (use_table ? ", table" : ", on the fly")
                             << (out_of_place ? ", out of place" : ", in place");
        }
  // The same for a sinusoidal decode step: one row added to x in place.
  std::vector<float> x(768, 1.0f);
  SinusoidalParams sp;
  sp.position_offset = 4000;
  const EmbeddingView view = EmbeddingBSD(x.data(), DType::kF32, 1, 1, 768);
  ASSERT_TRUE(AddSinusoidal(sp, view).ok());
  const int runs = SweepAllocationFailures(
      [&] { return AddSinusoidal(sp, view); },
      [&](const Status& st, bool failed) {
        ExpectGuardedStatus(st, failed, {"posenc::AddSinusoidal"});
      });
  EXPECT_EQ(runs, 0) << "AddSinusoidal";
}

// Parsing JSON is not swept: nlohmann-json 3.11's ~basic_json allocates (a stack of children) and
// terminates when that fails, inside a destructor where no guard can help. The frequencies of a
// parsed config are computed by posenc alone.
TEST(GuardTest, ComputeFrequenciesReportsOutOfMemory) {
  const std::string json =
      R"({"hidden_size": 256, "num_attention_heads": 4, "rope_theta": 500000.0,
          "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                           "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})";
  RopeConfig c;
  ASSERT_TRUE(ParseHfConfig(json, &c).ok());
  RopeFrequencies f;
  const int runs = SweepAllocationFailures(
      [&] { return ComputeFrequencies(c, 0, &f); },
      [&](const Status& st, bool failed) {
        ExpectGuardedStatus(st, failed, {"posenc::ComputeFrequencies"});
        if (failed) {
          EXPECT_TRUE(f.inv_freq.empty());  // *out is written only on success
        }
      });
  EXPECT_GE(runs, 1);
  EXPECT_EQ(f.inv_freq.size(), 32u);
}

// Entries without an error channel return their documented fallback.
TEST(GuardTest, TargetListsFallBackToEmpty) {
  const std::vector<std::string> all = CompiledTargets();
  ASSERT_FALSE(all.empty());
  const int runs = SweepAllocationFailures(
      [&] { return CompiledTargets(); },
      [&](const std::vector<std::string>& names, bool failed) {
        if (failed) {
          EXPECT_TRUE(names.empty());
        } else {
          EXPECT_EQ(names, all);
        }
      });
  EXPECT_GE(runs, 1);
}

TEST(GuardTest, CTargetListFallsBackToZero) {
  char full[512];
  const size_t len = posenc_supported_targets(full, sizeof full);
  ASSERT_GT(len, 0u);
  ASSERT_LT(len, sizeof full);
  char buf[512];
  const int runs = SweepAllocationFailures(
      [&] {
        std::memset(buf, 'x', sizeof buf);
        return posenc_supported_targets(buf, sizeof buf);
      },
      [&](size_t n, bool failed) {
        if (failed) {
          EXPECT_EQ(n, 0u);
          // Either nothing was written, or the C++ list fell back to empty first ("").
          EXPECT_TRUE(buf[0] == 'x' || buf[0] == '\0');
        } else {
          EXPECT_EQ(n, len);
          EXPECT_STREQ(buf, full);
        }
      });
  EXPECT_GE(runs, 1);
}

TEST(GuardTest, CStatusEntryReportsOutOfMemoryAndWritesNothing) {
  posenc_config_desc d;
  posenc_config_desc_init(&d);
  d.rope_theta = 500000.0;
  d.head_dim = 64;
  posenc_config* config = nullptr;
  ASSERT_EQ(posenc_config_create(&d, &config), POSENC_OK) << posenc_last_error();
  double inv_freq[32];
  int64_t rotary_dim = -1;
  double factor = -1.0;
  const int runs = SweepAllocationFailures(
      [&] {
        for (double& v : inv_freq) v = -1.0;
        return posenc_config_frequencies(config, 0, inv_freq, 32, &rotary_dim, &factor);
      },
      [&](posenc_status st, bool failed) {
        if (!failed) {
          EXPECT_EQ(st, POSENC_OK) << posenc_last_error();
          return;
        }
        EXPECT_EQ(st, POSENC_INTERNAL);
        for (double v : inv_freq) EXPECT_EQ(v, -1.0);
        EXPECT_EQ(rotary_dim, -1);
        // The message is recorded unless recording it was the allocation that failed.
        const std::string msg = posenc_last_error();
        EXPECT_TRUE(msg.empty() || msg == "out of memory in posenc::ComputeFrequencies" ||
                    msg == "out of memory in posenc_config_frequencies")
            << msg;
      });
  EXPECT_GE(runs, 1);
  EXPECT_EQ(rotary_dim, 64);
  EXPECT_EQ(inv_freq[0], 1.0);
  posenc_config_destroy(config);
}

// The angle limit: one check (api::CheckAngle), one message form from every entry that runs it.
const std::regex kAngleMessage(
    R"(^(.+) = (-?[0-9]+): angle (\|.+\|) = ([0-9.e+]+) exceeds 2\^50, the largest angle posenc reduces$)");

void ExpectAngleError(const Status& st, const std::string& argument, int64_t value,
                      const std::string& formula, double angle) {
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange) << st.message();
  std::smatch m;
  const std::string& msg = st.message();
  ASSERT_TRUE(std::regex_match(msg, m, kAngleMessage)) << msg;
  EXPECT_EQ(m[1].str(), argument) << msg;
  EXPECT_EQ(m[2].str(), std::to_string(value)) << msg;
  EXPECT_EQ(m[3].str(), formula) << msg;
  EXPECT_EQ(std::stod(m[4].str()), angle) << msg;
}

constexpr int64_t kFar = int64_t{1} << 51;
constexpr double kBig = 1099511627776.0;  // 2^40: (2^11 - 1) * 2^40 > 2^50

TEST(AngleLimitTest, OneMessageFromEveryEntry) {
  std::vector<float> q(2 * 8, 0.5f);
  RopeTensors t;
  t.q = TensorBSHD(q.data(), DType::kF32, 1, 2, 1, 8);
  RopeParams p;
  p.positions = Positions::Offset(kFar);  // tokens at 2^51 and 2^51 + 1; inv_freq[0] = 1
  ExpectAngleError(ApplyRope(t, p), "positions[b=0, s=1]", kFar + 1, "|p * inv_freq|",
                   static_cast<double>(kFar + 1));

  const double inv_freq[2] = {kBig, 1.0};
  Frequencies f;
  f.inv_freq = inv_freq;
  f.inv_freq_len = 2;
  std::shared_ptr<const RopeTable> table;
  ExpectAngleError(RopeTable::Create(4, f, 2048, &table), "max_positions", 2048,
                   "|(max_positions - 1) * inv_freq|", 2047 * kBig);
  EXPECT_EQ(table, nullptr);

  std::shared_ptr<const RelativeRopeTable> rtable;
  ExpectAngleError(RelativeRopeTable::Create(4, f, DistanceMap(), 2048, &rtable),
                   "max_distance - 1", 2047, "|f(d) * inv_freq|", 2047 * kBig);
  EXPECT_EQ(rtable, nullptr);

  std::vector<float> pe(3 * 4, 1.0f);
  SinusoidalParams sp;
  sp.positions = Positions::Offset(kFar);
  sp.position_offset = 2;  // w_0 = 1: the angle of the last token is 2^51 + 2 + 2
  ExpectAngleError(WriteSinusoidal(sp, EmbeddingBSD(pe.data(), DType::kF32, 1, 3, 4)),
                   "positions[b=0, s=2]", kFar + 2, "|(p + position_offset) * w|",
                   static_cast<double>(kFar + 4));
  for (float v : pe) EXPECT_EQ(v, 1.0f);

  // The negative side names the smallest position.
  p.positions = Positions::Offset(-kFar);
  ExpectAngleError(ApplyRope(t, p), "positions[b=0, s=0]", -kFar, "|p * inv_freq|",
                   static_cast<double>(kFar));
  // At the limit itself the calls succeed.
  p.positions = Positions::Offset((int64_t{1} << 50) - 1);
  EXPECT_TRUE(ApplyRope(t, p).ok());
}

}  // namespace
}  // namespace posenc
