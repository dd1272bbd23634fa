// test::SinusoidalFrequencyTerm: how far posenc's own sinusoidal frequencies may move an entry
// from posenc::reference's, for the write / add checks of the tester and the fuzz harness.
#ifndef POSENC_TESTS_SINUSOIDAL_FREQUENCY_TERM_H_
#define POSENC_TESTS_SINUSOIDAL_FREQUENCY_TERM_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "posenc/sinusoidal.h"

namespace posenc {
namespace test {

// The reference computes its own frequencies (long double libm, one rounding to double) and
// posenc its own (lib/freqs, correctly rounded except near ties): they agree within 4 double ulps
// (docs/math.md section 3; tests/reference_freqs_test.cc), not always bit for bit (base 10000,
// t2t, d 1030, i 62: the exact w is 0.49997 ulp from posenc's and 0.50003 from the
// reference's). So the two double angles fl(a w) differ by up to |a| 4 ulp(w) plus the two
// products' roundings, <= 5 * 2^-52 |a| w, and sin / cos by no more than their angles. w here is
// libm's estimate of w_i (its magnitude is all the bound needs; the factor covers its error).
// angle_pos: the entry's position plus params.position_offset; j: the entry's column of d.
inline double SinusoidalFrequencyTerm(const SinusoidalParams& p, int64_t d, int64_t j,
                                      double angle_pos) {
  const int64_t half = d / 2;
  const double i = static_cast<double>(
      p.layout == SinusoidalLayout::kInterleaved ? j / 2 : half > 0 ? j % half : 0);
  const double w =
      p.spacing == FrequencySpacing::kPaper
          ? std::pow(p.base, -2.0 * i / static_cast<double>(d))
          : std::exp(-i * std::log(p.base) / static_cast<double>(std::max<int64_t>(half - 1, 1)));
  return std::ldexp(5.0 * std::fabs(angle_pos) * w * (1.0 + std::ldexp(1.0, -30)), -52);
}

}  // namespace test
}  // namespace posenc

#endif  // POSENC_TESTS_SINUSOIDAL_FREQUENCY_TERM_H_
