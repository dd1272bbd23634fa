#include "lib/freqs/det_math.h"

#include <cmath>

namespace posenc {
namespace freqs {
namespace {

// An unevaluated sum hi + lo with |lo| <= ulp(hi) / 2.
struct DD {
  double hi, lo;
};

DD TwoSum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

DD QuickTwoSum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}

// Veltkamp split into two 26-bit halves; exact for |a| < 2^996.
void Split(double a, double* hi, double* lo) {
  const double t = 134217729.0 * a;  // 2^27 + 1
  *hi = t - (t - a);
  *lo = a - *hi;
}

DD TwoProd(double a, double b) {
  const double p = a * b;
  double ah, al, bh, bl;
  Split(a, &ah, &al);
  Split(b, &bh, &bl);
  return {p, ((ah * bh - p) + ah * bl + al * bh) + al * bl};
}

DD Add(DD a, DD b) {
  DD s = TwoSum(a.hi, b.hi);
  const DD t = TwoSum(a.lo, b.lo);
  s.lo += t.hi;
  s = QuickTwoSum(s.hi, s.lo);
  s.lo += t.lo;
  return QuickTwoSum(s.hi, s.lo);
}

DD Mul(DD a, DD b) {
  DD p = TwoProd(a.hi, b.hi);
  p.lo += a.hi * b.lo + a.lo * b.hi;
  return QuickTwoSum(p.hi, p.lo);
}

DD Div(DD a, DD b) {
  const double q1 = a.hi / b.hi;
  DD r = Add(a, Mul(b, DD{-q1, 0.0}));
  const double q2 = r.hi / b.hi;
  r = Add(r, Mul(b, DD{-q2, 0.0}));
  const double q3 = r.hi / b.hi;
  return Add(QuickTwoSum(q1, q2), DD{q3, 0.0});
}

// ln 2 to ~107 bits.
constexpr DD kLn2 = {0x1.62e42fefa39efp-1, 0x1.abc9e3b39803fp-56};

constexpr int kLogTerms = 22;  // ln m = 2 s sum_{j<=22} s^(2j)/(2j+1); 0.1716^46 / 47 < 2^-120
constexpr int kExpTerms = 27;  // e^r = sum_{n<=27} r^n / n!; 0.347^28 / 28! < 2^-130

// 1 / (2j + 1) and 1 / n! as double-doubles, computed once (deterministically) on first use.
struct Coefficients {
  DD inv_odd[kLogTerms + 1];
  DD inv_fact[kExpTerms + 1];
};

const Coefficients& Coeffs() {
  static const Coefficients c = [] {
    Coefficients t;
    for (int j = 0; j <= kLogTerms; ++j) t.inv_odd[j] = Div(DD{1.0, 0.0}, DD{2.0 * j + 1.0, 0.0});
    t.inv_fact[0] = DD{1.0, 0.0};
    for (int n = 1; n <= kExpTerms; ++n) t.inv_fact[n] = Div(t.inv_fact[n - 1], DD{static_cast<double>(n), 0.0});
    return t;
  }();
  return c;
}

DD LogDD(double x) {
  int k;
  double m = std::frexp(x, &k);  // x = m * 2^k, m in [0.5, 1)
  if (m < 0.70710678118654752) {  // keep m in [sqrt(1/2), sqrt(2))
    m *= 2.0;
    --k;
  }
  // ln m = 2 atanh(s) = 2 s (1 + s^2/3 + s^4/5 + ...), s = (m - 1) / (m + 1), |s| < 0.1716.
  const DD s = Div(DD{m - 1.0, 0.0}, TwoSum(m, 1.0));  // m - 1 is exact (Sterbenz); m + 1 as a DD
  const DD s2 = Mul(s, s);
  const Coefficients& c = Coeffs();
  DD p = c.inv_odd[kLogTerms];
  for (int j = kLogTerms - 1; j >= 0; --j) p = Add(Mul(p, s2), c.inv_odd[j]);
  return Add(Mul(DD{2.0, 0.0}, Mul(s, p)), Mul(kLn2, DD{static_cast<double>(k), 0.0}));
}

DD ExpDD(DD y) {
  // Beyond [-746, 710] (and for NaN) e^y is 0, +inf or NaN exactly; std::exp returns those
  // special values on every IEEE machine. This also keeps k below in int range (no UB).
  if (!(y.hi > -746.0 && y.hi < 710.0)) return DD{std::exp(y.hi), 0.0};
  // e^y = 2^k e^r, k = round(y / ln 2), |r| <= ln 2 / 2.
  const double k = std::nearbyint(y.hi / kLn2.hi);
  const DD r = Add(y, Mul(kLn2, DD{-k, 0.0}));
  const Coefficients& c = Coeffs();
  DD p = c.inv_fact[kExpTerms];
  for (int n = kExpTerms - 1; n >= 0; --n) p = Add(Mul(p, r), c.inv_fact[n]);
  return DD{std::ldexp(p.hi, static_cast<int>(k)), std::ldexp(p.lo, static_cast<int>(k))};
}

}  // namespace

double DetLog(double x) {
  if (!(x > 0.0 && x <= 1.7976931348623157e308)) return std::log(x);  // 0, < 0, inf, NaN: exact specials
  const DD l = LogDD(x);
  return l.hi + l.lo;
}

double DetExp(double x) {
  const DD e = ExpDD(DD{x, 0.0});
  return e.hi + e.lo;
}

double DetPow(double base, double exponent) {
  // Special operands (0, negative, inf, NaN base or exponent): IEEE's exactly specified results.
  if (!(base > 0.0 && base <= 1.7976931348623157e308 && std::isfinite(exponent))) {
    return std::pow(base, exponent);
  }
  const DD log_base = LogDD(base);
  // |ln(base) * exponent| beyond the range: the result is 0 or +inf (and the double-double
  // product below would overflow its splitting).
  const double approx = log_base.hi * exponent;
  if (!(approx > -746.0 && approx < 710.0)) return approx > 0.0 ? HUGE_VAL : 0.0;
  const DD e = ExpDD(Mul(log_base, DD{exponent, 0.0}));
  return e.hi + e.lo;
}

}  // namespace freqs
}  // namespace posenc
