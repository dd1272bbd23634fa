// The accuracy measure shared by the tests, the demo and the benchmarks.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "posenc/rope.h"

namespace posenc {
namespace reference {

double UlpF32(double m) {
  m = std::fabs(m);
  if (!(m >= 1.1754943508222875e-38)) return 1.401298464324817e-45;  // subnormal spacing
  return std::ldexp(1.0, std::ilogb(m) - 23);
}

double MaxPairUlpError(const Tensor& out, const Tensor& in, const double* exact,
                       int64_t rotary_dim, PairLayout pairs) {
  auto at = [](const Tensor& t, int64_t b, int64_t s, int64_t h, int64_t j) {
    return static_cast<const float*>(t.data)[b * t.strides[0] + s * t.strides[1] +
                                             h * t.strides[2] + j];
  };
  const int64_t half = rotary_dim / 2;
  double worst = 0.0;
  const double* e = exact;
  for (int64_t b = 0; b < out.shape[0]; ++b)
    for (int64_t s = 0; s < out.shape[1]; ++s)
      for (int64_t h = 0; h < out.shape[2]; ++h)
        for (int64_t j = 0; j < out.shape[3]; ++j, ++e) {
          const float g = at(out, b, s, h, j);
          const float x = at(in, b, s, h, j);
          if (j >= rotary_dim) {
            if (std::memcmp(&g, &x, sizeof(float)) != 0) return INFINITY;
            continue;
          }
          if (std::isnan(*e)) continue;
          if (std::isnan(g)) return INFINITY;
          const int64_t partner =
              pairs == PairLayout::kInterleaved ? (j ^ 1) : (j < half ? j + half : j - half);
          const float y = at(in, b, s, h, partner);
          const double m = std::max(std::fabs(x), std::fabs(y));
          worst = std::max(worst, std::fabs(static_cast<double>(g) - *e) / UlpF32(m));
        }
  return worst;
}

}  // namespace reference
}  // namespace posenc
