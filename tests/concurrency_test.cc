// Concurrency (issue 13 item 3 and its "make it part of the project"): posenc called from inside a
// caller's tbb::parallel_for with several frequencies at once, from many threads sharing tables
// and configs, and the C API's per-thread last error. Every output is compared bit for bit with
// the same call made alone and serially.
//
// The nested case is the one that broke: with exec.max_threads = 0 a thread waiting inside
// posenc's parallel_for may run another of the caller's tasks; when that task called posenc with
// other frequencies, the per-thread frequency memo was reassigned (and its vector freed) while
// the first call's kernels still read it. Under ASan that was a heap-use-after-free; in Release,
// outputs computed with the other task's frequencies.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "lib/freqs/inv_freq.h"
#include "posenc/freqs.h"
#include "posenc/posenc.h"
#include "posenc/rope.h"
#include "posenc/sinusoidal.h"
#include "tests/rope_test_util.h"

namespace posenc {
namespace {

// Big enough that every call splits into tasks (above parallel::kSerialBytes = 1 MiB):
// 512 tokens x 8 heads x 64 x 4 B x 2 = 2 MiB.
constexpr int64_t kTokens = 512, kHeads = 8, kDim = 64;

enum class Entry { kRope, kRopeConfig, kSinusoidal };

struct Job {
  Entry entry;
  double base;  // differs per job: every job asks the memos for other frequencies
  std::vector<float> input, expected;
};

RopeConfig ConfigWithTheta(double theta) {
  RopeConfig c;
  c.rope_type = RopeType::kLinear;
  c.factor = 2.0;
  c.rope_theta = theta;
  c.head_dim = kDim;
  return c;
}

// Runs the job's call on `data` (in place) with the given threading.
Status RunJob(const Job& job, float* data, int max_threads) {
  if (job.entry == Entry::kSinusoidal) {
    SinusoidalParams p;
    p.base = job.base;
    p.positions = Positions::Offset(3);
    p.exec.max_threads = max_threads;
    return AddSinusoidal(p, EmbeddingBSD(data, 1, kTokens, kHeads * kDim));
  }
  RopeTensors t;
  t.q = TensorBSHD(data, 1, kTokens, kHeads, kDim);
  RopeParams p;
  p.positions = Positions::Offset(11);
  p.exec.max_threads = max_threads;
  if (job.entry == Entry::kRopeConfig) return ApplyRope(t, ConfigWithTheta(job.base), p);
  p.freqs.base = job.base;
  return ApplyRope(t, p);
}

std::vector<Job> MakeJobs(int n) {
  std::vector<Job> jobs;
  for (int j = 0; j < n; ++j) {
    Job job;
    job.entry = static_cast<Entry>(j % 3);
    job.base = 5000.0 + 977.0 * j;
    job.input.resize(static_cast<size_t>(kTokens * kHeads * kDim));
    test::FillNormal(job.input.data(), job.input.size(), static_cast<uint32_t>(100 + j));
    job.expected = job.input;
    EXPECT_TRUE(RunJob(job, job.expected.data(), 1).ok());
    jobs.push_back(std::move(job));
  }
  return jobs;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

TEST(ConcurrencyTest, CallsFromInsideACallersParallelForWithSeveralFrequencies) {
  const std::vector<Job> jobs = MakeJobs(48);
  // More threads than cores (TBB otherwise gives a 2-core machine 2 threads), so workers steal
  // each other's tasks and a thread waiting inside posenc's parallel_for takes the caller's other
  // jobs: while one posenc call waits for its last chunks, another runs on its stack.
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 8);
  tbb::task_arena arena(8);
  for (int round = 0; round < 8; ++round) {
    std::vector<std::vector<float>> outputs(jobs.size());
    std::atomic<int> failures{0};
    arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<size_t>(0, jobs.size(), 1),
                        [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t j = r.begin(); j != r.end(); ++j) {
                            outputs[j] = jobs[j].input;
                            if (!RunJob(jobs[j], outputs[j].data(), 0).ok()) ++failures;
                          }
                        });
    });
    EXPECT_EQ(failures.load(), 0);
    for (size_t j = 0; j < jobs.size(); ++j) {
      ASSERT_TRUE(SameBits(outputs[j], jobs[j].expected))
          << "round " << round << " job " << j << " (entry " << static_cast<int>(jobs[j].entry)
          << ", base " << jobs[j].base << ") differs from the same call made alone";
    }
  }
}

