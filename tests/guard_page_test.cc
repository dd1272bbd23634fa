// Every buffer posenc reads or writes placed against an inaccessible (PROT_NONE) page, once with
// its first byte right after one and once with its last byte right before one: q, k, their
// outputs, position ids, inv_freq, caches of both dtypes (f32 and a half type), sinusoidal x/out.
// head_dim 2..130 (every tail of every vector width), both pair layouts, f32/bf16/f16 tensors,
// every source, on every SIMD target this CPU runs. A read or write one element past (or before)
// a buffer faults and fails the test; each result must also equal the same call on ordinary
// buffers bit for bit.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hwy/targets.h"
#include "posenc/half.h"
#include "posenc/rope.h"
#include "posenc/sinusoidal.h"

namespace posenc {
namespace {

enum class Edge { kStart, kEnd };

// One page of memory between two PROT_NONE pages, mapped once and reused for many buffers
// (every buffer here fits in a page): Place() copies a buffer flush against the leading guard
// (kStart) or the trailing one (kEnd).
class GuardedPage {
 public:
  GuardedPage() {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void* m = mmap(nullptr, 3 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(m, MAP_FAILED);
    map_ = static_cast<unsigned char*>(m);
    EXPECT_EQ(mprotect(map_, page_, PROT_NONE), 0);
    EXPECT_EQ(mprotect(map_ + 2 * page_, page_, PROT_NONE), 0);
  }
  ~GuardedPage() { munmap(map_, 3 * page_); }
  GuardedPage(const GuardedPage&) = delete;
  GuardedPage& operator=(const GuardedPage&) = delete;
  void* Place(const std::vector<unsigned char>& content, Edge edge) {
    EXPECT_LE(content.size(), page_);
    unsigned char* data = edge == Edge::kStart ? map_ + page_ : map_ + 2 * page_ - content.size();
    std::memcpy(data, content.data(), content.size());
    return data;
  }

 private:
  unsigned char* map_ = nullptr;
  size_t page_ = 0;
};

// Where a run's buffers go: guarded pages (one per buffer of the call) or plain vectors.
class Placer {
 public:
  explicit Placer(std::vector<std::unique_ptr<GuardedPage>>* pages, Edge edge)
      : pages_(pages), edge_(edge) {
    plain_.reserve(8);
  }
  void* operator()(const std::vector<unsigned char>& content) {
    if (pages_ != nullptr) {
      if (used_ == pages_->size()) pages_->push_back(std::make_unique<GuardedPage>());
      return (*pages_)[used_++]->Place(content, edge_);
    }
    plain_.push_back(content);
    return plain_.back().data();
  }

