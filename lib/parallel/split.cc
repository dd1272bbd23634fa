#include "lib/parallel/split.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/info.h>
#include <tbb/task_arena.h>

namespace posenc {
namespace parallel {
namespace {

// posenc's own arenas for exec.max_threads = n > 1, one per (clamped) thread count, created on
// first use and kept for the life of the process: building a tbb::task_arena and bringing its
// workers in costs tens of microseconds per call, more than a few tokens of work. A cached arena
// serves one call at a time (`busy`); a call that finds it busy (another thread of the caller is
// inside posenc with the same count) builds a private arena for itself as before, so concurrent
// callers never queue behind each other and no call can wait on a slot another call holds.
struct CachedArena {
  explicit CachedArena(int threads) : arena(threads) {}
  tbb::task_arena arena;
  std::atomic<bool> busy{false};
};

CachedArena& ArenaFor(int threads) {
  static std::mutex mu;
  static std::vector<std::unique_ptr<CachedArena>>* arenas =
      new std::vector<std::unique_ptr<CachedArena>>();  // never destroyed: no exit-order hazard
  std::lock_guard<std::mutex> lock(mu);
  if (arenas->size() <= static_cast<size_t>(threads)) arenas->resize(static_cast<size_t>(threads) + 1);
  auto& slot = (*arenas)[static_cast<size_t>(threads)];
  if (!slot) slot = std::make_unique<CachedArena>(threads);
  return *slot;
}

template <class Fn>
void RunInArenaOf(int threads, const Fn& run) {
  CachedArena& cached = ArenaFor(threads);
  bool expected = false;
  if (cached.busy.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
    struct Release {
      std::atomic<bool>& busy;
      ~Release() { busy.store(false, std::memory_order_release); }
    } release{cached.busy};
    cached.arena.execute(run);
    return;
  }
  tbb::task_arena arena(threads);
  arena.execute(run);
}

}  // namespace

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
    RunInArenaOf(std::min(exec.max_threads, tbb::info::default_concurrency()), run);
  } else {
    run();
  }
}

}  // namespace parallel
}  // namespace posenc
