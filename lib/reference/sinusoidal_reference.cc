// posenc::reference sinusoidal encodings: scalar loops in double (libm sin/cos of the double
// angle (p + offset) * w_i); a table source is read as given. The frequencies w_i are the
// reference's own (SinusoidalFreqs, long double: lib/reference/freqs_reference.h), not posenc's
// lib/freqs.
#include <cmath>
#include <new>
#include <string>
#include <vector>

#include "lib/core/guard.h"
#include "lib/api/sinusoidal_prepare.h"
#include "lib/core/rope_plan.h"
#include "lib/reference/elements.h"
#include "lib/reference/freqs_reference.h"
#include "posenc/sinusoidal.h"

namespace posenc {
namespace reference {
namespace {

// Calls emit(out_offset, flat_index, value) for every element, one token's values computed
// before any of them is emitted (in-place use is safe).
template <class Emit>
void Run(const SinusoidalParams& params, const kernels::SinusoidalPlan& plan, const Emit& emit) {
  const int64_t d = plan.d_model, half = d / 2;
  std::vector<double> row(static_cast<size_t>(d));
  std::vector<double> w;
  if (plan.table_rows == nullptr) w = SinusoidalFreqs(params.base, d, params.spacing);
  for (int64_t t = 0; t < plan.tokens(); ++t) {
    const int64_t b = t / plan.seq, s = t % plan.seq;
    const int64_t pos = kernels::PositionOf(plan.positions, b, s, plan.seq);
    if (plan.table_rows != nullptr) {
      for (int64_t j = 0; j < d; ++j) row[j] = plan.table_rows[pos * d + j];
    } else {
      const double p = static_cast<double>(pos + plan.position_offset);
      for (int64_t i = 0; i < half; ++i) {
        const double sn = std::sin(p * w[i]), cs = std::cos(p * w[i]);
        switch (plan.layout) {
          case SinusoidalLayout::kInterleaved: row[2 * i] = sn; row[2 * i + 1] = cs; break;
          case SinusoidalLayout::kConcatSinCos: row[i] = sn; row[half + i] = cs; break;
          case SinusoidalLayout::kConcatCosSin: row[i] = cs; row[half + i] = sn; break;
        }
      }
    }
    if (plan.add) {
      const int64_t x_off = b * plan.x_stride[0] + s * plan.x_stride[1];
      for (int64_t j = 0; j < d; ++j) row[j] += ReadElement(plan.x, plan.dtype, x_off + j) * plan.x_scale;
    }
    const int64_t out_off = b * plan.out_stride[0] + s * plan.out_stride[1];
    for (int64_t j = 0; j < d; ++j) emit(out_off + j, t * d + j, row[j]);
  }
}

Status RunF32(const SinusoidalParams& params, const EmbeddingView* x, const EmbeddingView& out) {
  return api::Guarded("posenc::reference sinusoidal", [&] {
    api::PreparedSinusoidal prep;
    Status st = api::PrepareSinusoidal(params, x, out, &prep);
    if (!st.ok()) return st;
    const kernels::SinusoidalPlan& plan = prep.plan;
    Run(params, plan, [&plan](int64_t off, int64_t, double v) { WriteElement(plan.out, plan.dtype, off, v); });
    return Status::Ok();
  });
}

Status RunF64(const SinusoidalParams& params, const EmbeddingView* x, const EmbeddingView& out,
              double* dst) {
  return api::Guarded("posenc::reference sinusoidal", [&] {
    api::PreparedSinusoidal prep;
    Status st = api::PrepareSinusoidal(params, x, out, &prep);
    if (!st.ok()) return st;
    Run(params, prep.plan, [dst](int64_t, int64_t flat, double v) { dst[flat] = v; });
    return Status::Ok();
  });
}

}  // namespace

Status WriteSinusoidal(const SinusoidalParams& params, const EmbeddingView& out) {
  return RunF32(params, nullptr, out);
}

Status AddSinusoidal(const SinusoidalParams& params, const EmbeddingView& x,
                     const EmbeddingView* out) {
  return RunF32(params, &x, out != nullptr ? *out : x);
}

Status WriteSinusoidalF64(const SinusoidalParams& params, const EmbeddingView& shape, double* out) {
  return RunF64(params, nullptr, shape, out);
}

Status AddSinusoidalF64(const SinusoidalParams& params, const EmbeddingView& x, double* out) {
  return RunF64(params, &x, x, out);
}

}  // namespace reference
}  // namespace posenc
