// posenc::RopeCall: Create validates as ApplyRope does; Apply(positions) writes exactly the bytes
// ApplyRope(tensors, params with those positions) writes (every output and every input buffer
// compared bit for bit, over several steps), returns ApplyRope's Status for bad positions, and
// writes nothing then. ApplyRope itself is held to the double-precision reference by the kernel
// and conformance tests; here it is the oracle. One tester (RopeCallTester) drives every case.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "posenc/rope.h"
#include "posenc/targets.h"

namespace posenc {
namespace {

// One case: shapes, dtype, layout and the params (positions are given per step).
struct CallCase {
  std::string name;
  int64_t batch = 1, seq = 1, q_heads = 4, k_heads = 2, head_dim = 64;
  DType dtype = DType::kF32;
  bool out_of_place = false;
  bool bhsd = false;  // q and k in [batch, heads, seq, head_dim] memory
  RopeParams params;
};

// Two identical sets of q / k (and outputs): set 0 goes through a RopeCall, set 1 through
// ApplyRope; after every step both sets must hold the same bytes.
class RopeCallTester {
 public:
  explicit RopeCallTester(const CallCase& c) : c_(c) {
    const size_t words = Words(c.q_heads) + Words(c.k_heads);
    for (auto& set : sets_) set.assign(2 * words, 0);
    Refill(1);
  }

  // Fresh random inputs (equal in both sets) and a poisoned output area.
  void Refill(uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-4.f, 4.f);
    const size_t in_words = Words(c_.q_heads) + Words(c_.k_heads);
    for (size_t i = 0; i < sets_[0].size(); ++i) {
      uint32_t w;
      if (i < in_words) {
        const float lo = dist(rng), hi = dist(rng);
        w = c_.dtype == DType::kF32 ? Bits(lo) : (Bits(lo) >> 16) | (Bits(hi) & 0xFFFF0000u);
      } else {
        w = 0x7FBADBADu;  // outputs: a NaN pattern no rotation writes (NaNs come out canonical)
      }
      sets_[0][i] = sets_[1][i] = w;
    }
  }

  RopeTensors Tensors(int set) {
    uint32_t* base = sets_[set].data();
    const size_t qw = Words(c_.q_heads), kw = Words(c_.k_heads);
    RopeTensors t;
    t.q = View(base, c_.q_heads);
    t.k = View(base + qw, c_.k_heads);
    if (c_.out_of_place) {
      t.q_out = View(base + qw + kw, c_.q_heads);
      t.k_out = View(base + 2 * qw + kw, c_.k_heads);
    }
    return t;
  }

  Status Create(std::unique_ptr<RopeCall>* call) {
    return RopeCall::Create(Tensors(0), c_.params, call);
  }

  // One step: the call on set 0, ApplyRope on set 1; both statuses and all bytes must agree.
  void Step(const RopeCall& call, const Positions& positions, const std::string& what) {
    const Status a = call.Apply(positions);
    RopeParams p = c_.params;
    p.positions = positions;
    const Status b = ApplyRope(Tensors(1), p);
    EXPECT_EQ(a.code(), b.code()) << c_.name << " " << what << ": " << a.message() << " / "
                                  << b.message();
    EXPECT_EQ(a.message(), b.message()) << c_.name << " " << what;
    EXPECT_EQ(std::memcmp(sets_[0].data(), sets_[1].data(), sets_[0].size() * 4), 0)
        << c_.name << " " << what << ": RopeCall::Apply and ApplyRope wrote different bytes";
  }

  const std::vector<uint32_t>& Bytes(int set) const { return sets_[set]; }

 private:
  static uint32_t Bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  }
  size_t Elements(int64_t heads) const {
    return static_cast<size_t>(c_.batch * c_.seq * heads * c_.head_dim);
  }
  size_t Words(int64_t heads) const {
    return c_.dtype == DType::kF32 ? Elements(heads) : (Elements(heads) + 1) / 2;
  }
  Tensor View(uint32_t* data, int64_t heads) const {
    return c_.bhsd ? TensorBHSD(data, c_.dtype, c_.batch, heads, c_.seq, c_.head_dim)
                   : TensorBSHD(data, c_.dtype, c_.batch, c_.seq, heads, c_.head_dim);
  }

  CallCase c_;
  std::vector<uint32_t> sets_[2];
};

