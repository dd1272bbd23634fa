// posenc::reference::RelativeRopeScores: the oracle. Plain scalar loops in double, written from
// the definition with a different algebra than the kernels: per pair
//   (qx kx + qy ky) cos(phi) + (qx ky - qy kx) sin(phi),   phi = f(d) * inv_freq[t] (double),
// cos / sin from libm, the pair and the pass-through sums compensated (Neumaier). Its own error
// is at most 12 * 2^-53 * M per score (docs/rerope.md §5). Frequencies from freqs.base are the
// reference's own (InvFreqFromBase, long double: lib/reference/freqs_reference.h), not posenc's
// lib/freqs; an explicit inv_freq array or a table's are read as given.
#include <cmath>
#include <limits>
#include <vector>

#include "lib/core/guard.h"
#include "lib/api/rerope_prepare.h"
#include "lib/core/rerope_plan.h"
#include "lib/reference/elements.h"
#include "lib/reference/freqs_reference.h"
#include "posenc/rerope.h"

namespace posenc {
namespace reference {
namespace {

// Neumaier's compensated sum.
struct CompensatedSum {
  double sum = 0.0, carry = 0.0;
  void Add(double x) {
    const double t = sum + x;
    carry += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  double value() const { return sum + carry; }
};

// Calls emit(b, h, i, j, value, magnitude) for every score.
template <class Emit>
void Run(const api::PreparedRerope& prep, const RelativeRopeParams& params, const Emit& emit) {
  const kernels::ReropePlan& plan = prep.plan;
  std::vector<double> own;
  const double* inv_freq = prep.inv_freq;
  if (prep.default_freqs != nullptr) {
    own = InvFreqFromBase(params.freqs.base, plan.rotary_dim);
    inv_freq = own.data();
  }
  const int64_t half = plan.rotary_dim / 2, group = plan.heads / plan.kv_heads;
  const double m2 = prep.attention_factor * prep.attention_factor;
  std::vector<double> cos(static_cast<size_t>(half)), sin(static_cast<size_t>(half));
  auto q_at = [&](int64_t b, int64_t i, int64_t h, int64_t e) {
    return ReadElement(plan.q, plan.dtype,
                       b * plan.q_stride[0] + i * plan.q_stride[1] + h * plan.q_stride[2] + e);
  };
  auto k_at = [&](int64_t b, int64_t j, int64_t g, int64_t e) {
    return ReadElement(plan.k, plan.dtype,
                       b * plan.k_stride[0] + j * plan.k_stride[1] + g * plan.k_stride[2] + e);
  };
  for (int64_t b = 0; b < plan.batch; ++b)
    for (int64_t i = 0; i < plan.q_len; ++i)
      for (int64_t j = 0; j < plan.k_len; ++j) {
        const int64_t d = kernels::PositionOf(plan.q_positions, b, i, plan.q_len) -
                          kernels::PositionOf(plan.k_positions, b, j, plan.k_len);
        if (plan.causal && d < 0) {
          for (int64_t h = 0; h < plan.heads; ++h) {
            emit(b, h, i, j, -std::numeric_limits<double>::infinity(), 0.0);
          }
          continue;
        }
        const double f = MappedDistance(plan.map, d);
        for (int64_t t = 0; t < half; ++t) {
          const double phi = f * inv_freq[t];
          cos[t] = std::cos(phi);
          sin[t] = std::sin(phi);
        }
        for (int64_t h = 0; h < plan.heads; ++h) {
          const int64_t g = h / group;
          CompensatedSum rot, pass;
          double mag_rot = 0.0, mag_pass = 0.0;
          for (int64_t t = 0; t < half; ++t) {
            const int64_t ix = plan.interleaved ? 2 * t : t;
            const int64_t iy = plan.interleaved ? 2 * t + 1 : t + half;
            const double qx = q_at(b, i, h, ix), qy = q_at(b, i, h, iy);
            const double kx = k_at(b, j, g, ix), ky = k_at(b, j, g, iy);
            rot.Add((qx * kx + qy * ky) * cos[t] + (qx * ky - qy * kx) * sin[t]);
            mag_rot += (std::fabs(qx) + std::fabs(qy)) * (std::fabs(kx) + std::fabs(ky));
          }
          for (int64_t e = plan.rotary_dim; e < plan.head_dim; ++e) {
            const double qe = q_at(b, i, h, e), ke = k_at(b, j, g, e);
            pass.Add(qe * ke);
            mag_pass += std::fabs(qe * ke);
          }
          const double value = (m2 * rot.value() + pass.value()) * plan.scale;
          emit(b, h, i, j, value, std::fabs(plan.scale) * (m2 * mag_rot + mag_pass));
        }
      }
}

float RoundToF32(double v) {
  if (std::fabs(v) >= 0x1.ffffffp+127) return v > 0 ? HUGE_VALF : -HUGE_VALF;
  return static_cast<float>(v);
}

}  // namespace

double MappedDistance(const DistanceMap& map, int64_t d) {
  if (d >= 0) return kernels::MappedDistance(map, d);
  const int64_t a =
      d == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -d;
  return -kernels::MappedDistance(map, a);
}

double RelativeRopeErrorBound(float score, double magnitude, int64_t head_dim, int64_t rotary_dim) {
  const double c = static_cast<double>(rotary_dim / 16 + (head_dim - rotary_dim) / 8 + 16);
  return 0.5 * UlpF32(score) + c * 0x1p-53 * magnitude;
}

Status RelativeRopeScores(const RelativeRopeTensors& tensors, const RelativeRopeParams& params) {
  return api::Guarded("posenc::reference::RelativeRopeScores", [&] {
    api::PreparedRerope prep;
    Status st = api::PrepareRerope(tensors, params, &prep);
    if (!st.ok()) return st;
    const kernels::ReropePlan& plan = prep.plan;
    Run(prep, params, [&plan](int64_t b, int64_t h, int64_t i, int64_t j, double v, double) {
      plan.scores[b * plan.score_stride[0] + h * plan.score_stride[1] + i * plan.score_stride[2] +
                  j] = RoundToF32(v);
    });
    return Status::Ok();
  });
}

Status RelativeRopeScoresF64(const RelativeRopeTensors& tensors, const RelativeRopeParams& params,
                             double* scores64, double* magnitude64) {
  return api::Guarded("posenc::reference::RelativeRopeScoresF64", [&] {
    if (scores64 == nullptr) return Status(StatusCode::kInvalidArgument, "scores64 is null");
    api::PreparedRerope prep;
    Status st = api::PrepareRerope(tensors, params, &prep);
    if (!st.ok()) return st;
    const kernels::ReropePlan& plan = prep.plan;
    Run(prep, params, [&](int64_t b, int64_t h, int64_t i, int64_t j, double v, double m) {
      const int64_t flat = ((b * plan.heads + h) * plan.q_len + i) * plan.k_len + j;
      scores64[flat] = v;
      if (magnitude64 != nullptr) magnitude64[flat] = m;
    });
    return Status::Ok();
  });
}

}  // namespace reference
}  // namespace posenc
