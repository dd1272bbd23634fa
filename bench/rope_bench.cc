// RoPE rows of the suite: model shapes x tokens x pairs x cos/sin source x arithmetic x target x
// threads, plus memcpy rows on the same bytes. Decode steps (1 token) sit at position 4000.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hwy/aligned_allocator.h"
#include "bench/bench_common.h"
#include "bench/model_shapes.h"
#include "bench/rotation_floor.h"
#include "lib/core/rope_plan.h"
#include "posenc/half.h"
#include "posenc/rope.h"
#include "posenc/targets.h"

namespace posenc {
namespace bench {
namespace {

// kFloor: not posenc, the rotation's arithmetic alone (bench/rotation_floor.h).
enum class Source { kOnTheFly, kTable, kCache, kBaselineMemcpy, kFloor };
const char* SourceName(Source s) {
  switch (s) {
    case Source::kOnTheFly: return "on_the_fly";
    case Source::kTable: return "table";
    case Source::kCache: return "cache";
    case Source::kBaselineMemcpy: return "baseline_memcpy";
    case Source::kFloor: return "floor";
  }
  return "?";
}
const char* ArithmeticName(RotationArithmetic a) {
  if (a == RotationArithmetic::kFmaChain) return "fma_chain";
  return a == RotationArithmetic::kF64 ? "f64" : "f32";
}

struct Case {
  const ModelShape* model;
  int64_t tokens;
  PairLayout pairs;
  Source source;
  std::string target;
  int threads;
  RotationArithmetic arithmetic = RotationArithmetic::kF64;
  DType dtype = DType::kF32;
  // exec.max_threads: 0 (the default) runs in the benchmark's arena of `threads`, a runtime's
  // own arena; n > 1 makes posenc use its own (reused) arena of n threads.
  int max_threads = 0;
  bool out_of_place = false;  // write q_out / k_out (separate buffers) instead of in place
  bool prepared = false;  // time RopeCall::Apply (the call made once, outside the timing)
  FloorArithmetic floor = FloorArithmetic::kF32;  // Source::kFloor rows: which arithmetic
};

constexpr int64_t kDecodePosition = 4000;
constexpr int64_t kTablePositions = 8192;

// Tables are built once per (rotary_dim, theta) and shared by every row that uses them.
const RopeTable* TableFor(const ModelShape& m) {
  static std::map<std::pair<int64_t, double>, std::shared_ptr<const RopeTable>> tables;
  auto& t = tables[{m.rotary_dim, m.rope_theta}];
  if (!t) {
    Frequencies f;
    f.base = m.rope_theta;
    // With lo rows, so kFmaChain rows can read it too (the others read the f32 rows only).
    if (!RopeTable::Create(m.rotary_dim, f, kTablePositions, RotationArithmetic::kFmaChain, &t)
             .ok()) {
      return nullptr;
    }
  }
  return t.get();
}

// q and k of `dtype`, stored in float vectors (so the baseline can scale the same bytes).
struct QK {
  int64_t q_elements, k_elements;
  DType dtype;
  Floats q, k;
  QK(const ModelShape& m, int64_t tokens, DType dt)
      : q_elements(tokens * m.q_heads * m.head_dim),
        k_elements(tokens * m.kv_heads * m.head_dim),
        dtype(dt),
        q(Words(q_elements, dt)),
        k(Words(k_elements, dt)) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (Floats* v : {&q, &k}) {
      std::vector<float> values(v == &q ? static_cast<size_t>(q_elements) : static_cast<size_t>(k_elements));
      for (float& x : values) x = dist(rng);
      (void)ConvertFromF32(values.data(), values.size(), dt, v->data());
    }
  }
  static size_t Words(int64_t elements, DType dt) {
    return (static_cast<size_t>(elements) * DTypeSize(dt) + 3) / 4;
  }
  double elements() const { return static_cast<double>(q_elements + k_elements); }
  double bytes_moved() const { return 2.0 * static_cast<double>(DTypeSize(dtype)) * elements(); }
};

RopeParams ParamsFor(const Case& c) {
  RopeParams p;
  p.pairs = c.pairs;
  p.arithmetic = c.arithmetic;
  p.rotary_dim = c.model->rotary_dim;
  p.freqs.base = c.model->rope_theta;
  p.positions = Positions::Offset(c.tokens == 1 ? kDecodePosition : 0);
  p.exec.max_threads = c.max_threads;
  if (c.source == Source::kTable) p.source = CosSinSource::Table(TableFor(*c.model));
  if (c.source == Source::kCache) {
    const RopeTable* table = TableFor(*c.model);
    CosSinCache cache;
    cache.cos = table->cos_row(0);
    cache.sin = table->sin_row(0);
    cache.rows = table->max_positions();
    p.source = CosSinSource::Cache(cache);
  }
  return p;
}

// posenc::reference seconds per token for the shape (measured once on 8 tokens; it is linear).
double ReferenceSecondsPerToken(const Case& c) {
  static std::map<std::string, double> cache;
  const std::string key =
      c.model->name + PairLayoutName(c.pairs) + SourceName(c.source) + DTypeName(c.dtype);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  Case small = c;
  small.tokens = 8;
  QK t(*c.model, small.tokens, c.dtype);
  RopeTensors rt;
  rt.q = TensorBSHD(t.q.data(), c.dtype, 1, small.tokens, c.model->q_heads, c.model->head_dim);
  rt.k = TensorBSHD(t.k.data(), c.dtype, 1, small.tokens, c.model->kv_heads, c.model->head_dim);
  const RopeParams p = ParamsFor(small);
  const double s = MeanSeconds([&] { (void)reference::ApplyRope(rt, p); }) / 8.0;
  cache[key] = s;
  return s;
}

void RunCase(benchmark::State& state, const Case& c, const Rounds& plan) {
  if (!SelectTarget(state, c.target)) return;
  QK t(*c.model, c.tokens, c.dtype);
  const std::vector<Floats*> buffers{&t.q, &t.k};  // built once: a pass allocates nothing
  auto baseline = [&] { ScalePass(buffers, c.threads); };
  RowTimes times;
  double reference = 0;
  if (c.source == Source::kFloor) {
    const RopeTable* table = TableFor(*c.model);
    FloorRows rows;
    if (table == nullptr ||
        !MakeFloorRows(*table, c.tokens == 1 ? kDecodePosition : 0, c.tokens, &rows)) {
      state.SkipWithError("the rotation floors take head_dim 128 and the table's positions");
      return;
    }
    times = TimeRow(state, plan, c.threads, baseline, [&] {
      (void)RotateFloor(c.floor, c.pairs, rows, t.q.data(), c.model->q_heads, t.k.data(),
                        c.model->kv_heads);
      benchmark::ClobberMemory();
    });
  } else if (c.source == Source::kBaselineMemcpy) {
    Floats q_copy(t.q.size()), k_copy(t.k.size());
    times = TimeRow(state, plan, c.threads, baseline, [&] {
      std::memcpy(q_copy.data(), t.q.data(), q_copy.size() * 4);
      std::memcpy(k_copy.data(), t.k.data(), k_copy.size() * 4);
      benchmark::ClobberMemory();
    });
  } else {
    RopeTensors rt;
    rt.q = TensorBSHD(t.q.data(), c.dtype, 1, c.tokens, c.model->q_heads, c.model->head_dim);
    rt.k = TensorBSHD(t.k.data(), c.dtype, 1, c.tokens, c.model->kv_heads, c.model->head_dim);
    // Outputs 64-byte aligned, as runtimes' allocators give them (streaming stores need
    // vector-aligned heads), and touched once so the timed calls see mapped pages.
    hwy::AlignedFreeUniquePtr<float[]> q_out, k_out;
    if (c.out_of_place) {
      q_out = hwy::AllocateAligned<float>(t.q.size());
      k_out = hwy::AllocateAligned<float>(t.k.size());
      std::fill(q_out.get(), q_out.get() + t.q.size(), 0.0f);
      std::fill(k_out.get(), k_out.get() + t.k.size(), 0.0f);
      rt.q_out = TensorBSHD(q_out.get(), c.dtype, 1, c.tokens, c.model->q_heads, c.model->head_dim);
      rt.k_out = TensorBSHD(k_out.get(), c.dtype, 1, c.tokens, c.model->kv_heads, c.model->head_dim);
    }
    const RopeParams p = ParamsFor(c);
    std::unique_ptr<RopeCall> call;  // made once, outside the timing
    Status st = c.prepared ? RopeCall::Create(rt, p, &call) : Status::Ok();
    auto apply = [&] { return c.prepared ? call->Apply(p.positions) : ApplyRope(rt, p); };
    if (st.ok()) st = apply();  // the error check outside the timed rounds
    if (!st.ok()) {
      state.SkipWithError(st.message().c_str());
      return;
    }
    times = TimeRow(state, plan, c.threads, baseline, [&] {
      st = apply();
      benchmark::ClobberMemory();
    });
    reference = ReferenceSecondsPerToken(c) * static_cast<double>(c.tokens);
  }
  (void)SetMaxTarget("");
  SetRowCounters(state, t.bytes_moved(), t.elements(), times, reference);
}

void Register(const Case& c, bool quick) {
  Row row;
  row.model = c.model->name;
  row.tokens = c.tokens;
  row.dtype = DTypeName(c.dtype);
  row.pairs = PairLayoutName(c.pairs);
  row.source = SourceName(c.source);
  row.arithmetic = c.source == Source::kFloor ? FloorArithmeticName(c.floor)
                   : c.source == Source::kBaselineMemcpy || c.dtype != DType::kF32
                       ? ""
                       : ArithmeticName(c.arithmetic);
  row.target = c.target;
  row.threads = c.threads;
  row.max_threads = c.max_threads;
  row.out_of_place = c.out_of_place || c.source == Source::kBaselineMemcpy;
  row.prepared = c.prepared;
  // ApplyRope with RopeParams{} and the model's layout: on-the-fly cos/sin, kF64 (f32 tensors),
  // max_threads 0.
  row.is_default = !c.prepared && c.source == Source::kOnTheFly && c.pairs == c.model->pairs &&
                   (c.dtype != DType::kF32 || c.arithmetic == RotationArithmetic::kF64) &&
                   c.max_threads == 0;
  const Rounds plan = RoundsFor(quick);
  RegisterRoundsRow(row, [c, plan](benchmark::State& s) { RunCase(s, c, plan); });
}

}  // namespace

void RegisterRopeBenchmarks(bool quick) {
  const std::vector<std::string> targets = SupportedTargets();
  const RotationArithmetic kBoth[] = {RotationArithmetic::kF64, RotationArithmetic::kF32};
  if (quick) {
    const ModelShape* m = FindModelShape("llama3-8b");
    const std::string& best = targets.front();
    for (int64_t tokens : {1, 16, 512, 4096})
      for (Source s : {Source::kOnTheFly, Source::kTable})
        for (RotationArithmetic a : kBoth)
          for (int threads : {1, 2}) {
            if (tokens == 1 && threads == 2) continue;  // a decode step never spawns tasks
            Register({m, tokens, PairLayout::kHalf, s, best, threads, a}, quick);
          }
    // RotationArithmetic::kFmaChain (kF64's bound at f32 lanes), one thread.
    for (int64_t tokens : {1, 16, 512, 4096})
      for (Source s : {Source::kOnTheFly, Source::kTable})
        Register({m, tokens, PairLayout::kHalf, s, best, 1, RotationArithmetic::kFmaChain}, quick);
    // posenc's own arena (exec.max_threads = 2) next to the caller's arena rows above.
    for (int64_t tokens : {16, 512, 4096}) {
      Register({m, tokens, PairLayout::kHalf, Source::kOnTheFly, best, 2, RotationArithmetic::kF64,
                DType::kF32, 2},
               quick);
      Register({m, tokens, PairLayout::kHalf, Source::kTable, best, 2, RotationArithmetic::kF32,
                DType::kF32, 2},
               quick);
    }
    // Out of place (q_out / k_out), next to the memcpy row of the same bytes: 256 tokens (5 MiB
    // of outputs) store normally, 512 and 4096 stream (kernels::kStreamingStoreBytes).
    constexpr int64_t kLlama3TokenBytes = (32 + 8) * 128 * 4;  // q + k outputs of one token
    static_assert(256 * kLlama3TokenBytes < kernels::kStreamingStoreBytes &&
                      kernels::kStreamingStoreBytes <= 512 * kLlama3TokenBytes,
                  "the 256- and 512-token rows must sit on either side of the threshold");
    for (int64_t tokens : {256, 512, 4096}) {
      Register({m, tokens, PairLayout::kHalf, Source::kOnTheFly, best, 1, RotationArithmetic::kF64,
                DType::kF32, 0, true},
               quick);
      Register({m, tokens, PairLayout::kHalf, Source::kTable, best, 1, RotationArithmetic::kF32,
                DType::kF32, 0, true},
               quick);
    }
    for (int64_t tokens : {256, 512})
      Register({m, tokens, PairLayout::kHalf, Source::kBaselineMemcpy, best, 1}, quick);
    // A RopeCall made once and applied per step (decode, small chunks): default, table + kF32.
    for (int64_t tokens : {1, 16})
      for (Source s : {Source::kOnTheFly, Source::kTable}) {
        const RotationArithmetic a =
            s == Source::kTable ? RotationArithmetic::kF32 : RotationArithmetic::kF64;
        Register({m, tokens, PairLayout::kHalf, s, best, 1, a, DType::kF32, 0, false, true}, quick);
      }
    // Interleaved pairs (GPT-J / NeoX-style checkpoints) on the same shape.
    for (int64_t tokens : {1, 512, 4096})
      for (Source s : {Source::kOnTheFly, Source::kTable}) {
        const RotationArithmetic a =
            s == Source::kTable ? RotationArithmetic::kF32 : RotationArithmetic::kF64;
        Register({m, tokens, PairLayout::kInterleaved, s, best, 1, a}, quick);
      }
    for (DType dt : {DType::kBF16, DType::kF16})
      for (int64_t tokens : {512, 4096}) {
        Register({m, tokens, PairLayout::kHalf, Source::kTable, best, 1, RotationArithmetic::kF32, dt},
                 quick);
      }
    Register({m, 4096, PairLayout::kHalf, Source::kBaselineMemcpy, best, 1}, quick);
    // The rotation's arithmetic alone (bench/rotation_floor.h) on the same bytes, the FMA chain
    // (kFmaChain's operations) included: at 1 and 16 tokens (L1 / L2), where the arithmetic sets the time
    // (at 512 tokens memory does, for the floors as for the calls, and a floor bounds nothing:
    // in trial runs table + kF32 read 97 % of the scale, its floor 90-97 %); interleaved pairs at
    // decode, for the interleaved / half goal.
    for (int64_t tokens : {1, 16})
      for (FloorArithmetic f :
           {FloorArithmetic::kF32, FloorArithmetic::kF64, FloorArithmetic::kFmaChain})
        for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved}) {
          if (pairs == PairLayout::kInterleaved &&
              (tokens != 1 || f == FloorArithmetic::kFmaChain)) {
            continue;
          }
          Case c{m, tokens, pairs, Source::kFloor, best, 1};
          c.floor = f;
          Register(c, quick);
        }
    return;
  }
  // Every target with the default (f64) arithmetic; f32 arithmetic on the chosen target.
  for (const ModelShape& m : ModelShapes())
    for (int64_t tokens : {1, 16, 512, 4096}) {
      for (const std::string& target : targets)
        for (PairLayout pairs : {PairLayout::kHalf, PairLayout::kInterleaved})
          for (Source s : {Source::kOnTheFly, Source::kTable, Source::kCache})
            for (RotationArithmetic a : kBoth)
              for (int threads : {1, 2}) {
                if (a == RotationArithmetic::kF32 && target != targets.front()) continue;
                Register({&m, tokens, pairs, s, target, threads, a}, quick);
                if (threads == 2 && target == targets.front()) {
                  Register({&m, tokens, pairs, s, target, threads, a, DType::kF32, 2}, quick);
                }
              }
      for (DType dt : {DType::kBF16, DType::kF16})
        for (Source s : {Source::kOnTheFly, Source::kTable})
          for (int threads : {1, 2}) {
            Register({&m, tokens, m.pairs, s, targets.front(), threads, RotationArithmetic::kF32, dt},
                     quick);
          }
      for (Source s : {Source::kOnTheFly, Source::kTable}) {
        const RotationArithmetic a =
            s == Source::kTable ? RotationArithmetic::kF32 : RotationArithmetic::kF64;
        Register({&m, tokens, m.pairs, s, targets.front(), 1, a, DType::kF32, 0, true}, quick);
      }
      Register({&m, tokens, m.pairs, Source::kBaselineMemcpy, targets.front(), 1}, quick);
    }
}

}  // namespace bench
}  // namespace posenc
