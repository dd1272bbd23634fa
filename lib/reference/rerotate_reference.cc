// posenc::reference::RerotateRope (posenc/shift.h): the oracle of the fused re-rotation. Plain
// scalar double: each side's row in double (a caller cache's values, else m * cos / sin of the
// exact angle through libm), composed as R(to) R(from)^T / m_from^2, one rounding to the output
// type. Validation is RerotateRope's own (api::PrepareRerotate); the factor the from rows carry is
// taken from the parameters, not from the kernels' plan, so a wrong plan does not cancel out.
#include <cmath>
#include <vector>

#include "lib/api/rerotate_prepare.h"
#include "lib/core/guard.h"
#include "lib/core/rerotate_plan.h"
#include "lib/reference/elements.h"
#include "posenc/shift.h"

namespace posenc {
namespace reference {
namespace {

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
  return api::Guarded("posenc::reference::RerotateRope", [&] {
    api::PreparedRerotate prep;
    Status st = api::PrepareRerotate(k, k_out, params, &prep);
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
