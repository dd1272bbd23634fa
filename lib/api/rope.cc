// posenc::ApplyRope and RopeTable: validation, then the parallel split over tokens, then the
// dispatched row kernels.
#include <memory>
#include <utility>
#include <vector>

#include "lib/core/guard.h"
#include "lib/api/kernel_choice.h"
#include "lib/api/positions.h"
#include "lib/api/rope_prepare.h"
#include "lib/api/table_build.h"
#include "lib/api/targets_internal.h"
#include "lib/api/tensor_checks.h"
#include "lib/core/rope_plan.h"
#include "lib/parallel/split.h"
#include "posenc/rope.h"

namespace posenc {

namespace {

// The kernels of a validated plan: the parallel split over tokens, then the dispatched rows.
Status RunRope(const kernels::RopePlan& plan, const Execution& exec) {
  int64_t bytes_per_token = 0;
  const int64_t element_bytes = static_cast<int64_t>(api::ElementBytes(plan.dtype));
  for (int i = 0; i < plan.num_io; ++i) {
    bytes_per_token += 2 * plan.io[i].heads * plan.head_dim * element_bytes;  // read + write
  }
  // M-RoPE with multi-stream ids, else plain RoPE.
  const kernels::KernelOp op =
      plan.num_streams > 1 ? kernels::KernelOp::kMRope : kernels::KernelOp::kRope;
  kernels::RowKernel<kernels::RopePlan> rows = nullptr;
  Status st = api::ChooseKernel(op, plan.dtype, &rows);
  if (!st.ok()) return st;
  parallel::ForEachToken(plan, bytes_per_token, exec, rows);
  return Status::Ok();
}

}  // namespace

Status ApplyRope(const RopeTensors& tensors, const RopeParams& params) {
  return api::Guarded("posenc::ApplyRope", [&] {
    const Status& env = api::EnsureTargetsInitialized();
    if (!env.ok()) return env;
    api::PreparedRope prep;
    Status st = api::PrepareRope(tensors, params, &prep);
    if (!st.ok()) return st;
    return RunRope(prep.plan, params.exec);
  });
}

// What a RopeCall keeps: the tensors, the validated layout (api::PrepareRopeLayout), and its own
// copies of the arrays params pointed at that the layout reads at every call.
struct RopeCall::State {
  RopeTensors tensors;
  Execution exec;
  std::vector<double> inv_freq;  // params.freqs.inv_freq's values, if given
  std::vector<int64_t> section;  // params.mrope.section's values, if given
  api::PreparedRope layout;
};

RopeCall::RopeCall(std::unique_ptr<State> state) : state_(std::move(state)) {}
RopeCall::~RopeCall() = default;

Status RopeCall::Create(const RopeTensors& tensors, const RopeParams& params,
                        std::unique_ptr<RopeCall>* out) {
  return api::Guarded("posenc::RopeCall::Create", [&] {
    const Status& env = api::EnsureTargetsInitialized();
    if (!env.ok()) return env;
    if (out == nullptr) return Status(StatusCode::kInvalidArgument, "out is null");
    {  // Everything ApplyRope checks, positions included, on the caller's arrays.
      api::PreparedRope check;
      Status st = api::PrepareRope(tensors, params, &check);
      if (!st.ok()) return st;
    }
    // The layout again, now on copies of the arrays it keeps reading (valid: checked above).
    auto state = std::make_unique<State>();
    state->tensors = tensors;
    state->exec = params.exec;
    RopeParams kept = params;
    if (params.freqs.inv_freq != nullptr) {
      state->inv_freq.assign(params.freqs.inv_freq,
                             params.freqs.inv_freq + params.freqs.inv_freq_len);
      kept.freqs.inv_freq = state->inv_freq.data();
    }
    if (params.mrope.present()) {
      state->section.assign(params.mrope.section,
                            params.mrope.section + params.mrope.num_sections);
      kept.mrope.section = state->section.data();
    }
    Status st = api::PrepareRopeLayout(state->tensors, kept, &state->layout);
    if (!st.ok()) return st;
    out->reset(new RopeCall(std::move(state)));
    return Status::Ok();
  });
}

Status RopeCall::Apply(const Positions& positions) const {
  return api::Guarded("posenc::RopeCall::Apply", [&] {
    const Status& env = api::EnsureTargetsInitialized();
    if (!env.ok()) return env;
    const State& s = *state_;
    kernels::RopePlan plan = s.layout.plan;
    api::RopePositions copies;
    Status st = api::PrepareRopePositions(s.layout, s.tensors, positions, &copies, &plan);
    if (!st.ok()) return st;
    return RunRope(plan, s.exec);
  });
}

Status RopeTable::Create(int64_t rotary_dim, const Frequencies& freqs, int64_t max_positions,
                         std::shared_ptr<const RopeTable>* out) {
  return api::Guarded("posenc::RopeTable::Create", [&] {
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
    const int64_t half = rotary_dim / 2;
    const api::TableSize size = {"max_positions", max_positions, max_positions, half,
                                 api::kMaxTableElements,
                                 "max_positions * rotary_dim / 2 <= 2^32"};
    if (!(st = api::CheckTableSize(size)).ok()) return st;
    if (!(st = api::CheckAngle(static_cast<double>(max_positions - 1), f.max_freq,
                               "max_positions", max_positions, "|(max_positions - 1) * inv_freq|"))
             .ok()) {
      return st;
    }
    std::shared_ptr<RopeTable> table(new RopeTable());
    table->rotary_dim_ = rotary_dim;
    table->max_positions_ = max_positions;
    table->attention_factor_ = freqs.attention_factor;
    table->inv_freq_.assign(f.inv_freq, f.inv_freq + half);
    RopeTable* t = table.get();
    st = api::FillTableRows(
        size, {&t->cos_, &t->sin_}, Execution{}, [] { return Status::Ok(); },
        [t, half](int64_t begin, int64_t end) {
          kernels::CosSinRows(t->inv_freq_.data(), half, t->attention_factor_, begin, end - begin,
                              t->cos_.data() + begin * half, t->sin_.data() + begin * half);
        });
    if (!st.ok()) return st;
    *out = std::move(table);
    return Status::Ok();
  });
}

}  // namespace posenc
