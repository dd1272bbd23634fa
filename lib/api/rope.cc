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

// What a RopeCall keeps: the tensors, the validated layout (api::PrepareRopeLayout; it holds its
// own pair -> stream map, so the caller's mrope.section is not read again), and a copy of the
// caller's inv_freq, which the kernels read at every call.
struct RopeCall::State {
  RopeTensors tensors;
  Execution exec;
  std::vector<double> inv_freq;  // params.freqs.inv_freq's values, when the plan computes rows
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
    // Everything ApplyRope checks, in its order: the layout, then params.positions.
    auto state = std::make_unique<State>();
    api::PreparedRope& layout = state->layout;
    Status st = api::PrepareRopeLayout(tensors, params, &layout);
    if (!st.ok()) return st;
    kernels::RopePlan plan = layout.plan;
    api::RopePositions copies;
    st = api::PrepareRopePositions(layout, tensors, params.positions, &copies, &plan);
    if (!st.ok()) return st;
    state->tensors = tensors;
    state->exec = params.exec;
    if (layout.plan.source == kernels::RowSource::kCompute && params.freqs.inv_freq != nullptr) {
      // rotary_dim / 2 finite values (CheckFrequencies), copied: the caller may reuse its array.
      const double* first = params.freqs.inv_freq;
      state->inv_freq.assign(first, first + layout.plan.rotary_dim / 2);
      layout.plan.inv_freq = layout.inv_freq = state->inv_freq.data();
    }
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
  return Create(rotary_dim, freqs, max_positions, RotationArithmetic::kF64, out);
}

Status RopeTable::Create(int64_t rotary_dim, const Frequencies& freqs, int64_t max_positions,
                         RotationArithmetic arithmetic, std::shared_ptr<const RopeTable>* out) {
  return api::Guarded("posenc::RopeTable::Create", [&] {
    const Status& env = api::EnsureTargetsInitialized();
    if (!env.ok()) return env;
    if (out == nullptr) return Status(StatusCode::kInvalidArgument, "out is null");
    if (rotary_dim <= 0 || rotary_dim % 2 != 0) {
      return api::Err(StatusCode::kInvalidArgument, "rotary_dim = ", rotary_dim,
                      ": must be even and > 0");
    }
    if (!api::IsRotationArithmetic(arithmetic)) {
      return api::Err(StatusCode::kInvalidArgument, "arithmetic = ", static_cast<int>(arithmetic),
                      ": not a RotationArithmetic");
    }
    const bool lo = arithmetic == RotationArithmetic::kFmaChain;
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
    auto fill = [t, half, lo](int64_t begin, int64_t end) {
      kernels::CosSinRows(t->inv_freq_.data(), half, t->attention_factor_, begin, end - begin,
                          t->cos_.data() + begin * half, t->sin_.data() + begin * half,
                          lo ? t->cos_lo_.data() + begin * half : nullptr,
                          lo ? t->sin_lo_.data() + begin * half : nullptr);
    };
    const auto ok = [] { return Status::Ok(); };
    st = lo ? api::FillTableRows(size, {&t->cos_, &t->sin_, &t->cos_lo_, &t->sin_lo_},
                                 Execution{}, ok, fill)
            : api::FillTableRows(size, {&t->cos_, &t->sin_}, Execution{}, ok, fill);
    if (!st.ok()) return st;
    *out = std::move(table);
    return Status::Ok();
  });
}

}  // namespace posenc