TEST(ConcurrencyTest, FrequencyMemosShareWhatTheyHandOut) {
  // What a call holds stays valid and unchanged when the same thread's memo moves on (a nested
  // call with other frequencies): the memo shares immutable vectors instead of lending pointers.
  const freqs::SharedFreqs a = freqs::CachedDefaultInvFreq(10000.0, 64);
  const std::vector<double> a_values = *a;
  const freqs::SharedFreqs b = freqs::CachedDefaultInvFreq(500000.0, 128);
  EXPECT_EQ(*a, a_values);
  EXPECT_EQ(b->size(), 64u);
  EXPECT_EQ(freqs::CachedDefaultInvFreq(500000.0, 128), b);  // memoised: the same vector
  const freqs::SharedFreqs s = freqs::CachedSinusoidalFreqs(10000.0, 32, 1);
  const std::vector<double> s_values = *s;
  freqs::CachedSinusoidalFreqs(500.0, 64, 0);
  EXPECT_EQ(*s, s_values);
}

TEST(ConcurrencyTest, FrequencyMemosKeepTheFactsOfTheirVector) {
  // The facts a decode step reads instead of re-scanning (first non-finite index, largest |w|)
  // belong to the vector handed out, also when the memo alternates between vectors (a stale
  // facts record would let a non-finite base through or check angles with the wrong maximum).
  const auto scan = [](const std::vector<double>& v) {
    freqs::FreqFacts f;
    f.first_nonfinite = static_cast<int64_t>(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      if (!std::isfinite(v[i])) {
        f.first_nonfinite = static_cast<int64_t>(i);
        break;
      }
      f.max_abs = std::max(f.max_abs, std::fabs(v[i]));
    }
    return f;
  };
  struct Case { double base; int64_t dim; int spacing; };  // spacing < 0: RoPE's default
  const Case cases[] = {{10000.0, 64, -1}, {5e-324, 64, -1}, {10000.0, 64, -1}, {0.5, 128, -1},
                        {5e-324, 64, -1},  {10000.0, 32, 1}, {5e-324, 32, 0},   {10000.0, 32, 1},
                        {0.5, 16, 1},      {10000.0, 64, -1}};
  for (int round = 0; round < 2; ++round) {
    for (const Case& c : cases) {
      freqs::FreqFacts facts;
      facts.first_nonfinite = -7;
      facts.max_abs = -7.0;
      const freqs::SharedFreqs v = c.spacing < 0
                                       ? freqs::CachedDefaultInvFreq(c.base, c.dim, &facts)
                                       : freqs::CachedSinusoidalFreqs(c.base, c.dim, c.spacing, &facts);
      const freqs::FreqFacts want = scan(*v);
      EXPECT_EQ(facts.first_nonfinite, want.first_nonfinite) << c.base << " " << c.dim;
      if (want.first_nonfinite == static_cast<int64_t>(v->size())) {
        EXPECT_EQ(facts.max_abs, want.max_abs) << c.base << " " << c.dim;
      }
    }
  }
  // The cases reach both outcomes: 5e-324^(-2i/64) = e^(744.44 * i / 32) overflows from i = 31.
  freqs::FreqFacts f;
  freqs::CachedDefaultInvFreq(5e-324, 64, &f);
  EXPECT_EQ(f.first_nonfinite, 31);
  freqs::CachedDefaultInvFreq(0.5, 128, &f);
  EXPECT_EQ(f.first_nonfinite, 64);
  EXPECT_GT(f.max_abs, 1.0);  // base < 1: the frequencies grow with i
}

