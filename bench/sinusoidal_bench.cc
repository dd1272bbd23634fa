// Sinusoidal rows of the suite: table generation (write only: elements/s, and GB/s of writes
// against the in-place baseline on a buffer of the same size) and the fused add x * scale + PE
// (read + write, GB/s against the in-place baseline on the same buffers: x, and for an add from
// a table a buffer of the table's size), per target.
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "posenc/sinusoidal.h"
#include "posenc/targets.h"

namespace posenc {
namespace bench {
namespace {

struct Case {
  bool add;  // false: table generation
  int64_t d_model, tokens;
  std::string target;
  int threads;
  bool from_table = false;  // fused add reading PE rows from a SinusoidalTable
};

void RunCase(benchmark::State& state, const Case& c, const Rounds& plan) {
  if (!SelectTarget(state, c.target)) return;
  Floats x(static_cast<size_t>(c.d_model * c.tokens));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (float& v : x) v = dist(rng);
  // A fused add from a table also streams the table's rows (as many floats as x here): its
  // baseline is x += t over x and a buffer of the table's size, the same three streams.
  Floats table_sized(c.from_table ? x.size() : 0, 0.5f);
  SinusoidalParams p;
  p.layout = SinusoidalLayout::kConcatSinCos;
  p.x_scale = 1.0;
  p.positions = Positions::Offset(0);
  p.exec.max_threads = c.threads == 1 ? 1 : 0;
  std::shared_ptr<const SinusoidalTable> table;
  if (c.from_table) {
    Status created = SinusoidalTable::Create(p, c.d_model, c.tokens, &table);
    if (!created.ok()) {
      state.SkipWithError(created.message().c_str());
      return;
    }
    p.table = table.get();
  }
  const EmbeddingView view = EmbeddingBSD(x.data(), 1, c.tokens, c.d_model);
  auto call = [&] { return c.add ? AddSinusoidal(p, view) : WriteSinusoidal(p, view); };
  Status st = call();
  if (!st.ok()) {
    state.SkipWithError(st.message().c_str());
    return;
  }
  const std::vector<Floats*> buffers{&x};  // built once: a pass allocates nothing
  auto baseline = [&] {
    if (c.from_table) {
      AddPass(&x, table_sized, c.threads);
    } else {
      ScalePass(buffers, c.threads);
    }
  };
  RowTimes times = TimeRow(state, plan, c.threads, baseline, [&] {
    st = call();
    benchmark::ClobberMemory();
  });
  (void)SetMaxTarget("");
  // Compare per byte moved: a table write moves n * 4 bytes (write only) against the in-place
  // scale's 2 * n * 4; an add on the fly 2 * n * 4 (x read, out written), the same as its
  // baseline; an add from a table 3 * n * 4 (x and the table read, out written), the same as
  // x += t. 100% means moving bytes as fast as the baseline does.
  const double elements = static_cast<double>(x.size());
  const double streams = !c.add ? 1.0 : c.from_table ? 3.0 : 2.0;
  const double bytes = streams * 4.0 * elements;
  if (!c.add) {
    times.baseline_seconds /= 2.0;
    times.pct_of_baseline /= 2.0;
  }
  SetRowCounters(state, bytes, elements, times, 0.0);
}

}  // namespace

void RegisterSinusoidalBenchmarks(bool quick) {
  const std::vector<std::string> targets = SupportedTargets();
  std::vector<Case> cases;
  if (quick) {
    cases.push_back({false, 768, 4096, targets.front(), 1});
    cases.push_back({true, 768, 4096, targets.front(), 1});
    cases.push_back({true, 768, 4096, targets.front(), 1, true});
  } else {
    for (bool add : {false, true})
      for (int64_t d : {512, 768})
        for (int64_t tokens : {512, 4096})
          for (const std::string& target : targets)
            for (int threads : {1, 2}) {
              cases.push_back({add, d, tokens, target, threads});
              if (add) cases.push_back({add, d, tokens, target, threads, true});
            }
  }
  for (const Case& c : cases) {
    Row row;
    row.model = std::string(c.add ? "sinusoidal_add" : "sinusoidal_table") + ":d=" +
                std::to_string(c.d_model);
    row.tokens = c.tokens;
    row.pairs = "concat_sin_cos";
    row.source = c.from_table ? "table" : "on_the_fly";
    row.target = c.target;
    row.threads = c.threads;
    const Rounds plan = RoundsFor(quick);
    RegisterRoundsRow(row, [c, plan](benchmark::State& s) { RunCase(s, c, plan); });
  }
}

}  // namespace bench
}  // namespace posenc
