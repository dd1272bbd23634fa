// Scalar bf16 / f16 conversions by exponent and mantissa, the oracle for the SIMD conversions.
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "posenc/half.h"

namespace posenc {
namespace reference {
namespace {

// Rounds |v| (finite, >= 0) to a binary format with `mant_bits` stored mantissa bits, minimum
// normal exponent `emin` and maximum exponent `emax`; returns (biased exponent << mant_bits) |
// mantissa, or the Inf pattern on overflow. RNE via std::nearbyint (default rounding mode).
uint32_t RoundMagnitude(double a, int mant_bits, int emin, int emax) {
  const int bias = -emin + 1;
  const uint32_t inf = static_cast<uint32_t>(emax + bias + 1) << mant_bits;
  if (a < std::ldexp(1.0, emin)) {  // subnormal range: spacing 2^(emin - mant_bits)
    return static_cast<uint32_t>(std::nearbyint(std::ldexp(a, mant_bits - emin)));  // may carry
  }
  int e;
  const double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  --e;                                 // a = (2m) * 2^e, 2m in [1, 2)
  double q = std::nearbyint((2.0 * m - 1.0) * std::ldexp(1.0, mant_bits));
  if (q == std::ldexp(1.0, mant_bits)) {
    q = 0;
    ++e;
  }
  if (e > emax) return inf;
  return (static_cast<uint32_t>(e + bias) << mant_bits) | static_cast<uint32_t>(q);
}

double BitsToDouble(uint16_t bits, int mant_bits, int emin, int exp_bits) {
  const int bias = -emin + 1;
  const bool neg = bits >> 15;
  const int exp = (bits >> mant_bits) & ((1 << exp_bits) - 1);
  const int mant = bits & ((1 << mant_bits) - 1);
  double v;
  if (exp == (1 << exp_bits) - 1) {
    v = mant ? NAN : INFINITY;
  } else if (exp == 0) {
    v = std::ldexp(static_cast<double>(mant), emin - mant_bits);
  } else {
    v = std::ldexp(1.0 + std::ldexp(static_cast<double>(mant), -mant_bits), exp - bias);
  }
  return neg ? -v : v;
}

}  // namespace

uint16_t RoundToBF16(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  if (std::isnan(v)) {
    float f = static_cast<float>(v);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return static_cast<uint16_t>((u >> 16) | 0x0040);
  }
  if (std::isinf(v)) return sign | 0x7F80;
  return static_cast<uint16_t>(sign | RoundMagnitude(std::fabs(v), 7, -126, 127));
}

uint16_t RoundToF16(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  if (std::isnan(v)) {  // quiet, top 9 payload bits kept (as F16C does)
    float f = static_cast<float>(v);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return static_cast<uint16_t>(sign | 0x7E00 | ((u >> 13) & 0x3FF));
  }
  if (std::isinf(v)) return sign | 0x7C00;
  return static_cast<uint16_t>(sign | RoundMagnitude(std::fabs(v), 10, -14, 15));
}

double BF16ToDouble(uint16_t bits) { return BitsToDouble(bits, 7, -126, 8); }
double F16ToDouble(uint16_t bits) { return BitsToDouble(bits, 10, -14, 5); }

}  // namespace reference
}  // namespace posenc
