// posenc_kernel_bench: one benchmark per kernel registry entry (lib/kernels/registry.h), named
// "kernel/<entry name>", timing the row kernel alone (one thread, the best SIMD target) on a plan
// lib/api built for a Llama-3-8B-shaped call: 512 tokens, 32 heads of 128 (RoPE, M-RoPE,
// re-rotation), d_model 4096 (sinusoidal), 64 queries x 512 keys (ReRoPE tiles). A new entry is
// benchmarked without a new line here unless it brings a new operation. Internal (links
// posenc_internal): the suite (posenc_bench) measures the public entry points.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "lib/api/rerope_prepare.h"
#include "lib/api/rerotate_prepare.h"
#include "lib/api/rope_prepare.h"
#include "lib/api/sinusoidal_prepare.h"
#include "lib/kernels/registry.h"

namespace posenc {
namespace {

using kernels::KernelEntry;
using kernels::KernelOp;

constexpr int64_t kTokens = 512, kHeads = 32, kKvHeads = 8, kHeadDim = 128, kDModel = 4096;
constexpr int64_t kQ = 64, kK = 512;

Tensor Dense(std::vector<uint8_t>& buf, DType dtype, int64_t seq, int64_t heads, int64_t dim) {
  Tensor t;
  t.data = buf.data();
  t.dtype = dtype;
  const int64_t shape[4] = {1, seq, heads, dim};
  const int64_t strides[4] = {seq * heads * dim, heads * dim, dim, 1};
  for (int i = 0; i < 4; ++i) {
    t.shape[i] = shape[i];
    t.strides[i] = strides[i];
  }
  return t;
}

std::vector<uint8_t> Zeros(DType dtype, int64_t n) {
  return std::vector<uint8_t>(static_cast<size_t>(n) * DTypeSize(dtype), 0);
}

// The entries whose kernel ran (at least once, without error): main checks it against the table.
std::set<std::string>& EntriesRun() {
  static std::set<std::string> run;
  return run;
}

// Runs `fn` over all items of `plan` per iteration; bytes: read + written per item.
template <class Plan>
void Time(benchmark::State& state, const KernelEntry& e, const Plan& plan, int64_t items,
          int64_t bytes) {
  const kernels::RowKernel<Plan> fn = e.fn<Plan>();
  if (fn == nullptr) {
    state.SkipWithError("the entry has no kernel of its op's plan type");
    return;
  }
  EntriesRun().insert(e.name);
  for (auto _ : state) {
    fn(plan, 0, items);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

void RunEntry(benchmark::State& state, const KernelEntry& e) {
  const DType dt = e.dtype;
  const int64_t elem = static_cast<int64_t>(DTypeSize(dt));
  std::vector<int64_t> ids(3 * kTokens);
  for (int64_t i = 0; i < 3 * kTokens; ++i) ids[static_cast<size_t>(i)] = (i * 7) % 4096;
  Status st;
  switch (e.op) {
    case KernelOp::kRope:
    case KernelOp::kMRope: {
      auto q = Zeros(dt, kTokens * kHeads * kHeadDim);
      auto q_out = Zeros(dt, kTokens * kHeads * kHeadDim);
      RopeTensors t;
      t.q = Dense(q, dt, kTokens, kHeads, kHeadDim);
      t.q_out = Dense(q_out, dt, kTokens, kHeads, kHeadDim);
      RopeParams p;
      const int64_t sections[3] = {16, 24, 24};  // Qwen2-VL
      if (e.op == KernelOp::kMRope) {
        p.positions = Positions::StreamIds(ids.data(), 3);
        p.mrope.section = sections;
        p.mrope.num_sections = 3;
      } else {
        p.positions = Positions::Ids(ids.data());
      }
      api::PreparedRope prep;
      if (!(st = api::PrepareRope(t, p, &prep)).ok()) break;
      Time(state, e, prep.plan, kTokens, 2 * kHeads * kHeadDim * elem * kTokens);
      return;
    }
    case KernelOp::kRerotate: {
      auto k = Zeros(dt, kTokens * kKvHeads * kHeadDim);
      auto k_out = Zeros(dt, kTokens * kKvHeads * kHeadDim);
      RerotateParams rp;
      rp.from_positions = Positions::Ids(ids.data());
      rp.to_positions = Positions::Ids(ids.data() + kTokens);
      rp.to_freqs.base = 500000.0;
      api::PreparedRerotate prep;
      if (!(st = api::PrepareRerotate(Dense(k, dt, kTokens, kKvHeads, kHeadDim),
                                      Dense(k_out, dt, kTokens, kKvHeads, kHeadDim), rp, &prep))
               .ok()) {
        break;
      }
      Time(state, e, prep.plan, kTokens,
           2 * kKvHeads * kHeadDim * elem * kTokens);
      return;
    }
    case KernelOp::kSinusoidal: {
      auto out = Zeros(dt, kTokens * kDModel);
      SinusoidalParams p;
      api::PreparedSinusoidal prep;
      const EmbeddingView view = EmbeddingBSD(out.data(), dt, 1, kTokens, kDModel);
      if (!(st = api::PrepareSinusoidal(p, nullptr, view, &prep)).ok()) break;
      Time(state, e, prep.plan, kTokens, kDModel * elem * kTokens);
      return;
    }
    case KernelOp::kReropeTiles: {
      auto q = Zeros(dt, kQ * kHeads * kHeadDim);
      auto k = Zeros(dt, kK * kKvHeads * kHeadDim);
      auto scores = Zeros(DType::kF32, kHeads * kQ * kK);
      RelativeRopeTensors t;
      t.q = Dense(q, dt, kQ, kHeads, kHeadDim);
      t.k = Dense(k, dt, kK, kKvHeads, kHeadDim);
      t.scores = Dense(scores, DType::kF32, kHeads, kQ, kK);
      RelativeRopeParams p;
      p.map.mode = DistanceMode::kLeaky;
      p.map.window = 256;
      p.map.leak = 16.0;
      p.q_positions = Positions::Offset(kK - kQ);
      p.k_positions = Positions::Offset(0);
      api::PreparedRerope prep;
      if (!(st = api::PrepareRerope(t, p, &prep)).ok()) break;
      Time(state, e, prep.plan, prep.plan.tiles(),
           (kQ * kHeads + kK * kKvHeads) * kHeadDim * elem + kHeads * kQ * kK * 4);
      return;
    }
  }
  state.SkipWithError(st.ok() ? "unknown operation" : st.message().c_str());
}

}  // namespace
}  // namespace posenc

int main(int argc, char** argv) {
  int registered = 0;
  for (const posenc::kernels::KernelEntry& e : posenc::kernels::AllKernels()) {
    benchmark::RegisterBenchmark((std::string("kernel/") + e.name).c_str(),
                                 [&e](benchmark::State& state) { posenc::RunEntry(state, e); });
    ++registered;
  }
  std::printf("posenc_kernel_bench: %d registry entries registered\n", registered);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // kernel_bench_smoke passes only on the first line: every entry of the table was timed.
  const size_t ran = posenc::EntriesRun().size();
  if (ran == static_cast<size_t>(registered)) {
    std::printf("posenc_kernel_bench: every registry entry ran (%zu)\n", ran);
  } else {
    std::printf("posenc_kernel_bench: %zu of %d registry entries ran; not run:", ran, registered);
    for (const posenc::kernels::KernelEntry& e : posenc::kernels::AllKernels()) {
      if (posenc::EntriesRun().count(e.name) == 0) std::printf(" %s", e.name);
    }
    std::printf("\n");
  }
  return 0;
}