std::shared_ptr<const RopeTable> Table(int64_t rotary_dim, int64_t positions, double factor = 1.0) {
  Frequencies f;
  f.base = 10000.0;
  f.attention_factor = factor;
  std::shared_ptr<const RopeTable> t;
  EXPECT_TRUE(RopeTable::Create(rotary_dim, f, positions, &t).ok());
  return t;
}

// Runs `steps` steps of positions from `next_positions(step)`, refilling the inputs between steps
// (in place the previous step rotated them).
template <class NextPositions>
void RunSteps(const CallCase& c, int steps, const NextPositions& next_positions) {
  RopeCallTester tester(c);
  std::unique_ptr<RopeCall> call;
  const Status st = tester.Create(&call);
  ASSERT_TRUE(st.ok()) << c.name << ": " << st.message();
  ASSERT_NE(call, nullptr);
  for (int step = 0; step < steps; ++step) {
    tester.Refill(100 + static_cast<uint32_t>(step));
    tester.Step(*call, next_positions(step), "step " + std::to_string(step));
  }
}

// Every target this CPU runs (the same bits are promised on each).
template <class Body>
void ForEachTarget(const Body& body) {
  for (const std::string& target : SupportedTargets()) {
    ASSERT_TRUE(SetMaxTarget(target).ok()) << target;
    SCOPED_TRACE(target);
    body();
  }
  ASSERT_TRUE(SetMaxTarget("").ok());
}

TEST(RopeCall, DecodeStepsMatchApplyRopeForEverySourceAndLayout) {
  const auto table = Table(64, 4096, 0.75);
  const auto table48 = Table(48, 4096);
  std::vector<float> cache_cos(4096 * 32), cache_sin(4096 * 32);
  for (size_t i = 0; i < cache_cos.size(); ++i) {
    cache_cos[i] = table->cos_row(0)[i];
    cache_sin[i] = table->sin_row(0)[i];
  }
  std::vector<double> inv_freq(32);
  for (size_t i = 0; i < inv_freq.size(); ++i) inv_freq[i] = std::pow(0.7, static_cast<double>(i));

  std::vector<CallCase> cases;
  CallCase c;
  c.name = "default (on the fly, kF64)";
  cases.push_back(c);
  c.name = "table + kF32";
  c.params.source = CosSinSource::Table(table.get());
  c.params.arithmetic = RotationArithmetic::kF32;
  cases.push_back(c);
  c.name = "table + kF32, interleaved, out of place";
  c.params.pairs = PairLayout::kInterleaved;
  c.out_of_place = true;
  cases.push_back(c);
  c.name = "table, partial rotary 48 of 64, inverse, out of place (tail copied)";
  c.params = RopeParams{};
  c.params.source = CosSinSource::Table(table48.get());
  c.params.rotary_dim = 48;
  c.params.inverse = true;
  cases.push_back(c);
  c = CallCase{};
  c.name = "caller cache by position, bf16 tensors, BHSD";
  CosSinCache cache;
  cache.cos = cache_cos.data();
  cache.sin = cache_sin.data();
  cache.rows = 4096;
  c.params.source = CosSinSource::Cache(cache);
  c.dtype = DType::kBF16;
  c.bhsd = true;
  c.batch = 2;
  cases.push_back(c);
  c.name = "caller inv_freq, attention factor, f16, kF32";
  c.params = RopeParams{};
  c.params.freqs.inv_freq = inv_freq.data();
  c.params.freqs.inv_freq_len = 32;
  c.params.freqs.attention_factor = 0.5;
  c.params.arithmetic = RotationArithmetic::kF32;
  c.dtype = DType::kF16;
  c.bhsd = false;
  cases.push_back(c);
  c = CallCase{};
  c.name = "head_dim 128, 32 q heads, 8 k heads (Llama-3-8B decode)";
  c.head_dim = 128;
  c.q_heads = 32;
  c.k_heads = 8;
  c.params.freqs.base = 500000.0;
  cases.push_back(c);

  ForEachTarget([&] {
    for (const CallCase& cc : cases) {
      // Decode: one token per sequence, the next position each step (batch entries apart).
      std::vector<int64_t> offsets(static_cast<size_t>(cc.batch));
      RunSteps(cc, 5, [&](int step) {
        if (cc.batch == 1) return Positions::Offset(1000 + 37 * step);
        for (size_t b = 0; b < offsets.size(); ++b) {
          offsets[b] = 17 * static_cast<int64_t>(b) + step;
        }
        return Positions::PerBatch(offsets.data());
      });
    }
  });
}

