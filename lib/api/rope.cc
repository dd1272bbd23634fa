// posenc::ApplyRope and RopeTable: validation, then the parallel split over tokens, then the
// dispatched row kernels.
#include <algorithm>
#include <cmath>
#include <new>

#include "lib/core/guard.h"
#include "lib/api/kernel_choice.h"
#include "lib/api/positions.h"
#include "lib/api/rope_prepare.h"
#include "lib/api/targets_internal.h"
#include "lib/api/tensor_checks.h"
#include "lib/freqs/inv_freq.h"
#include "lib/core/rope_plan.h"
#include "lib/parallel/split.h"
#include "posenc/rope.h"

namespace posenc {

Status ApplyRope(const RopeTensors& tensors, const RopeParams& params) {
  return api::Guarded("posenc::ApplyRope", [&] {
    const Status& env = api::EnsureTargetsInitialized();
    if (!env.ok()) return env;
    api::PreparedRope prep;
    Status st = api::PrepareRope(tensors, params, &prep);
    if (!st.ok()) return st;
    const kernels::RopePlan& plan = prep.plan;
    int64_t bytes_per_token = 0;
    const int64_t element_bytes = static_cast<int64_t>(DTypeSize(plan.dtype));
    for (int i = 0; i < plan.num_io; ++i) {
      bytes_per_token += 2 * plan.io[i].heads * plan.head_dim * element_bytes;  // read + write
    }
    // M-RoPE with multi-stream ids, else plain RoPE.
    const kernels::KernelOp op =
        plan.num_streams > 1 ? kernels::KernelOp::kMRope : kernels::KernelOp::kRope;
    kernels::RowKernel<kernels::RopePlan> rows = nullptr;
    st = api::ChooseKernel(op, plan.dtype, &rows);
    if (!st.ok()) return st;
    parallel::ForEachToken(plan, bytes_per_token, params.exec, rows);
    return Status::Ok();
  });
}

Status RopeTable::Create(int64_t rotary_dim, const Frequencies& freqs, int64_t max_positions,
                         std::shared_ptr<const RopeTable>* out) {
  try {
    const Status& env = api::EnsureTargetsInitialized();
    if (!env.ok()) return env;
    if (out == nullptr) return Status(StatusCode::kInvalidArgument, "out is null");
    if (rotary_dim <= 0 || rotary_dim % 2 != 0) {
      return api::Err(StatusCode::kInvalidArgument, "rotary_dim = ", rotary_dim,
                      ": must be even and > 0");
    }
    Status st = api::CheckFrequencies(freqs, rotary_dim);
    if (!st.ok()) return st;
    const int64_t half = rotary_dim / 2;
    int64_t elements;
    if (max_positions <= 0 || __builtin_mul_overflow(max_positions, half, &elements) ||
        elements > api::kMaxTableElements) {
      return api::Err(StatusCode::kInvalidArgument, "max_positions = ", max_positions,
                      ": must be > 0 and max_positions * rotary_dim / 2 <= 2^32");
    }
    std::shared_ptr<RopeTable> table(new RopeTable());
    table->rotary_dim_ = rotary_dim;
    table->max_positions_ = max_positions;
    table->attention_factor_ = freqs.attention_factor;
    table->inv_freq_ = freqs.inv_freq != nullptr
                           ? std::vector<double>(freqs.inv_freq, freqs.inv_freq + half)
                           : freqs::DefaultInvFreq(freqs.base, rotary_dim);
    if (freqs.inv_freq == nullptr &&
        !(st = api::CheckComputedFrequencies(table->inv_freq_, freqs.base)).ok()) {
      return st;
    }
    double max_freq = 0.0;
    for (double f : table->inv_freq_) max_freq = std::max(max_freq, std::fabs(f));
    if (static_cast<double>(max_positions - 1) * max_freq > api::kMaxAngle) {
      return api::Err(StatusCode::kOutOfRange, "max_positions = ", max_positions,
                      ": angle (max_positions - 1) * inv_freq exceeds 2^50");
    }
    table->cos_.resize(static_cast<size_t>(elements));
    table->sin_.resize(static_cast<size_t>(elements));
    RopeTable* t = table.get();
    parallel::ForEachRange(max_positions, 8 * half, Execution{},
                           [t, half](int64_t begin, int64_t end) {
                             kernels::CosSinRows(t->inv_freq_.data(), half, t->attention_factor_,
                                                 begin, end - begin,
                                                 t->cos_.data() + begin * half,
                                                 t->sin_.data() + begin * half);
                           });
    *out = std::move(table);
    return Status::Ok();
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInternal, "out of memory building the RoPE table");
  } catch (...) {
    return Status(StatusCode::kInternal, "unexpected exception in posenc::RopeTable::Create");
  }
}

}  // namespace posenc
