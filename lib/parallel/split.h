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
constexpr int64_t kSerialBytes = 256 * 1024;
// Each task moves at least this many bytes, so scheduling stays a small fraction of the work.
constexpr int64_t kTaskBytes = 64 * 1024;

// Calls body(begin, end) over disjoint ranges covering [0, items). Each item is independent,
// so the results do not depend on how the range is split or on the thread count.
void ForEachRange(int64_t items, int64_t bytes_per_item, const Execution& exec,
                  const std::function<void(int64_t, int64_t)>& body);

// True when ForEachRange(items, bytes_per_item, exec, ...) would run without spawning tasks.
bool RunsSerially(int64_t items, int64_t bytes_per_item, const Execution& exec);

}  // namespace parallel
}  // namespace posenc

#endif  // POSENC_LIB_PARALLEL_SPLIT_H_
