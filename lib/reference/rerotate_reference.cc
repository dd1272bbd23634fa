// posenc::reference::RerotateRope (posenc/shift.h): the oracle of the fused re-rotation. Plain
// scalar double: per pair the angle difference through libm's cos / sin of both angles, one
// rounding to the output type. Validation is RerotateRope's own (api::PrepareRerotate).
#include <cmath>
#include <vector>

#include "lib/api/rerotate_prepare.h"
#include "lib/core/guard.h"
#include "lib/core/rerotate_plan.h"
#include "lib/reference/elements.h"
#include "posenc/shift.h"

namespace posenc {
namespace reference {
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
