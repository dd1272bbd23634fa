// posenc::RelativeRopeScores and RelativeRopeTable: validation, then the parallel split over
// (batch, query block, key block) tiles, then the dispatched tile kernels.
#include "posenc/rerope.h"

#include <algorithm>
#include <cmath>
#include <new>

#include "lib/core/guard.h"
#include "lib/api/kernel_choice.h"
#include "lib/api/positions.h"
#include "lib/api/rerope_prepare.h"
#include "lib/api/table_build.h"
#include "lib/api/rope_prepare.h"
#include "lib/api/targets_internal.h"
#include "lib/api/tensor_checks.h"
#include "lib/freqs/inv_freq.h"
#include "lib/core/rerope_plan.h"
#include "lib/freqs/scaling.h"
#include "lib/parallel/split.h"

namespace posenc {

const char* DistanceModeName(DistanceMode mode) {
  switch (mode) {
    case DistanceMode::kExact:
      return "exact";
    case DistanceMode::kCap:
      return "cap";
    case DistanceMode::kLeaky:
      return "leaky";
    case DistanceMode::kLog:
      return "log";
  }
  return "unknown";
}

Status RelativeRopeScores(const RelativeRopeTensors& tensors, const RelativeRopeParams& params) {
  return api::Guarded("posenc::RelativeRopeScores", [&] {
    const Status& env = api::EnsureTargetsInitialized();
    if (!env.ok()) return env;
    api::PreparedRerope prep;
    Status st = api::PrepareRerope(tensors, params, &prep);
    if (!st.ok()) return st;
    const kernels::ReropePlan& plan = prep.plan;
    // Bytes a tile touches (k block, q block, scores): the serial threshold and task size of the
    // split. Each tile is independent, so the split never changes a result.
    const int64_t elem = static_cast<int64_t>(DTypeSize(plan.dtype));
    const int64_t tile_bytes = plan.tile_k * plan.kv_heads * plan.head_dim * elem +
                               plan.tile_q * plan.heads * plan.head_dim * elem +
                               plan.tile_q * plan.tile_k * plan.heads * 4;
    kernels::RowKernel<kernels::ReropePlan> tiles = nullptr;
    st = api::ChooseKernel(kernels::KernelOp::kReropeTiles, plan.dtype, &tiles);
    if (!st.ok()) return st;
    parallel::ForEachRange(plan.tiles(), tile_bytes, params.exec,
                           [&plan, tiles](int64_t begin, int64_t end) { tiles(plan, begin, end); });
    return Status::Ok();
  });
}

Status RelativeRopeScores(const RelativeRopeTensors& tensors, const RopeConfig& config,
                          const RelativeRopeParams& params) {
  return api::Guarded("posenc::RelativeRopeScores(config)", [&] {
    if (params.table != nullptr) {
      return api::Err(StatusCode::kInvalidArgument,
                      "table: RelativeRopeScores with a config computes cos/sin on the fly; for a "
                      "table, build a RelativeRopeTable from ComputeFrequencies");
    }
    // L = largest position + 1 (dynamic, longrope), as ApplyRope(config) derives it.
    int64_t seq_len = 0;
    if (freqs::LengthRuleOf(config.rope_type) != freqs::LengthRule::kNone) {
      const Tensor* views[2] = {&tensors.q, &tensors.k};
      const Positions* positions[2] = {&params.q_positions, &params.k_positions};
      const char* names[2] = {"q_positions", "k_positions"};
      for (int n = 0; n < 2; ++n) {
        const Tensor& v = *views[n];
        if (!v.present() || v.shape[0] <= 0 || v.shape[1] <= 0)
          continue;  // PrepareRerope reports it
        api::PositionSnapshot snapshot;
        Status st = snapshot.Take(*positions[n], v.shape[0], v.shape[1], names[n]);
        if (!st.ok()) return st;
        const int64_t largest = api::RangeOf(snapshot.positions(), v.shape[0], v.shape[1]).max;
        seq_len = std::max(seq_len, largest < 0 ? 0 : largest + 1);
      }
    }
    RopeFrequencies f;
    Status st = ComputeFrequencies(config, seq_len, &f);
    if (!st.ok()) return st;
    if (params.rotary_dim != 0 && params.rotary_dim != f.rotary_dim) {
      return api::Err(StatusCode::kInvalidArgument, "rotary_dim = ", params.rotary_dim,
                      ": the config gives rotary_dim = ", f.rotary_dim, " (pass 0)");
    }
    RelativeRopeParams p = params;
    p.rotary_dim = f.rotary_dim;
    p.freqs.inv_freq = f.inv_freq.data();
    p.freqs.inv_freq_len = static_cast<int64_t>(f.inv_freq.size());
    p.freqs.attention_factor = f.attention_factor;
    return RelativeRopeScores(tensors, p);
  });
}

Status RelativeRopeTable::Create(int64_t rotary_dim, const Frequencies& freqs,
                                 const DistanceMap& map, int64_t max_distance,
                                 std::shared_ptr<const RelativeRopeTable>* out) {
  return api::Guarded("posenc::RelativeRopeTable::Create", [&] {
    const Status& env = api::EnsureTargetsInitialized();
    if (!env.ok()) return env;
    if (out == nullptr) return Status(StatusCode::kInvalidArgument, "out is null");
    if (rotary_dim <= 0 || rotary_dim % 2 != 0) {
      return api::Err(StatusCode::kInvalidArgument, "rotary_dim = ", rotary_dim,
                      ": must be even and > 0");
    }
    api::CheckedFrequencies f;
    Status st = api::CheckFrequencies(freqs, rotary_dim, &f);
    if (!st.ok()) return st;
    if (!(st = api::CheckDistanceMap(map, "map")).ok()) return st;
    if (!std::isfinite(freqs.attention_factor * freqs.attention_factor)) {
      return api::Err(StatusCode::kInvalidArgument,
                      "freqs.attention_factor = ", freqs.attention_factor,
                      ": its square overflows");
    }
    const int64_t half = rotary_dim / 2;
    // kCap never reads a row past the window: distances beyond it share row w.
    const int64_t rows = map.mode == DistanceMode::kCap && max_distance > map.window + 1
                             ? map.window + 1
                             : max_distance;
    const api::TableSize size = {"max_distance", max_distance, rows, rotary_dim,
                                 int64_t{1} << 37,
                                 "the stored rows * rotary_dim <= 2^37 doubles"};
    if (!(st = api::CheckTableSize(size)).ok()) return st;
    if (!(st = api::CheckMappedAngle(map, rows - 1, f.max_freq, "max_distance - 1")).ok()) return st;
    std::shared_ptr<RelativeRopeTable> table(new RelativeRopeTable());
    table->rotary_dim_ = rotary_dim;
    table->max_distance_ = max_distance;
    table->stored_rows_ = rows;
    table->map_ = map;
    table->attention_factor_ = freqs.attention_factor;
    table->inv_freq_.assign(f.inv_freq, f.inv_freq + half);
    RelativeRopeTable* t = table.get();
    const double m2 = freqs.attention_factor * freqs.attention_factor;
    st = api::FillTableRows(
        size, {&t->rows_}, Execution{}, [] { return Status::Ok(); },
        [t, half, m2](int64_t begin, int64_t end) {
          kernels::ReropeRows(t->inv_freq_.data(), half, m2, t->map_, begin, end - begin,
                              t->rows_.data() + begin * 2 * half);
        });
    if (!st.ok()) return st;
    *out = std::move(table);
    return Status::Ok();
  });
}

}  // namespace posenc
