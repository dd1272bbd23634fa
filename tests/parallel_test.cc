// The TBB split: every item exactly once, serial (no task) below the threshold, any split for
// larger calls.
#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "lib/parallel/split.h"

namespace posenc {
namespace {

TEST(ParallelTest, DecodeStepRunsSeriallyOnTheCallingThread) {
  // Llama-3-8B decode: (32 + 8) heads * 128 * 4 bytes * 2 (read + write) = 40 KiB.
  const int64_t bytes_per_token = 40 * 128 * 4 * 2;
  Execution exec;  // default: the current arena, i.e. free to parallelize
  EXPECT_TRUE(parallel::RunsSerially(1, bytes_per_token, exec));
  int calls = 0;
  const std::thread::id caller = std::this_thread::get_id();
  parallel::ForEachRange(1, bytes_per_token, exec, [&](int64_t b, int64_t e) {
    ++calls;
    EXPECT_EQ(std::this_thread::get_id(), caller);
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 1);
  });
  EXPECT_EQ(calls, 1);
}

TEST(ParallelTest, LargeCallsCoverEveryItemOnceInSeveralRanges) {
  const int64_t items = 4096, bytes_per_item = 40960;
  for (int threads : {0, 2, 8}) {
    Execution exec;
    exec.max_threads = threads;
    EXPECT_FALSE(parallel::RunsSerially(items, bytes_per_item, exec));
    std::vector<std::atomic<int>> seen(items);
    std::atomic<int> ranges{0};
    parallel::ForEachRange(items, bytes_per_item, exec, [&](int64_t b, int64_t e) {
      ++ranges;
      for (int64_t i = b; i < e; ++i) ++seen[static_cast<size_t>(i)];
    });
    for (const auto& s : seen) ASSERT_EQ(s.load(), 1);
    EXPECT_GT(ranges.load(), 1) << threads;
  }
}

// max_threads = n > 1 reuses one arena per thread count; callers that find it busy get a private
// arena. Many threads at once, each calling repeatedly: every call covers its items exactly once,
// and none deadlocks or waits forever on another's arena.
TEST(ParallelTest, ConcurrentCallersWithTheSameThreadCountEachCoverTheirItems) {
  const int64_t items = 64, bytes_per_item = parallel::kSerialBytes / 16;
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int c = 0; c < 6; ++c) {
    callers.emplace_back([&, c] {
      Execution exec;
      exec.max_threads = 2 + c % 2;  // two cached arenas (2 and 3, clamped to the cores)
      for (int call = 0; call < 50; ++call) {
        std::vector<std::atomic<int>> seen(items);
        parallel::ForEachRange(items, bytes_per_item, exec, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) ++seen[static_cast<size_t>(i)];
        });
        for (const auto& s : seen) {
          if (s.load() != 1) ++failures;
        }
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(ParallelTest, SerialThresholdIsOneMebibyte) {
  Execution exec;  // free to parallelize
  EXPECT_TRUE(parallel::RunsSerially(16, parallel::kSerialBytes / 16 - 1, exec));
  EXPECT_FALSE(parallel::RunsSerially(16, parallel::kSerialBytes / 16, exec));
  EXPECT_EQ(parallel::kSerialBytes, 1 << 20);
}

TEST(ParallelTest, MaxThreadsOneForcesSerial) {
  Execution exec;
  exec.max_threads = 1;
  EXPECT_TRUE(parallel::RunsSerially(1 << 20, 1 << 20, exec));
}

}  // namespace
}  // namespace posenc
