// Internal: the one place posenc splits work across threads.
#ifndef POSENC_LIB_PARALLEL_SPLIT_H_
#define POSENC_LIB_PARALLEL_SPLIT_H_

#include <cstdint>
#include <functional>

#include "posenc/rope.h"

namespace posenc {
namespace parallel {

// Below this many bytes touched a call runs on the calling thread: a decode step must never pay
// for waking workers (a TBB spawn costs microseconds; a Llama-3-8B decode step is ~40 KB).
// Chosen from measurement (2-core AMD EPYC Zen 3 VM, shared with a concurrent build, Llama-3-8B
// f32 default settings, threshold forced to 0, medians of 3 runs): 2 threads in a reused arena
// were slower than 1 at 8, 12 and 16 tokens (16: 50.3 us against 46.6 us; 8: 21.0 against 16.2)
// and faster from 24 tokens (960 KiB: 67.8 against 71.0 us). 1 MiB keeps every size where a
// second thread did not pay on the calling thread; README "Performance" has the figures. On the
// AVX-512 Xeon VM of docs/performance.md §3.10 a second thread pays from 12 tokens (table + kF32)
// and 4 tokens (default), so 1 MiB is conservative there, never slower.
constexpr int64_t kSerialBytes = 1024 * 1024;
// Each task moves at least this many bytes, so scheduling stays a small fraction of the work.
constexpr int64_t kTaskBytes = 64 * 1024;

// Calls body(begin, end) over disjoint ranges covering [0, items). Each item is independent,
// so the results do not depend on how the range is split or on the thread count.
void ForEachRange(int64_t items, int64_t bytes_per_item, const Execution& exec,
                  const std::function<void(int64_t, int64_t)>& body);

// True when ForEachRange(items, bytes_per_item, exec, ...) would run without spawning tasks.
inline bool RunsSerially(int64_t items, int64_t bytes_per_item, const Execution& exec) {
  return exec.max_threads == 1 || items <= 1 || items * bytes_per_item < kSerialBytes;
}

// Runs `rows` (the row kernel lib/api picked for the plan, lib/kernels/registry.h) over every
// token of `plan`. The parallel layer only splits: it never chooses a kernel. A serial call
// (every decode step) calls `rows` directly, without building a std::function.
template <class Plan>
void ForEachToken(const Plan& plan, int64_t bytes_per_token, const Execution& exec,
                  void (*rows)(const Plan&, int64_t, int64_t)) {
  if (RunsSerially(plan.tokens(), bytes_per_token, exec)) {
    rows(plan, 0, plan.tokens());
    return;
  }
  ForEachRange(plan.tokens(), bytes_per_token, exec,
               [&plan, rows](int64_t begin, int64_t end) { rows(plan, begin, end); });
}

}  // namespace parallel
}  // namespace posenc

#endif  // POSENC_LIB_PARALLEL_SPLIT_H_
