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
  auto run = [&] {
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, items, static_cast<size_t>(grain)),
                      [&](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
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