 private:
  std::vector<std::unique_ptr<GuardedPage>>* pages_;
  Edge edge_;
  size_t used_ = 0;
  std::vector<std::vector<unsigned char>> plain_;
};

// n values in [-4, 4) from a 32-bit LCG (cheap: this test makes ~100k buffers), stored as dtype.
std::vector<unsigned char> RandomBytes(DType dtype, size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int32_t>(s >> 8) - (1 << 23)) * (1.0f / (1 << 21));
  }
  std::vector<unsigned char> out(n * DTypeSize(dtype));
  EXPECT_TRUE(ConvertFromF32(v.data(), n, dtype, out.data()).ok());
  return out;
}

// The harness itself: one byte past either end of a placed buffer is inaccessible.
TEST(GuardPageTest, GuardsFault) {
  GuardedPage page;
  const std::vector<unsigned char> four(4, 7);
  const volatile unsigned char* end = static_cast<unsigned char*>(page.Place(four, Edge::kEnd));
  EXPECT_EQ(end[3], 7);
  EXPECT_DEATH((void)end[4], "");
  const volatile unsigned char* start = static_cast<unsigned char*>(page.Place(four, Edge::kStart));
  EXPECT_EQ(start[0], 7);
  EXPECT_DEATH((void)start[-1], "");
}

enum class Source { kOnTheFlyIds, kOnTheFlyInvFreq, kTable, kByPosition, kPerToken };

struct RopeCase {
  int64_t head_dim, rotary_dim;
  PairLayout pairs;
  DType dtype, cache_dtype;
  Source source;
  bool in_place;
};

constexpr int64_t kSeq = 3, kHq = 2, kHk = 1;

// Runs the case with every buffer guarded at `edge` (guarded = true) or in plain vectors, and
// returns the bytes of q's and k's outputs.
std::vector<unsigned char> RunRope(const RopeCase& c, const RopeTable* table,
                                   std::vector<std::unique_ptr<GuardedPage>>* pages, Edge edge) {
  const bool guarded = pages != nullptr;
  const int64_t half = c.rotary_dim / 2;
  const std::vector<unsigned char> qv = RandomBytes(c.dtype, kSeq * kHq * c.head_dim, 1);
  const std::vector<unsigned char> kv = RandomBytes(c.dtype, kSeq * kHk * c.head_dim, 2);
  const std::vector<unsigned char> zq(qv.size(), 0x5a), zk(kv.size(), 0x5a);
  const int64_t ids[kSeq] = {4, 0, 9};
  const int64_t rows = c.source == Source::kPerToken ? kSeq : 10;  // last row read: id 9
  std::vector<double> inv(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) inv[static_cast<size_t>(i)] = 1.0 / (1.0 + static_cast<double>(i));
  const std::vector<unsigned char> cosv = RandomBytes(c.cache_dtype, static_cast<size_t>(rows * half), 3);
  const std::vector<unsigned char> sinv = RandomBytes(c.cache_dtype, static_cast<size_t>(rows * half), 4);

  Placer place(guarded ? pages : nullptr, edge);
  RopeTensors t;
  void* q = place(qv);
  void* k = place(kv);
  t.q = TensorBSHD(q, c.dtype, 1, kSeq, kHq, c.head_dim);
  t.k = TensorBSHD(k, c.dtype, 1, kSeq, kHk, c.head_dim);
  void* q_out = q;
  void* k_out = k;
  if (!c.in_place) {
    q_out = place(zq);
    k_out = place(zk);
    t.q_out = TensorBSHD(q_out, c.dtype, 1, kSeq, kHq, c.head_dim);
    t.k_out = TensorBSHD(k_out, c.dtype, 1, kSeq, kHk, c.head_dim);
  }
  RopeParams p;
  p.pairs = c.pairs;
  p.rotary_dim = c.rotary_dim;
  p.exec.max_threads = 1;
  std::vector<unsigned char> id_bytes(sizeof ids);
  std::memcpy(id_bytes.data(), ids, sizeof ids);
  p.positions = Positions::Ids(static_cast<const int64_t*>(place(id_bytes)));
  if (c.source == Source::kOnTheFlyInvFreq) {
    std::vector<unsigned char> inv_bytes(inv.size() * 8);
    std::memcpy(inv_bytes.data(), inv.data(), inv_bytes.size());
    p.freqs.inv_freq = static_cast<const double*>(place(inv_bytes));
    p.freqs.inv_freq_len = half;
  } else if (c.source == Source::kTable) {
    p.source = CosSinSource::Table(table);
  } else if (c.source == Source::kByPosition || c.source == Source::kPerToken) {
    CosSinCache cache;
    cache.kind = c.source == Source::kPerToken ? CosSinCache::Kind::kPerToken
                                               : CosSinCache::Kind::kByPosition;
    cache.dtype = c.cache_dtype;
    cache.rows = rows;
    cache.cos = place(cosv);
    cache.sin = place(sinv);
    p.source = CosSinSource::Cache(cache);
  }
  const Status st = ApplyRope(t, p);
  EXPECT_TRUE(st.ok()) << st.message();
  std::vector<unsigned char> result(static_cast<unsigned char*>(q_out),
                                    static_cast<unsigned char*>(q_out) + qv.size());
  result.insert(result.end(), static_cast<unsigned char*>(k_out),
                static_cast<unsigned char*>(k_out) + kv.size());
  return result;
}

TEST(GuardPageTest, RopeTouchesNothingBeyondAnyBuffer) {
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  std::vector<std::unique_ptr<GuardedPage>> pages;
  int calls = 0;
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    for (int64_t d = 2; d <= 130; d += 2) {
      std::shared_ptr<const RopeTable> table_full, table_partial;
      const int64_t partial = d >= 4 ? d - 2 : d;
      ASSERT_TRUE(RopeTable::Create(d, Frequencies(), 10, &table_full).ok());
      ASSERT_TRUE(RopeTable::Create(partial, Frequencies(), 10, &table_partial).ok());
      for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16})
        for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
          for (Source source : {Source::kOnTheFlyIds, Source::kOnTheFlyInvFreq, Source::kTable,
                                Source::kByPosition, Source::kPerToken})
            for (DType cache_dtype : {DType::kF32, d % 4 == 0 ? DType::kF16 : DType::kBF16}) {
              if (cache_dtype != DType::kF32 && source != Source::kByPosition &&
                  source != Source::kPerToken) {
                continue;
              }
              RopeCase c;
              c.head_dim = d;
              // Partial rotary on alternate cases: the pass-through copy at the end of a head.
              c.rotary_dim = (d / 2) % 2 == 0 ? partial : d;
              c.pairs = pairs;
              c.dtype = dtype;
              c.cache_dtype = cache_dtype;
              c.source = source;
              c.in_place = (d / 2 + static_cast<int64_t>(source)) % 2 == 0;
              const RopeTable* table = c.rotary_dim == d ? table_full.get() : table_partial.get();
              const std::vector<unsigned char> expected = RunRope(c, table, nullptr, Edge::kStart);
              for (Edge edge : {Edge::kStart, Edge::kEnd}) {
                ASSERT_EQ(RunRope(c, table, &pages, edge), expected)
                    << hwy::TargetName(target) << " head_dim " << d << " dtype " << DTypeName(dtype)
                    << " source " << static_cast<int>(source) << " edge " << static_cast<int>(edge);
                ++calls;
              }
            }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  std::printf("guard_page_test: %d guarded RoPE calls\n", calls);
}

