// The benchmark suite's timing in alternating rounds (bench/bench_common.h, TimeRounds): with a
// clock that only the timed calls advance, every figure is exact, so the tests can state what a
// row reports when the host's speed drifts or one round is disturbed.
#include <chrono>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "bench/bench_common.h"

namespace posenc {
namespace bench {
namespace {

// A std::chrono clock whose time moves only when a test advances it.
struct FakeClock {
  using rep = int64_t;
  using period = std::nano;
  using duration = std::chrono::nanoseconds;
  using time_point = std::chrono::time_point<FakeClock>;
  static int64_t ns;
  static time_point now() { return time_point(duration(ns)); }
};
int64_t FakeClock::ns = 0;

TEST(BenchRoundsTest, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(Median({3.0}), 3.0);
  EXPECT_EQ(Median({5.0, 1.0, 3.0}), 3.0);
  EXPECT_EQ(Median({4.0, 1.0, 3.0, 2.0}), 2.5);
}

TEST(BenchRoundsTest, MeanSecondsRunsUntilTheTimeAndTheCallsAreReached) {
  FakeClock::ns = 0;
  int calls = 0;
  auto fn = [&] {
    ++calls;
    FakeClock::ns += 4'000'000;  // 4 ms a call
  };
  // One warm-up, then calls until 10 ms: 3 timed calls (12 ms).
  EXPECT_DOUBLE_EQ(MeanSeconds<FakeClock>(fn, 0.01, 1), 0.004);
  EXPECT_EQ(calls, 4);
  calls = 0;
  // At least 5 calls even though the first already passes 1 ms.
  EXPECT_DOUBLE_EQ(MeanSeconds<FakeClock>(fn, 0.001, 5), 0.004);
  EXPECT_EQ(calls, 6);
}

// Each side of a round below is one warm-up and one timed call, as every call costs more than the
// 0.5 ms a side is asked to run; the first of the 6 rounds is not counted.
constexpr Rounds kFiveRounds{5, 0.0005};

// The host slows down round after round (every cost doubles); within each round the call costs
// twice the baseline. Every round's own ratio is 50 %, so the row reports 50 % whatever the
// drift, and the times of the middle counted round.
TEST(BenchRoundsTest, DriftBetweenRoundsLeavesTheRatio) {
  FakeClock::ns = 0;
  int64_t unit = 1'000'000;  // ns: 1 ms in the uncounted round, then 2, 4, 8, 16, 32 ms
  int call_invocations = 0;
  auto baseline = [&] { FakeClock::ns += unit; };
  auto call = [&] {
    FakeClock::ns += 2 * unit;
    if (++call_invocations % 2 == 0) unit *= 2;  // the end of a round
  };
  const RowTimes t = TimeRounds<FakeClock>(kFiveRounds, baseline, call);
  EXPECT_DOUBLE_EQ(t.pct_of_baseline, 50.0);
  EXPECT_DOUBLE_EQ(t.baseline_seconds, 0.008);
  EXPECT_DOUBLE_EQ(t.call_seconds, 0.016);
}

// One round whose baseline ran 10x slower (a neighbour's burst) does not move the row.
TEST(BenchRoundsTest, OneDisturbedRoundIsOutvoted) {
  FakeClock::ns = 0;
  int baseline_invocations = 0;
  auto baseline = [&] {
    // Invocation 8 is the timed baseline call of the third counted round.
    FakeClock::ns += (++baseline_invocations == 8 ? 10 : 1) * 1'000'000;
  };
  auto call = [&] { FakeClock::ns += 4'000'000; };
  const RowTimes t = TimeRounds<FakeClock>(kFiveRounds, baseline, call);
  EXPECT_EQ(baseline_invocations, 12);
  EXPECT_DOUBLE_EQ(t.pct_of_baseline, 25.0);
  EXPECT_DOUBLE_EQ(t.baseline_seconds, 0.001);
  EXPECT_DOUBLE_EQ(t.call_seconds, 0.004);
}

// A first round 10x slower on both sides (the row's start) is not counted at all.
TEST(BenchRoundsTest, TheFirstRoundIsNotCounted) {
  FakeClock::ns = 0;
  int baseline_invocations = 0, call_invocations = 0;
  auto baseline = [&] { FakeClock::ns += (++baseline_invocations <= 2 ? 10 : 1) * 1'000'000; };
  auto call = [&] { FakeClock::ns += (++call_invocations <= 2 ? 50 : 2) * 1'000'000; };
  const RowTimes t = TimeRounds<FakeClock>({2, 0.0005}, baseline, call);
  EXPECT_EQ(baseline_invocations, 6);
  EXPECT_DOUBLE_EQ(t.pct_of_baseline, 50.0);
  EXPECT_DOUBLE_EQ(t.baseline_seconds, 0.001);
  EXPECT_DOUBLE_EQ(t.call_seconds, 0.002);
}

}  // namespace
}  // namespace bench
}  // namespace posenc
