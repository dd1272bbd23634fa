#include "bench/bench_common.h"

#include <algorithm>

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

std::string RecordRow(const Row& row) {
  std::string name = row.model + "/tokens:" + std::to_string(row.tokens) + "/" + row.dtype + "/" +
                     row.pairs + "/" + row.source + "/" +
                     (row.arithmetic.empty() ? "" : "arith:" + row.arithmetic + "/") + row.target +
                     "/threads:" + std::to_string(row.threads) +
                     (row.max_threads != 0 ? "/max_threads:" + std::to_string(row.max_threads) : "") +
                     (row.out_of_place ? "/out_of_place" : "") + (row.prepared ? "/prepared" : "");
  Rows()[name] = row;
  return name;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
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

}  // namespace

void ScalePass(const std::vector<Floats*>& buffers, int threads) {
  for (Floats* v : buffers) {
    Split(v->size(), threads, [v](size_t begin, size_t end) {
      ScaleInPlace(v->data() + begin, end - begin, 1.0f);
    });
  }
}

void AddPass(Floats* x, const Floats& t, int threads) {
  Split(x->size(), threads, [x, &t](size_t begin, size_t end) {
    AddInPlace(x->data() + begin, t.data() + begin, end - begin);
  });
}

double BaselineSeconds(const std::vector<Floats*>& buffers, int threads) {
  tbb::task_arena arena(threads);
  return arena.execute([&] { return MeanSeconds([&] { ScalePass(buffers, threads); }); });
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

void SetRowCounters(benchmark::State& state, double bytes, double elements, const RowTimes& t,
                    double reference_seconds) {
  // One iteration whose time is t.call_seconds: the rates Google Benchmark derives from the
  // processed counts are per call already; the row's own counters are plain values.
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.SetItemsProcessed(static_cast<int64_t>(elements));
  state.counters["bytes"] = bytes;
  state.counters["gbps"] = bytes / t.call_seconds / 1e9;
  state.counters["baseline_gbps"] = bytes / t.baseline_seconds / 1e9;
  state.counters["pct_of_baseline"] = t.pct_of_baseline;
  if (reference_seconds > 0) state.counters["x_reference"] = reference_seconds / t.call_seconds;
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
