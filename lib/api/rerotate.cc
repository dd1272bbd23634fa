// posenc::RerotateRope (posenc/shift.h): validation of both rotations with PrepareRope, then the
// fused kernels; and its double reference.
#include <cmath>
#include <string>
#include <vector>

#include "lib/core/guard.h"
#include "lib/api/kernel_choice.h"
#include "lib/api/rerotate_prepare.h"
#include "lib/api/rope_prepare.h"
#include "lib/api/targets_internal.h"
#include "lib/api/tensor_checks.h"
#include "lib/core/rerotate_plan.h"
#include "lib/parallel/split.h"
#include "posenc/shift.h"

namespace posenc {
namespace {

Status Prefixed(const char* prefix, const Status& st) {
  return st.ok() ? st : Status(st.code(), prefix + st.message());
}

}  // namespace

Status api::PrepareRerotate(const Tensor& k, const Tensor& k_out, const RerotateParams& rp,
                            PreparedRerotate* out) {
  RopeTensors t;
  t.k = k;
  t.k_out = k_out;
  RopeParams p;
  p.pairs = rp.pairs == PairLayout::kFromConfig ? PairLayout::kHalf : rp.pairs;
  p.arithmetic = rp.arithmetic;
  p.rotary_dim = rp.rotary_dim;
  p.exec = rp.exec;
  p.freqs = rp.from_freqs;
  p.positions = rp.from_positions;
  Status st = Prefixed("from: ", api::PrepareRope(t, p, &out->from));
  if (!st.ok()) return st;
  p.freqs = rp.to_freqs;
  p.positions = rp.to_positions;
  if (!(st = Prefixed("to: ", api::PrepareRope(t, p, &out->to))).ok()) return st;
  const double m_from = rp.from_freqs.attention_factor, m_to = rp.to_freqs.attention_factor;
  if (m_from == 0.0) {
    return api::Err(StatusCode::kInvalidArgument,
                    "from_freqs.attention_factor = 0: the keys cannot be unscaled");
  }
  kernels::RerotatePlan& plan = out->plan;
  plan.rope = out->to.plan;
  plan.rope.attention_factor = m_to / m_from;
  plan.from_positions = out->from.plan.positions;
  plan.from_inv_freq = out->from.plan.inv_freq;
  plan.dtype = plan.rope.dtype;
  return Status::Ok();
}

Status RerotateRope(const Tensor& k, const Tensor& k_out, const RerotateParams& params) {
  return api::Guarded("posenc::RerotateRope", [&] {
    const Status& env = api::EnsureTargetsInitialized();
    if (!env.ok()) return env;
    api::PreparedRerotate prep;
    Status st = api::PrepareRerotate(k, k_out, params, &prep);
    if (!st.ok()) return st;
    const kernels::RerotatePlan& plan = prep.plan;
    const int64_t bytes_per_token = 2 * plan.rope.io[0].heads * plan.rope.head_dim *
                                    static_cast<int64_t>(DTypeSize(plan.dtype));
    kernels::RowKernel<kernels::RerotatePlan> rows = nullptr;
    st = api::ChooseKernel(kernels::KernelOp::kRerotate, plan.dtype, &rows);
    if (!st.ok()) return st;
    parallel::ForEachToken(plan, bytes_per_token, params.exec, rows);
    return Status::Ok();
  });
}

}  // namespace posenc