// No TBB task runs here (tables below 1 MiB are built serially, 16-token calls run on the
// calling thread), so a ThreadSanitizer build sees every access of this test: it is the one
// concurrency test TSan can check (README, Limits and failure behaviour).
TEST(ConcurrencyTest, ManyThreadsShareTablesAndConfigs) {
  std::shared_ptr<const RopeTable> rope_table;
  Frequencies f;
  f.base = 500000.0;
  ASSERT_TRUE(RopeTable::Create(kDim, f, 1000, &rope_table).ok());
  SinusoidalParams sp;
  sp.layout = SinusoidalLayout::kConcatSinCos;
  std::shared_ptr<const SinusoidalTable> sin_table;
  ASSERT_TRUE(SinusoidalTable::Create(sp, kDim, 1000, &sin_table).ok());
  const RopeConfig config = ConfigWithTheta(250000.0);

  // Per thread and call kind: the expected result computed alone.
  constexpr int kThreads = 8, kRepeats = 30;
  auto call = [&](int kind, int thread, float* data, int max_threads) {
    const int64_t start = 100 * thread;
    if (kind == 2) {
      SinusoidalParams p = sp;
      p.table = sin_table.get();
      p.positions = Positions::Offset(start);
      p.exec.max_threads = max_threads;
      return AddSinusoidal(p, EmbeddingBSD(data, 1, 16, kDim));
    }
    RopeTensors t;
    t.q = TensorBSHD(data, 1, 16, 1, kDim);
    RopeParams p;
    p.positions = Positions::Offset(start);
    p.exec.max_threads = max_threads;
    if (kind == 1) return ApplyRope(t, config, p);
    p.source = CosSinSource::Table(rope_table.get());
    return ApplyRope(t, p);
  };
  std::vector<float> input(16 * kDim);
  test::FillNormal(input.data(), input.size(), 5);
  std::vector<std::vector<std::vector<float>>> expected(kThreads, std::vector<std::vector<float>>(3));
  for (int th = 0; th < kThreads; ++th)
    for (int kind = 0; kind < 3; ++kind) {
      expected[th][kind] = input;
      ASSERT_TRUE(call(kind, th, expected[th][kind].data(), 1).ok());
    }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      for (int r = 0; r < kRepeats; ++r) {
        for (int kind = 0; kind < 3; ++kind) {
          std::vector<float> data = input;
          if (!call(kind, th, data.data(), r % 2).ok() || !SameBits(data, expected[th][kind])) {
            ++mismatches;
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(ConcurrencyTest, CApiLastErrorIsPerThreadInsideParallelFor) {
  // Every task makes a failing call with a message of its own, then a good call, then reads the
  // message: it must still be its own (a good call leaves it; other threads never touch it).
  constexpr int kTasks = 64;
  std::vector<std::string> seen(kTasks);
  tbb::task_arena arena(4);
  arena.execute([&] {
    tbb::parallel_for(0, kTasks, [&](int i) {
      std::vector<float> q(2 * 64, 0.5f);
      posenc_tensor t = posenc_tensor_bshd(q.data(), POSENC_F32, 1, 2, 1, 64);
      posenc_rope_params p;
      posenc_rope_params_init(&p);
      p.rotary_dim = 2 * i + 1;  // odd: an error naming this task's value
      posenc_rope_apply(&t, nullptr, nullptr, nullptr, &p);
      p.rotary_dim = 0;
      if (posenc_rope_apply(&t, nullptr, nullptr, nullptr, &p) != POSENC_OK) return;
      seen[static_cast<size_t>(i)] = posenc_last_error();
    });
  });
  for (int i = 0; i < kTasks; ++i) {
    EXPECT_EQ(seen[static_cast<size_t>(i)].rfind("rotary_dim = " + std::to_string(2 * i + 1) + ":", 0), 0u)
        << seen[static_cast<size_t>(i)];
  }
}

}  // namespace
}  // namespace posenc
