// The distance maps of RelativeRopeScores and the deterministic logarithm kLog uses. Plain scalar
// double (compiled once, -ffp-contract=off): only exactly rounded IEEE operations, so f(a) has
// the same bits on every machine, and the kernels and posenc::reference share it.
#include <cmath>

#include "lib/core/distance_map.h"

namespace posenc {
namespace kernels {

double DeterministicLn(double x) {
  // x = m * 2^e with m in [sqrt(1/2), sqrt(2)): ln x = e ln 2 + 2 atanh(s), s = (m - 1) / (m + 1),
  // |s| <= 0.1716. m - 1 is exact (Sterbenz); the series through s^21 leaves < 2^-55 relative.
  int e = 0;
  double m = std::frexp(x, &e);
  if (m < 0.70710678118654752440) {
    m *= 2.0;  // exact
    --e;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double z = s * s;
  // 2 atanh(s) = 2s + s * z * (2/3 + z * (2/5 + ...)): the leading term 2s exact but for s's
  // own rounding (s carries two roundings: the result is within ~2.5 ulp).
  double p = 2.0 / 21.0;
  p = p * z + 2.0 / 19.0;
  p = p * z + 2.0 / 17.0;
  p = p * z + 2.0 / 15.0;
  p = p * z + 2.0 / 13.0;
  p = p * z + 2.0 / 11.0;
  p = p * z + 2.0 / 9.0;
  p = p * z + 2.0 / 7.0;
  p = p * z + 2.0 / 5.0;
  p = p * z + 2.0 / 3.0;
  const double log_m = 2.0 * s + s * (z * p);
  // ln 2 in two parts (fdlibm's): e * kLn2Hi is exact for |e| < 2^20.
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  const double fe = static_cast<double>(e);
  return fe * kLn2Hi + (fe * kLn2Lo + log_m);
}

double MappedDistance(const DistanceMap& map, int64_t a) {
  const double x = static_cast<double>(a);
  if (map.mode == DistanceMode::kExact || a <= map.window) return x;
  const double w = static_cast<double>(map.window);
  switch (map.mode) {
    case DistanceMode::kCap:
      return w;
    case DistanceMode::kLeaky:
      return w + static_cast<double>(a - map.window) / map.leak;
    case DistanceMode::kLog:
      return w * (1.0 + DeterministicLn(x / w));
    default:
      return x;
  }
}

}  // namespace kernels
}  // namespace posenc