TEST(GuardPageTest, SinusoidalTouchesNothingBeyondAnyBuffer) {
  std::vector<std::unique_ptr<GuardedPage>> pages;
  int calls = 0;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (int64_t d = 2; d <= 130; d += 2) {
      SinusoidalParams base_params;
      base_params.layout = static_cast<SinusoidalLayout>(d % 3);
      std::shared_ptr<const SinusoidalTable> table;
      ASSERT_TRUE(SinusoidalTable::Create(base_params, d, 10, &table).ok());
      for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16})
        for (int mode = 0; mode < 4; ++mode) {  // write, add in place, add out of place, add from table
          auto run = [&](bool guarded, Edge edge) {
            const std::vector<unsigned char> xv = RandomBytes(dtype, static_cast<size_t>(kSeq * d), 7);
            const std::vector<unsigned char> zero(xv.size(), 0x33);
            const int64_t ids[kSeq] = {9, 0, 5};
            std::vector<unsigned char> id_bytes(sizeof ids);
            std::memcpy(id_bytes.data(), ids, sizeof ids);
            Placer place(guarded ? &pages : nullptr, edge);
            SinusoidalParams p = base_params;
            p.x_scale = mode == 2 ? 2.0 : 1.0;
            p.exec.max_threads = 1;
            p.positions = Positions::Ids(static_cast<const int64_t*>(place(id_bytes)));
            if (mode == 3) p.table = table.get();
            void* x = place(xv);
            void* out = mode == 2 ? place(zero) : x;
            const EmbeddingView xe = EmbeddingBSD(x, dtype, 1, kSeq, d);
            const EmbeddingView oe = EmbeddingBSD(out, dtype, 1, kSeq, d);
            const Status st = mode == 0 ? WriteSinusoidal(p, oe) : AddSinusoidal(p, xe, &oe);
            EXPECT_TRUE(st.ok()) << st.message();
            return std::vector<unsigned char>(static_cast<unsigned char*>(out),
                                              static_cast<unsigned char*>(out) + xv.size());
          };
          const std::vector<unsigned char> expected = run(false, Edge::kStart);
          for (Edge edge : {Edge::kStart, Edge::kEnd}) {
            ASSERT_EQ(run(true, edge), expected) << hwy::TargetName(target) << " d " << d << " mode " << mode;
            ++calls;
          }
        }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  std::printf("guard_page_test: %d guarded sinusoidal calls\n", calls);
}

}  // namespace
}  // namespace posenc
