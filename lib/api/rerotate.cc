// posenc::RerotateRope (posenc/shift.h): validation of both rotations with PrepareRope, then the
// fused kernels; and its double reference.
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
    for (int64_t t = 0; t < plan.tokens(); ++t) {
      const int64_t b = t / plan.seq, s = t % plan.seq;
      const double p_to = static_cast<double>(kernels::PositionOf(plan.positions, b, s, plan.seq));
      const double p_from =
          static_cast<double>(kernels::PositionOf(rp.from_positions, b, s, plan.seq));
      for (int64_t h = 0; h < io.heads; ++h) {
        const int64_t in_off = b * io.in_stride[0] + s * io.in_stride[1] + h * io.in_stride[2];
        const int64_t out_off = b * io.out_stride[0] + s * io.out_stride[1] + h * io.out_stride[2];
        for (int64_t j = 0; j < plan.head_dim; ++j)
          head[j] = ReadElement(io.in, plan.dtype, in_off + j);
        for (int64_t i = 0; i < half; ++i) {
          const double a = p_to * plan.inv_freq[i], bb = p_from * rp.from_inv_freq[i];
          const double c =
              plan.attention_factor * (std::cos(a) * std::cos(bb) + std::sin(a) * std::sin(bb));
          const double sn =
              plan.attention_factor * (std::sin(a) * std::cos(bb) - std::cos(a) * std::sin(bb));
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