TEST(RopeCall, PrefillChunksWithIdsAndThreadsMatchApplyRope) {
  const auto table = Table(64, 8192);
  CallCase c;
  c.name = "prefill chunks, ids64, 2 threads";
  c.batch = 2;
  c.seq = 96;  // above the serial threshold with 8 + 4 heads of 64 f32
  c.q_heads = 8;
  c.k_heads = 4;
  c.params.source = CosSinSource::Table(table.get());
  c.params.exec.max_threads = 2;
  std::vector<int64_t> ids64(static_cast<size_t>(c.batch * c.seq));
  RunSteps(c, 3, [&](int step) {
    for (size_t i = 0; i < ids64.size(); ++i) {
      ids64[i] = static_cast<int64_t>((i * 7 + 96 * step) % 8000);
    }
    return Positions::Ids(ids64.data());
  });
  c.name = "prefill chunks, ids32, on the fly, out of place";
  c.params = RopeParams{};
  c.out_of_place = true;
  std::vector<int32_t> ids32(static_cast<size_t>(c.batch * c.seq));
  RunSteps(c, 3, [&](int step) {
    for (size_t i = 0; i < ids32.size(); ++i) ids32[i] = static_cast<int32_t>(i * 3 + 1000 * step);
    return Positions::Ids(ids32.data());
  });
}

TEST(RopeCall, MRopeStreamIdsAndTextOnlyPositionsMatchApplyRope) {
  CallCase c;
  c.name = "M-RoPE sections [8, 12, 12]";
  c.seq = 5;
  const int64_t sections[3] = {8, 12, 12};
  c.params.mrope.section = sections;
  c.params.mrope.num_sections = 3;
  std::vector<int64_t> ids(3 * 5);
  RunSteps(c, 4, [&](int step) {
    if (step % 2 == 1) return Positions::Offset(40 + step);  // text-only tokens: plain RoPE
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i * 11 + step);
    return Positions::StreamIds(ids.data(), 3);
  });
  c.name = "M-RoPE interleaved (Qwen3-VL)";
  c.params.mrope.interleaved = true;
  RunSteps(c, 2, [&](int step) {
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i * 5 + step);
    return Positions::StreamIds(ids.data(), 3);
  });
}

TEST(RopeCall, KeepsItsOwnCopiesOfInvFreqAndSections) {
  std::vector<double> inv_freq(32, 0.01);
  std::vector<int64_t> sections = {16, 8, 8};
  CallCase c;
  c.name = "inv_freq and sections changed after Create";
  c.params.freqs.inv_freq = inv_freq.data();
  c.params.freqs.inv_freq_len = 32;
  c.params.mrope.section = sections.data();
  c.params.mrope.num_sections = 3;
  RopeCallTester tester(c);
  std::unique_ptr<RopeCall> call;
  ASSERT_TRUE(tester.Create(&call).ok());
  // The caller reuses its arrays: the RopeCall must still rotate with the values of Create.
  std::vector<double> kept_inv_freq = inv_freq;
  std::vector<int64_t> kept_sections = sections;
  std::fill(inv_freq.begin(), inv_freq.end(), std::nan(""));
  sections = {0, 0, 32};
  std::vector<int64_t> ids = {3, 900, 40};
  const Positions p = Positions::StreamIds(ids.data(), 3);
  ASSERT_TRUE(call->Apply(p).ok());
  RopeParams expected = c.params;
  expected.freqs.inv_freq = kept_inv_freq.data();
  expected.mrope.section = kept_sections.data();
  expected.positions = p;
  ASSERT_TRUE(ApplyRope(tester.Tensors(1), expected).ok());
  EXPECT_EQ(tester.Bytes(0), tester.Bytes(1));
}

