#include "bench/bench_common.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "bench/bandwidth.h"
#include "posenc/targets.h"

namespace posenc {
namespace bench {

std::map<std::string, Row>& Rows() {
  static std::map<std::string, Row> rows;
  return rows;
}

namespace {

// body(begin, end) over [0, n): serially for 1 thread, else in 64 KiB tasks as posenc's own split.
template <class Body>
void Split(size_t n, int threads, const Body& body) {
  if (threads == 1) {
    body(size_t{0}, n);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 16384),
                    [&](const tbb::blocked_range<size_t>& r) { body(r.begin(), r.end()); });
}

// Mean seconds of one pass(), run in an arena of `threads`.
template <class Pass>
double ArenaMeanSeconds(int threads, const Pass& pass) {
  tbb::task_arena arena(threads);
  return arena.execute([&] { return MeanSeconds(pass); });
}

}  // namespace

double BaselineSeconds(const std::vector<std::vector<float>*>& buffers, int threads) {
  return ArenaMeanSeconds(threads, [&] {
    for (std::vector<float>* v : buffers) {
      Split(v->size(), threads, [v](size_t begin, size_t end) {
        ScaleInPlace(v->data() + begin, end - begin, 1.0f);
      });
    }
  });
}

double AddBaselineSeconds(std::vector<float>* x, const std::vector<float>& t, int threads) {
  return ArenaMeanSeconds(threads, [&] {
    Split(x->size(), threads, [x, &t](size_t begin, size_t end) {
      AddInPlace(x->data() + begin, t.data() + begin, end - begin);
    });
  });
}

void SetRowCounters(benchmark::State& state, double bytes, double elements,
                    double baseline_seconds, double reference_seconds) {
  using benchmark::Counter;
  const double iters = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes * iters));
  state.SetItemsProcessed(static_cast<int64_t>(elements * iters));
  state.counters["bytes"] = bytes;
  state.counters["baseline_gbps"] = bytes / baseline_seconds / 1e9;
  // Rates: Google Benchmark divides value * iterations by the measured time.
  state.counters["gbps"] = Counter(bytes * 1e-9, Counter::kIsIterationInvariantRate);
  state.counters["pct_of_baseline"] = Counter(100.0 * baseline_seconds, Counter::kIsIterationInvariantRate);
  if (reference_seconds > 0) {
    state.counters["x_reference"] = Counter(reference_seconds, Counter::kIsIterationInvariantRate);
  }
}

bool SelectTarget(benchmark::State& state, const std::string& target) {
  if (!SetMaxTarget(target).ok() || ChosenTarget() != target) {
    state.SkipWithError(("target " + target + " unavailable").c_str());
    return false;
  }
  return true;
}

}  // namespace bench
}  // namespace posenc
