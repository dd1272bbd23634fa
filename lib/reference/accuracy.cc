// The accuracy measure shared by the tests, the demo and the benchmarks.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "posenc/half.h"
#include "posenc/rope.h"

namespace posenc {
namespace reference {

double UlpF32(double m) { return UlpOf(DType::kF32, m); }

double UlpOf(DType dtype, double m) {
  // (mantissa bits, minimum normal exponent) of each format.
  const int mant = dtype == DType::kBF16 ? 7 : dtype == DType::kF16 ? 10 : 23;
  const int emin = dtype == DType::kF16 ? -14 : -126;
  m = std::fabs(m);
  if (!(m >= std::ldexp(1.0, emin))) return std::ldexp(1.0, emin - mant);  // subnormal spacing
  return std::ldexp(1.0, std::ilogb(m) - mant);
}

double MaxPairUlpError(const Tensor& out, const Tensor& in, const double* exact,
                       int64_t rotary_dim, PairLayout pairs) {
  auto at = [](const Tensor& t, int64_t b, int64_t s, int64_t h, int64_t j) {
    const int64_t i = b * t.strides[0] + s * t.strides[1] + h * t.strides[2] + j;
    switch (t.dtype) {
      case DType::kBF16: return BF16ToDouble(static_cast<const uint16_t*>(t.data)[i]);
      case DType::kF16: return F16ToDouble(static_cast<const uint16_t*>(t.data)[i]);
      default: return static_cast<double>(static_cast<const float*>(t.data)[i]);
    }
  };
  const int64_t half = rotary_dim / 2;
  // Largest finite value of out's dtype: pairs with 2M above it may overflow (outside the bound).
  const double max_finite = out.dtype == DType::kF16    ? 65504.0
                            : out.dtype == DType::kBF16 ? 0x1.fep+127
                                                        : 0x1.fffffep+127;
  double worst = 0.0;
  const double* e = exact;
  for (int64_t b = 0; b < out.shape[0]; ++b)
    for (int64_t s = 0; s < out.shape[1]; ++s)
      for (int64_t h = 0; h < out.shape[2]; ++h)
        for (int64_t j = 0; j < out.shape[3]; ++j, ++e) {
          const double g = at(out, b, s, h, j);
          const double x = at(in, b, s, h, j);
          if (j >= rotary_dim) {
            if (!(g == x || (std::isnan(g) && std::isnan(x))) || std::signbit(g) != std::signbit(x)) {
              return INFINITY;
            }
            continue;
          }
          const int64_t partner =
              pairs == PairLayout::kInterleaved ? (j ^ 1) : (j < half ? j + half : j - half);
          const double y = at(in, b, s, h, partner);
          const double m = std::max(std::fabs(x), std::fabs(y));
          if (!std::isfinite(x) || !std::isfinite(y) || 2.0 * m > max_finite) continue;
          if (std::isnan(*e)) continue;
          if (std::isnan(g)) return INFINITY;
          worst = std::max(worst, std::fabs(g - *e) / UlpOf(out.dtype, m));
        }
  return worst;
}

}  // namespace reference
}  // namespace posenc
