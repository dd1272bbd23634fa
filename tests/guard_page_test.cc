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
#include "tests/rope_test_util.h"

namespace posenc {
namespace {

enum class Edge { kStart, kEnd };

// `bytes` of memory between two PROT_NONE pages, the data flush against one of them.
class GuardedBytes {
 public:
  GuardedBytes(const void* content, size_t bytes, Edge edge) : bytes_(bytes) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t pages = (bytes + page - 1) / page;
    map_bytes_ = (pages + 2) * page;
    void* m = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(m, MAP_FAILED);
    map_ = static_cast<unsigned char*>(m);
    EXPECT_EQ(mprotect(map_, page, PROT_NONE), 0);
    EXPECT_EQ(mprotect(map_ + (pages + 1) * page, page, PROT_NONE), 0);
    data_ = edge == Edge::kStart ? map_ + page : map_ + (pages + 1) * page - bytes;
    std::memcpy(data_, content, bytes);
  }
  ~GuardedBytes() { munmap(map_, map_bytes_); }
  GuardedBytes(const GuardedBytes&) = delete;
  GuardedBytes& operator=(const GuardedBytes&) = delete;
  void* data() const { return data_; }
  std::vector<unsigned char> Contents() const { return {data_, data_ + bytes_}; }

 private:
  unsigned char* map_ = nullptr;
  unsigned char* data_ = nullptr;
  size_t map_bytes_ = 0, bytes_ = 0;
};

std::vector<unsigned char> RandomBytes(DType dtype, size_t n, uint32_t seed) {
  std::vector<float> v(n);
  test::FillNormal(v.data(), n, seed);
  std::vector<unsigned char> out(n * DTypeSize(dtype));
  EXPECT_TRUE(ConvertFromF32(v.data(), n, dtype, out.data()).ok());
  return out;
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
std::vector<unsigned char> RunRope(const RopeCase& c, const RopeTable* table, bool guarded, Edge edge) {
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

  std::vector<std::unique_ptr<GuardedBytes>> keep;
  std::vector<std::vector<unsigned char>> plain;
  auto place = [&](const std::vector<unsigned char>& content) -> void* {
    if (guarded) {
      keep.push_back(std::make_unique<GuardedBytes>(content.data(), content.size(), edge));
      return keep.back()->data();
    }
    plain.push_back(content);
    return plain.back().data();
  };
  plain.reserve(8);
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
              const std::vector<unsigned char> expected = RunRope(c, table, false, Edge::kStart);
              for (Edge edge : {Edge::kStart, Edge::kEnd}) {
                ASSERT_EQ(RunRope(c, table, true, edge), expected)
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
            std::vector<std::unique_ptr<GuardedBytes>> keep;
            std::vector<std::vector<unsigned char>> plain;
            plain.reserve(4);
            auto place = [&](const std::vector<unsigned char>& content) -> void* {
              if (guarded) {
                keep.push_back(std::make_unique<GuardedBytes>(content.data(), content.size(), edge));
                return keep.back()->data();
              }
              plain.push_back(content);
              return plain.back().data();
            };
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
