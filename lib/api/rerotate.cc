// posenc::RerotateRope (posenc/shift.h): validation of both sides (positions, frequencies, cos/sin
// source) with PrepareRope, then the fused kernels; and its double reference.
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
  if (rp.arithmetic == RotationArithmetic::kFmaChain) {
    return api::Err(StatusCode::kInvalidArgument,
                    "arithmetic = kFmaChain: RerotateRope supports kF64 and kF32");
  }
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
  p.source = rp.from_source;
  Status st = Prefixed("from: ", api::PrepareRope(t, p, &out->from));
  if (!st.ok()) return st;
  p.freqs = rp.to_freqs;
  p.positions = rp.to_positions;
  p.source = rp.to_source;
  if (!(st = Prefixed("to: ", api::PrepareRope(t, p, &out->to))).ok()) return st;
  const kernels::RopePlan& from = out->from.plan;
  const bool exact = from.source == kernels::RowSource::kCompute &&
                     out->to.plan.source == kernels::RowSource::kCompute;
  // The factor the from rows carry: the table's, else from_freqs' (on the fly; a cache holds it
  // by contract, posenc/shift.h).
  const double m_from = rp.from_source.kind == CosSinSource::Kind::kTable
                            ? rp.from_source.table->attention_factor()
                            : rp.from_freqs.attention_factor;
  if (m_from == 0.0 || !std::isfinite(m_from)) {
    return api::Err(StatusCode::kInvalidArgument,
                    rp.from_source.kind == CosSinSource::Kind::kTable
                        ? "from_source.table->attention_factor() = "
                        : "from_freqs.attention_factor = ",
                    m_from, ": the keys cannot be unscaled (must be finite and nonzero)");
  }
  kernels::RerotatePlan& plan = out->plan;
  plan.rope = out->to.plan;
  plan.from_positions = from.positions;
  plan.from_source = from.source;
  plan.from_inv_freq = from.inv_freq;
  plan.from_attention_factor = from.attention_factor;
  plan.from_cos_rows = from.cos_rows;
  plan.from_sin_rows = from.sin_rows;
  plan.from_cache_dtype = from.cache_dtype;
  plan.exact = exact;
  plan.exact_factor = rp.to_freqs.attention_factor / m_from;
  plan.row_scale = 1.0 / (m_from * m_from);
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
