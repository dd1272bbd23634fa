// Hostile arguments to the library (issue 13): inputs that share memory with an output, views
// whose extents sit at the edge of int64, frequencies that overflow, caches whose byte size
// overflows, a sinusoidal table read with other conventions than it was built with, and ids that
// change after validation. Each case must fail cleanly (a Status naming the argument, nothing
// written) or, for the ids, use exactly the validated values.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lib/api/positions.h"
#include "posenc/rope.h"
#include "posenc/sinusoidal.h"

namespace posenc {
namespace {

constexpr auto kInvalid = StatusCode::kInvalidArgument;

bool Contains(const Status& st, const std::string& needle) {
  return st.message().find(needle) != std::string::npos;
}

// Both the kernels and the reference must reject the call with `needle` in the message, and
// leave the bytes of `buffer` as they were.
void ExpectRejected(const RopeTensors& t, const RopeParams& p, const std::string& needle,
                    std::vector<unsigned char>* buffer) {
  const std::vector<unsigned char> before = *buffer;
  for (bool use_reference : {false, true}) {
    const Status st = use_reference ? reference::ApplyRope(t, p) : ApplyRope(t, p);
    EXPECT_EQ(st.code(), kInvalid) << st.message();
    EXPECT_TRUE(Contains(st, needle)) << "message \"" << st.message() << "\" lacks \"" << needle << "\"";
    EXPECT_TRUE(*buffer == before) << "a failed call wrote: " << st.message();
  }
}

// One buffer holds q [1, 4, 2, 8] f32 (in place) and, behind it, room for the call's inputs, so
// each test can place an input inside the tensor or beside it.
struct SharedBuffer {
  static constexpr int64_t kTokens = 4, kHeads = 2, kDim = 8;
  std::vector<unsigned char> bytes = std::vector<unsigned char>(4096, 0);
  float* q() { return reinterpret_cast<float*>(bytes.data()); }
  unsigned char* after_q() { return bytes.data() + kTokens * kHeads * kDim * 4; }
  RopeTensors Tensors() {
    for (int64_t i = 0; i < kTokens * kHeads * kDim; ++i) q()[i] = 0.25f * static_cast<float>(i % 7);
    RopeTensors t;
    t.q = TensorBSHD(q(), 1, kTokens, kHeads, kDim);
    return t;
  }
};

TEST(HostileInputTest, PositionIdsInsideAnOutputAreRejected) {
  // The reproducer of issue 13 item 5: ids stored in the rows the kernel writes. Before the fix
  // the kernel overwrote them and read table rows far outside the table.
  std::shared_ptr<const RopeTable> table;
  ASSERT_TRUE(RopeTable::Create(8, Frequencies(), 16, &table).ok());
  for (bool ids64 : {false, true}) {
    SharedBuffer buf;
    RopeTensors t = buf.Tensors();
    RopeParams p;
    p.source = CosSinSource::Table(table.get());
    unsigned char* ids = reinterpret_cast<unsigned char*>(buf.q() + 16);  // token 1's row
    if (ids64) {
      const int64_t v[4] = {0, 1, 2, 3};
      std::memcpy(ids, v, sizeof v);
      p.positions = Positions::Ids(reinterpret_cast<const int64_t*>(ids));
    } else {
      const int32_t v[4] = {0, 1, 2, 3};
      std::memcpy(ids, v, sizeof v);
      p.positions = Positions::Ids(reinterpret_cast<const int32_t*>(ids));
    }
    ExpectRejected(t, p, ids64 ? "positions.ids64 overlaps q (in place)" : "positions.ids32 overlaps q",
                   &buf.bytes);
  }
}

TEST(HostileInputTest, EveryInputOverlappingAnOutputIsRejected) {
  {  // per-batch offsets inside k_out
    std::vector<float> q(2 * 3 * 1 * 4, 1.f), k(2 * 3 * 1 * 4, 2.f), k_out(2 * 3 * 1 * 4, 0.f);
    RopeTensors t;
    t.q = TensorBSHD(q.data(), 2, 3, 1, 4);
    t.k = TensorBSHD(k.data(), 2, 3, 1, 4);
    t.k_out = TensorBSHD(k_out.data(), 2, 3, 1, 4);
    const int64_t offsets[2] = {5, 9};
    std::memcpy(k_out.data() + 4, offsets, sizeof offsets);
    RopeParams p;
    p.positions = Positions::PerBatch(reinterpret_cast<const int64_t*>(k_out.data() + 4));
    std::vector<unsigned char> snapshot(reinterpret_cast<unsigned char*>(k_out.data()),
                                        reinterpret_cast<unsigned char*>(k_out.data() + k_out.size()));
    for (bool use_reference : {false, true}) {
      const Status st = use_reference ? reference::ApplyRope(t, p) : ApplyRope(t, p);
      EXPECT_TRUE(Contains(st, "positions.batch_offsets overlaps k_out")) << st.message();
      EXPECT_EQ(std::memcmp(snapshot.data(), k_out.data(), snapshot.size()), 0);
    }
  }
  {  // inv_freq inside q
    SharedBuffer buf;
    RopeTensors t = buf.Tensors();
    RopeParams p;
    double* inv = reinterpret_cast<double*>(buf.q() + 40);
    for (int i = 0; i < 4; ++i) inv[i] = std::ldexp(1.0, -i);
    p.freqs.inv_freq = inv;
    p.freqs.inv_freq_len = 4;
    ExpectRejected(t, p, "freqs.inv_freq overlaps q (in place)", &buf.bytes);
  }
  for (const char* which : {"cos", "sin"}) {  // a cache inside q
    SharedBuffer buf;
    RopeTensors t = buf.Tensors();
    float* inside = buf.q() + 8;
    float* outside = reinterpret_cast<float*>(buf.after_q());
    for (int i = 0; i < 16; ++i) outside[i] = 0.5f;
    CosSinCache c;
    c.cos = std::strcmp(which, "cos") == 0 ? inside : outside;
    c.sin = std::strcmp(which, "sin") == 0 ? inside : outside;
    c.rows = 4;
    RopeParams p;
    p.source = CosSinSource::Cache(c);
    ExpectRejected(t, p, std::string("source.cache.") + which + " overlaps q (in place)", &buf.bytes);
  }
  {  // sinusoidal: ids inside out
    std::vector<float> out(2 * 3 * 4, 0.f);
    const int64_t ids[6] = {0, 1, 2, 3, 4, 5};
    std::memcpy(out.data() + 4, ids, sizeof ids);
    const std::vector<float> before = out;
    SinusoidalParams p;
    p.positions = Positions::Ids(reinterpret_cast<const int64_t*>(out.data() + 4));
    for (bool use_reference : {false, true}) {
      const Status st = use_reference ? reference::WriteSinusoidal(p, EmbeddingBSD(out.data(), 2, 3, 4))
                                      : WriteSinusoidal(p, EmbeddingBSD(out.data(), 2, 3, 4));
      EXPECT_TRUE(Contains(st, "positions.ids64 overlaps out")) << st.message();
      EXPECT_EQ(std::memcmp(before.data(), out.data(), out.size() * 4), 0);
    }
  }
}

TEST(HostileInputTest, InputsInThePaddingBetweenOutputRowsAreAccepted) {
  // Token rows of 8 floats with 8 floats of padding after each: ids in the padding are apart
  // from every element the call writes (the check works per token row, like q/k overlaps).
  std::vector<float> q(4 * 16, 1.f);
  Tensor view = TensorBSHD(q.data(), 1, 4, 1, 8);
  view.strides[1] = 16;
  view.strides[0] = 64;
  const int32_t ids[2] = {3, 1};
  std::memcpy(q.data() + 8, ids, sizeof ids);
  RopeTensors t;
  t.q = view;
  t.q.shape[1] = 2;
  RopeParams p;
  p.positions = Positions::Ids(reinterpret_cast<const int32_t*>(q.data() + 8));
  const Status st = ApplyRope(t, p);
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(std::memcmp(q.data() + 8, ids, sizeof ids), 0);
}

TEST(HostileInputTest, ViewExtentsAtTheEdgeOfInt64) {
  // max_offset = INT64_MAX: max_offset + 1 overflowed (signed overflow, UB) before the fix.
  std::vector<float> q(16, 1.f);
  RopeTensors t;
  t.q = TensorBSHD(q.data(), 2, 1, 1, 2);
  t.q.strides[0] = std::numeric_limits<int64_t>::max() - 1;
  RopeParams p;
  Status st = ApplyRope(t, p);
  EXPECT_EQ(st.code(), kInvalid);
  EXPECT_TRUE(Contains(st, "overflows")) << st.message();
  SinusoidalParams sp;
  EmbeddingView e = EmbeddingBSD(q.data(), 2, 1, 2);
  e.stride_batch = std::numeric_limits<int64_t>::max() - 1;
  st = WriteSinusoidal(sp, e);
  EXPECT_TRUE(Contains(st, "overflows")) << st.message();
  EXPECT_EQ(q, std::vector<float>(16, 1.f));
}

TEST(HostileInputTest, CacheWhoseByteSizeOverflowsIsRejected) {
  std::vector<float> q(1 * 2 * 1 * 8, 1.f), cache(64, 0.5f);
  RopeTensors t;
  t.q = TensorBSHD(q.data(), 1, 2, 1, 8);
  CosSinCache c;
  c.cos = c.sin = cache.data();
  c.rows = int64_t{1} << 62;  // rows * 4 values * 4 bytes overflows int64
  RopeParams p;
  p.source = CosSinSource::Cache(c);
  const Status st = ApplyRope(t, p);
  EXPECT_EQ(st.code(), kInvalid);
  EXPECT_TRUE(Contains(st, "source.cache: 4611686018427387904 rows")) << st.message();
}

TEST(HostileInputTest, BasesWhoseFrequenciesOverflowAreRejected) {
  // base = 5e-324 and 64 channels: base^(-62/64) overflows to Inf, and position 0 then gave
  // 0 * Inf = NaN angles (NaN outputs from a call that succeeded).
  std::vector<float> q(1 * 1 * 1 * 64, 1.f);
  RopeTensors t;
  t.q = TensorBSHD(q.data(), 1, 1, 1, 64);
  RopeParams p;
  p.freqs.base = 5e-324;
  Status st = ApplyRope(t, p);
  EXPECT_EQ(st.code(), kInvalid);
  EXPECT_TRUE(Contains(st, "freqs.base = 4.9406564584124654e-324: inv_freq[31]")) << st.message();
  std::shared_ptr<const RopeTable> table;
  EXPECT_TRUE(Contains(RopeTable::Create(64, p.freqs, 4, &table), "is not finite"));
  EXPECT_EQ(table, nullptr);
  SinusoidalParams sp;
  sp.base = 5e-324;
  for (FrequencySpacing spacing : {FrequencySpacing::kPaper, FrequencySpacing::kTensor2Tensor}) {
    sp.spacing = spacing;
    st = WriteSinusoidal(sp, EmbeddingBSD(q.data(), 1, 1, 64));
    EXPECT_TRUE(Contains(st, "base = 4.9406564584124654e-324: frequency w[")) << st.message();
  }
  EXPECT_EQ(q, std::vector<float>(64, 1.f));
}

TEST(HostileInputTest, TablesAreBoundedBeforeAllocating) {
  std::shared_ptr<const RopeTable> rope;
  Status st = RopeTable::Create(128, Frequencies(), (int64_t{1} << 26) + 1, &rope);
  EXPECT_TRUE(Contains(st, "max_positions * rotary_dim / 2 <= 2^32")) << st.message();
  std::shared_ptr<const SinusoidalTable> sin;
  st = SinusoidalTable::Create(SinusoidalParams(), 1024, (int64_t{1} << 22) + 1, &sin);
  EXPECT_TRUE(Contains(st, "max_positions * d_model <= 2^32")) << st.message();
}

TEST(HostileInputTest, SinusoidalTableRejectsOtherConventions) {
  SinusoidalParams built;
  built.layout = SinusoidalLayout::kConcatSinCos;
  built.spacing = FrequencySpacing::kTensor2Tensor;
  built.base = 500.0;
  built.position_offset = 2;
  std::shared_ptr<const SinusoidalTable> table;
  ASSERT_TRUE(SinusoidalTable::Create(built, 8, 16, &table).ok());
  EXPECT_EQ(table->spacing(), FrequencySpacing::kTensor2Tensor);
  EXPECT_EQ(table->base(), 500.0);
  EXPECT_EQ(table->position_offset(), 2);
  std::vector<float> x(3 * 8, 1.f);
  const std::vector<float> before = x;
  SinusoidalParams p = built;
  p.table = table.get();
  ASSERT_TRUE(AddSinusoidal(p, EmbeddingBSD(x.data(), 1, 3, 8)).ok());  // the same: fine
  x = before;
  struct Mismatch {
    void (*change)(SinusoidalParams*);
    const char* needle;
  };
  const Mismatch mismatches[] = {
      {[](SinusoidalParams* q) { q->layout = SinusoidalLayout::kInterleaved; },
       "layout = interleaved: the table was built with concat_sin_cos"},
      {[](SinusoidalParams* q) { q->spacing = FrequencySpacing::kPaper; },
       "spacing = paper: the table was built with t2t"},
      {[](SinusoidalParams* q) { q->base = 10000.0; },
       "base = 10000: the table was built with base = 500"},
      {[](SinusoidalParams* q) { q->position_offset = 0; },
       "position_offset = 0: the table was built with position_offset = 2"},
  };
  for (const Mismatch& m : mismatches) {
    SinusoidalParams q = p;
    m.change(&q);
    for (bool use_reference : {false, true}) {
      const Status st = use_reference ? reference::AddSinusoidal(q, EmbeddingBSD(x.data(), 1, 3, 8))
                                      : AddSinusoidal(q, EmbeddingBSD(x.data(), 1, 3, 8));
      EXPECT_EQ(st.code(), kInvalid);
      EXPECT_TRUE(Contains(st, m.needle)) << st.message();
      EXPECT_EQ(x, before);
    }
  }
}

TEST(HostileInputTest, PositionSnapshotIsImmuneToLaterChanges) {
  // Validation and the kernels read posenc's copy: a caller (or another thread) changing the
  // ids after it was taken cannot move an index outside the validated range.
  for (int kind = 0; kind < 2; ++kind) {
    std::vector<int32_t> ids32 = {0, 5, 7, 9, 1, 2};
    std::vector<int64_t> offsets = {3, 100};
    api::PositionSnapshot snap;
    const Positions p = kind == 0 ? Positions::Ids(ids32.data()) : Positions::PerBatch(offsets.data());
    ASSERT_TRUE(snap.Take(p, 2, 3).ok());
    ids32.assign(6, std::numeric_limits<int32_t>::max());
    offsets.assign(2, std::numeric_limits<int64_t>::max());
    const api::PositionRange r = api::RangeOf(snap.positions(), 2, 3);
    if (kind == 0) {
      EXPECT_EQ(snap.positions().kind, Positions::Kind::kIds64);
      EXPECT_EQ(r.min, 0);
      EXPECT_EQ(r.max, 9);
    } else {
      EXPECT_EQ(r.min, 3);
      EXPECT_EQ(r.max, 102);
    }
  }
  // Larger calls copy to the heap the same way.
  std::vector<int64_t> many(1000);
  for (size_t i = 0; i < many.size(); ++i) many[i] = static_cast<int64_t>(i);
  api::PositionSnapshot snap;
  ASSERT_TRUE(snap.Take(Positions::Ids(many.data()), 10, 100).ok());
  many.assign(1000, -1);
  EXPECT_EQ(api::RangeOf(snap.positions(), 10, 100).max, 999);
  EXPECT_EQ(api::RangeOf(snap.positions(), 10, 100).min, 0);
}

}  // namespace
}  // namespace posenc
