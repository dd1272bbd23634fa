// posenc::RerotateRope (posenc/shift.h): validation of both sides (positions, frequencies, cos/sin
// source) with PrepareRope, then the fused kernels; and its double reference.
#include <cmath>
#include <string>
#include <vector>

#include "lib/api/guard.h"
#include "lib/api/rope_prepare.h"
#include "lib/api/targets_internal.h"
#include "lib/api/tensor_checks.h"
#include "lib/kernels/rerotate_plan.h"
#include "lib/parallel/split.h"
#include "lib/reference/elements.h"
#include "posenc/shift.h"

namespace posenc {
namespace {

Status Prefixed(const char* prefix, const Status& st) {
  return st.ok() ? st : Status(st.code(), prefix + st.message());
}

// Both sides prepared (each validated exactly as ApplyRope validates it) and the plan.
struct PreparedRerotate {
  api::PreparedRope from, to;
  kernels::RerotatePlan plan;
};

Status Prepare(const Tensor& k, const Tensor& k_out, const RerotateParams& rp,
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

// Side `prep`'s row of token (b, s) in double, as the reference sees it: a caller cache's values,
// else m * cos / sin of the exact angle with the side's (or its table's) frequencies and factor.
void SideRow(const api::PreparedRope& prep, int64_t b, int64_t s, std::vector<double>* cos,
             std::vector<double>* sin) {
  const kernels::RopePlan& plan = prep.plan;
  const int64_t half = plan.rotary_dim / 2;
  const int64_t t = b * plan.seq + s;
  for (int64_t i = 0; i < half; ++i) {
    if (prep.caller_cache) {
      const int64_t row = plan.source == kernels::RowSource::kPerToken
                              ? t
                              : kernels::PositionOf(plan.positions, b, s, plan.seq);
      (*cos)[i] = reference::ReadElement(plan.cos_rows, plan.cache_dtype, row * half + i);
      (*sin)[i] = reference::ReadElement(plan.sin_rows, plan.cache_dtype, row * half + i);
    } else {
      const double theta =
          static_cast<double>(kernels::PositionOf(plan.positions, b, s, plan.seq)) *
          prep.inv_freq[i];
      (*cos)[i] = prep.attention_factor * std::cos(theta);
      (*sin)[i] = prep.attention_factor * std::sin(theta);
    }
  }
}

}  // namespace

Status RerotateRope(const Tensor& k, const Tensor& k_out, const RerotateParams& params) {
  return api::Guarded("posenc::RerotateRope", [&] {
    const Status& env = api::EnsureTargetsInitialized();
    if (!env.ok()) return env;
    PreparedRerotate prep;
    Status st = Prepare(k, k_out, params, &prep);
    if (!st.ok()) return st;
    const kernels::RerotatePlan& plan = prep.plan;
    const int64_t bytes_per_token = 2 * plan.rope.io[0].heads * plan.rope.head_dim *
                                    static_cast<int64_t>(DTypeSize(plan.dtype));
    parallel::ForEachToken(plan, bytes_per_token, params.exec, kernels::RerotateTokensF32,
                           kernels::RerotateTokensBF16, kernels::RerotateTokensF16);
    return Status::Ok();
  });
}

namespace reference {
Status RerotateRope(const Tensor& k, const Tensor& k_out, const RerotateParams& params) {
  return api::Guarded("posenc::reference::RerotateRope", [&] {
    PreparedRerotate prep;
    Status st = Prepare(k, k_out, params, &prep);
    if (!st.ok()) return st;
    const kernels::RerotatePlan& rp = prep.plan;
    const kernels::RopePlan& plan = rp.rope;
    const kernels::HeadsIO& io = plan.io[0];
    const int64_t half = plan.rotary_dim / 2;
    std::vector<double> head(static_cast<size_t>(plan.head_dim));
    std::vector<double> ct(half), st_(half), cf(half), sf(half);
    // The factor the from rows carry, taken from the parameters here (not the kernels' plan).
    const double m_from = params.from_source.kind == CosSinSource::Kind::kTable
                              ? params.from_source.table->attention_factor()
                              : params.from_freqs.attention_factor;
    const double norm = m_from * m_from;
    for (int64_t t = 0; t < plan.tokens(); ++t) {
      const int64_t b = t / plan.seq, s = t % plan.seq;
      SideRow(prep.to, b, s, &ct, &st_);
      SideRow(prep.from, b, s, &cf, &sf);
      for (int64_t h = 0; h < io.heads; ++h) {
        const int64_t in_off = b * io.in_stride[0] + s * io.in_stride[1] + h * io.in_stride[2];
        const int64_t out_off = b * io.out_stride[0] + s * io.out_stride[1] + h * io.out_stride[2];
        for (int64_t j = 0; j < plan.head_dim; ++j)
          head[j] = ReadElement(io.in, plan.dtype, in_off + j);
        for (int64_t i = 0; i < half; ++i) {
          // R(to) R(from)^T / m_from^2: the rotation by a - b times m_to / m_from.
          const double c = (ct[i] * cf[i] + st_[i] * sf[i]) / norm;
          const double sn = (st_[i] * cf[i] - ct[i] * sf[i]) / norm;
          const int64_t ix = plan.interleaved ? 2 * i : i;
          const int64_t iy = plan.interleaved ? 2 * i + 1 : i + half;
          const double x = head[ix], y = head[iy];
          head[ix] = x * c - y * sn;
          head[iy] = x * sn + y * c;
        }
        for (int64_t j = 0; j < plan.head_dim; ++j)
          WriteElement(io.out, plan.dtype, out_off + j, head[j]);
      }
    }
    return Status::Ok();
  });
}
}  // namespace reference

}  // namespace posenc
