// Internal: exp, log and pow in double that give the same bits on every machine.
//
// libm is not bit-reproducible across platforms: glibc picks FMA or non-FMA variants of pow/exp/
// log at run time on x86 and other libms round differently, and inv_freq = base^(-2i/r) feeds
// every angle. These evaluate in double-double arithmetic (Dekker/Knuth error-free transforms,
// Veltkamp splitting, no FMA; the build passes -ffp-contract=off) and round once, so the result
// is the correctly rounded value except when the exact value lies within ~2^-100 relative of a
// rounding boundary, and is in any case the same on every IEEE-754 machine.
#ifndef POSENC_LIB_FREQS_DET_MATH_H_
#define POSENC_LIB_FREQS_DET_MATH_H_

namespace posenc {
namespace freqs {

// Natural logarithm of finite x > 0 (0, negative, infinite and NaN x: std::log's exact specials).
double DetLog(double x);
// e^x (beyond [-746, 710] and for NaN: 0, +inf or NaN). Defined for every double.
double DetExp(double x);
// base^exponent for finite base > 0 and finite exponent; results beyond the double range are 0 or
// +inf; special operands give std::pow's exactly specified results. Defined for every input.
double DetPow(double base, double exponent);

}  // namespace freqs
}  // namespace posenc

#endif  // POSENC_LIB_FREQS_DET_MATH_H_