TEST(RopeCall, CreateRejectsWhatApplyRopeRejectsAndLeavesOutAlone) {
  const auto table = Table(64, 100);
  struct Bad {
    const char* what;
    void (*mutate)(CallCase&, const RopeTable*);
  };
  const Bad bad[] = {
      {"rotary_dim odd", [](CallCase& c, const RopeTable*) { c.params.rotary_dim = 7; }},
      {"table of another rotary_dim",
       [](CallCase& c, const RopeTable* t) {
         c.params.source = CosSinSource::Table(t);
         c.head_dim = 32;
       }},
      {"position beyond the table",
       [](CallCase& c, const RopeTable* t) {
         c.params.source = CosSinSource::Table(t);
         c.params.positions = Positions::Offset(100);
       }},
      {"negative threads", [](CallCase& c, const RopeTable*) { c.params.exec.max_threads = -1; }},
      {"null ids",
       [](CallCase& c, const RopeTable*) {
         c.params.positions = Positions::Ids(static_cast<const int64_t*>(nullptr));
       }},
      {"stream ids without sections",
       [](CallCase& c, const RopeTable*) {
         static const int64_t ids[3] = {0, 0, 0};
         c.params.positions = Positions::StreamIds(ids, 3);
       }},
  };
  for (const Bad& b : bad) {
    CallCase c;
    c.name = b.what;
    b.mutate(c, table.get());
    RopeCallTester tester(c);
    const std::vector<uint32_t> before = tester.Bytes(0);
    std::unique_ptr<RopeCall> call;
    const Status created = tester.Create(&call);
    const Status applied = ApplyRope(tester.Tensors(1), c.params);
    EXPECT_FALSE(created.ok()) << b.what;
    EXPECT_EQ(created.code(), applied.code()) << b.what;
    EXPECT_EQ(created.message(), applied.message()) << b.what;
    EXPECT_EQ(call, nullptr) << b.what;
    EXPECT_EQ(tester.Bytes(0), before) << b.what << ": a failed Create wrote";
  }
  RopeTensors none;
  std::unique_ptr<RopeCall> call;
  EXPECT_EQ(RopeCall::Create(none, RopeParams{}, &call).message(),
            "q.data and k.data are both null: nothing to rotate");
  CallCase ok;
  RopeCallTester tester(ok);
  EXPECT_EQ(RopeCall::Create(tester.Tensors(0), RopeParams{}, nullptr).message(), "out is null");
}

TEST(RopeCall, ApplyRejectsBadPositionsAsApplyRopeDoesAndWritesNothing) {
  const auto table = Table(64, 100);
  CallCase c;
  c.name = "table of 100 rows, 2 sequences";
  c.batch = 2;
  c.out_of_place = true;
  c.params.source = CosSinSource::Table(table.get());
  RopeCallTester tester(c);
  std::unique_ptr<RopeCall> call;
  ASSERT_TRUE(tester.Create(&call).ok());
  const std::vector<uint32_t> before = tester.Bytes(0);
  const int64_t past[2] = {5, 100};
  const int32_t negative[2] = {3, -1};
  static const int64_t streams[3 * 2] = {};
  // Position ids inside an output: the kernels would overwrite them while reading.
  const RopeTensors views = tester.Tensors(0);
  const int64_t* inside_q_out = static_cast<const int64_t*>(views.q_out.data);
  const struct {
    const char* what;
    Positions p;
    StatusCode code;
  } bad[] = {
      {"a row past the table", Positions::PerBatch(past), StatusCode::kOutOfRange},
      {"a negative id", Positions::Ids(negative), StatusCode::kOutOfRange},
      {"null offsets", Positions::PerBatch(nullptr), StatusCode::kInvalidArgument},
      {"stream ids without sections", Positions::StreamIds(streams, 3),
       StatusCode::kInvalidArgument},
  };
  for (const auto& b : bad) {
    const Status st = call->Apply(b.p);
    RopeParams p = c.params;
    p.positions = b.p;
    const Status expected = ApplyRope(tester.Tensors(1), p);
    EXPECT_EQ(st.code(), b.code) << b.what << ": " << st.message();
    EXPECT_EQ(st.code(), expected.code()) << b.what;
    EXPECT_EQ(st.message(), expected.message()) << b.what;
    EXPECT_EQ(tester.Bytes(0), before) << b.what << ": a failed Apply wrote";
  }
  // Valid position ids inside an output (set 0's q_out, which the call writes): rejected before
  // any write, as ApplyRope rejects them for its own outputs.
  const int64_t valid_ids[2] = {3, 4};
  std::memcpy(views.q_out.data, valid_ids, sizeof(valid_ids));
  const std::vector<uint32_t> planted = tester.Bytes(0);
  const Status inside = call->Apply(Positions::Ids(inside_q_out));
  EXPECT_EQ(inside.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(inside.message(),
            "positions.ids64 overlaps q_out: an input must not share memory with an output");
  EXPECT_EQ(tester.Bytes(0), planted) << "ids inside q_out: a failed Apply wrote";
  // Still usable after the failures.
  tester.Step(*call, Positions::Offset(50), "after the failures");
}

}  // namespace
}  // namespace posenc
