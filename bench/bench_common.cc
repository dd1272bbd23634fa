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

double BaselineSeconds(const std::vector<std::vector<float>*>& buffers, int threads) {
  tbb::task_arena arena(threads);
  return arena.execute([&] {
    return MeanSeconds([&] {
      for (std::vector<float>* v : buffers) {
        if (threads == 1) {
          ScaleInPlace(v->data(), v->size(), 1.0f);
          continue;
        }
        tbb::parallel_for(tbb::blocked_range<size_t>(0, v->size(), 16384),
                          [v](const tbb::blocked_range<size_t>& r) {
                            ScaleInPlace(v->data() + r.begin(), r.size(), 1.0f);
                          });
      }
    });
  });
}

double AddBaselineSeconds(std::vector<float>* x, const std::vector<float>& t, int threads) {
  tbb::task_arena arena(threads);
  return arena.execute([&] {
    return MeanSeconds([&] {
      if (threads == 1) {
        AddInPlace(x->data(), t.data(), x->size());
        return;
      }
      tbb::parallel_for(tbb::blocked_range<size_t>(0, x->size(), 16384),
                        [&](const tbb::blocked_range<size_t>& r) {
                          AddInPlace(x->data() + r.begin(), t.data() + r.begin(), r.size());
                        });
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
