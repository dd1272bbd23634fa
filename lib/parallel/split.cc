#include "lib/parallel/split.h"

#include <algorithm>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/info.h>
#include <tbb/task_arena.h>

namespace posenc {
namespace parallel {

bool RunsSerially(int64_t items, int64_t bytes_per_item, const Execution& exec) {
  return exec.max_threads == 1 || items <= 1 || items * bytes_per_item < kSerialBytes;
}

void ForEachRange(int64_t items, int64_t bytes_per_item, const Execution& exec,
                  const std::function<void(int64_t, int64_t)>& body) {
  if (RunsSerially(items, bytes_per_item, exec)) {
    body(0, items);
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kTaskBytes / std::max<int64_t>(1, bytes_per_item));
  // Isolated: while the calling thread waits for this loop it runs only this loop's tasks, never
  // another of the caller's tasks (TBB's work stealing would otherwise nest them here when posenc
  // is called from inside the caller's parallel_for). A posenc call then never has a second call
  // running on its stack: no re-entry into per-thread state during a call, and no stack growth
  // with the number of the caller's tasks. (The per-thread frequency memos are also safe without
  // it: they share immutable vectors with the calls, lib/freqs/inv_freq.h.)
  auto run = [&] {
    tbb::this_task_arena::isolate([&] {
      tbb::parallel_for(tbb::blocked_range<int64_t>(0, items, static_cast<size_t>(grain)),
                        [&](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
    });
  };
  if (exec.max_threads > 1) {
    // More slots than cores would only oversubscribe (and make TBB warn); results do not depend
    // on the count.
    tbb::task_arena arena(std::min(exec.max_threads, tbb::info::default_concurrency()));
    arena.execute(run);
  } else {
    run();
  }
}

}  // namespace parallel
}  // namespace posenc
