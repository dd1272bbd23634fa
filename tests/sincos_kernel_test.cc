// The angle engine (lib/kernels/sincos-inl.h) on every SIMD target, called directly: CosSinF64 on
// full vectors and CosSinRow (vector body and 1-lane tail, with an attention factor) against
// std::cos / std::sin in long double (x86: 64-bit significand; aarch64: binary128), in the style
// of Highway's hwy/contrib/math/math_test-inl.h: the angle range is swept in bit space (a stride
// through the double bit patterns, so every binade gets its share), both signs, +-0, subnormals,
// and angles within a few ulp of multiples of pi/2 and of the quadrant boundaries (k + 1/2) pi/2.
//
// Bounds (docs/math.md section 7, "The angle engine"):
//   |theta| <  2^29: |CosSinF64 - exact| <= 2^-52 (the engine term of the proof in
//                    lib/kernels/rope-inl.h); CosSinRow's f32 output is within
//                    0.5 ulp_f32(exact) + 2^-52 of m * exact, |m| <= 1.
//   2^29 <= |theta| <= 2^50 (the largest angle lib/api accepts): the reduction's first product
//                    k * pi/2[0] is no longer exact; |CosSinF64 - exact| <= ulp(theta) + 2^-52.
// The oracle is computed once (it does not depend on the target) and each target reports the
// largest errors it saw (stdout, "sincos <target> ...").
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "hwy/aligned_allocator.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/sincos_kernel_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"
#include "lib/kernels/sincos-inl.h"

#ifndef POSENC_TESTS_SINCOS_ORACLE_ONCE_
#define POSENC_TESTS_SINCOS_ORACLE_ONCE_
namespace posenc {
namespace test {

inline double FromBits64(uint64_t u) {
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}
inline uint64_t Bits64(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

// Non-negative angles and their exact cos / sin; the engine is also run on -theta (oracle
// cos(-t) = cos t, sin(-t) = -sin t, exact in long double).
struct SinCosOracle {
  std::vector<double> theta;
  std::vector<long double> cos, sin;
};

constexpr double kReducedLimit = 536870912.0;         // 2^29: exact reduction below
constexpr double kAcceptedLimit = 1125899906842624.0;  // 2^50: lib/api rejects larger angles

// Every `stride`-th double bit pattern in [lo, hi) (the stride is odd, so the low significand
// bits vary too), plus hi's predecessor.
inline void SweepBits(double lo, double hi, uint64_t samples, std::vector<double>& out) {
  const uint64_t a = Bits64(lo), b = Bits64(hi);
  const uint64_t stride = ((b - a) / samples) | 1;
  for (uint64_t u = a; u < b; u += stride) out.push_back(FromBits64(u));
  out.push_back(FromBits64(b - 1));
}

// The doubles nearest to (k + offset) * pi/2 and `ulps` neighbours on each side, for the
// multipliers k in ks (long double product: its error, k * 2^-64 relative, is far below the
// spacing of doubles here, so the centre is the nearest double or next to it).
inline void NearMultiples(const std::vector<double>& ks, double offset, int ulps,
                          double limit, std::vector<double>& out) {
  const long double half_pi = 1.5707963267948966192313216916397514L;
  for (double k : ks) {
    const double centre = static_cast<double>((static_cast<long double>(k) + offset) * half_pi);
    if (!(centre < limit)) continue;
    double lo = centre, hi = centre;
    out.push_back(centre);
    for (int i = 0; i < ulps; ++i) {
      lo = std::nextafter(lo, 0.0);
      hi = std::nextafter(hi, limit);
      out.push_back(lo);
      if (hi < limit) out.push_back(hi);
    }
  }
}

// Multipliers 1..dense and `logspaced` more, geometrically spaced up to kmax.
inline std::vector<double> Multipliers(int dense, int logspaced, double kmax) {
  std::vector<double> ks;
  for (int k = 1; k <= dense; ++k) ks.push_back(k);
  const double ratio = std::pow(kmax / dense, 1.0 / logspaced);
  double k = dense;
  for (int i = 0; i < logspaced; ++i) {
    k *= ratio;
    ks.push_back(std::floor(k));
  }
  return ks;
}

inline void FillOracle(SinCosOracle& o) {
  o.theta.reserve(size_t{1} << 21);
  o.cos.reserve(size_t{1} << 21);
  o.sin.reserve(size_t{1} << 21);
  std::vector<double>& t = o.theta;
  t.push_back(0.0);
  t.push_back(std::numeric_limits<double>::denorm_min());
  t.push_back(std::numeric_limits<double>::min());
  t.push_back(std::nextafter(kReducedLimit, 0.0));
  t.push_back(kAcceptedLimit);
  // Every binade from the subnormals up to 2^29, then a denser sweep where the values matter.
  SweepBits(std::numeric_limits<double>::denorm_min(), kReducedLimit, 300000, t);
  SweepBits(std::ldexp(1.0, -30), kReducedLimit, 800000, t);
  // Where the reduced argument is smallest (k pi/2) and where k's rounding flips (k + 1/2).
  const double kmax = kReducedLimit / 1.5707963267948966;
  const std::vector<double> ks = Multipliers(20000, 20000, kmax);
  NearMultiples(ks, 0.0, 3, kReducedLimit, t);
  NearMultiples(ks, 0.5, 2, kReducedLimit, t);
  // Beyond the exact reduction, up to the largest accepted angle.
  SweepBits(kReducedLimit, kAcceptedLimit, 200000, t);
  NearMultiples(Multipliers(1, 5000, kAcceptedLimit / 1.5707963267948966), 0.0, 3,
                kAcceptedLimit, t);
  o.cos.resize(t.size());
  o.sin.resize(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    const long double x = t[i];
    o.cos[i] = std::cos(x);
    o.sin[i] = std::sin(x);
  }
}

inline const SinCosOracle& Oracle() {
  static const SinCosOracle* oracle = [] {
    auto* o = new SinCosOracle;
    FillOracle(*o);
    return o;
  }();
  return *oracle;
}

// ulp of f32 at |v| (2^-149 in the subnormal range).
inline long double UlpF32(long double v) {
  const long double a = std::fabs(v);
  if (a < std::ldexp(1.0L, -126)) return std::ldexp(1.0L, -149);
  int e;
  std::frexp(a, &e);  // a in [2^(e-1), 2^e)
  return std::ldexp(1.0L, e - 1 - 23);
}
// ulp of double at theta >= 2^-1022.
inline double UlpF64(double theta) {
  int e;
  std::frexp(std::fabs(theta), &e);
  return std::ldexp(1.0, e - 1 - 52);
}

// The bound on |CosSinF64 - exact| for the angle theta (file comment).
inline long double EngineBound(double theta) {
  const long double base = std::ldexp(1.0L, -52);
  return std::fabs(theta) < kReducedLimit ? base : base + UlpF64(theta);
}

}  // namespace test
}  // namespace posenc
#endif  // POSENC_TESTS_SINCOS_ORACLE_ONCE_

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The largest |result - exact| seen, in units of 2^-53 (half a double ulp at 1), split by range.
struct EngineErrors {
  long double reduced = 0, beyond = 0;
  void Add(double theta, long double err) {
    long double& slot = std::fabs(theta) < test::kReducedLimit ? reduced : beyond;
    slot = std::max(slot, std::ldexp(err, 53));
  }
};

HWY_NOINLINE void TestCosSinF64Sweep() {
  const test::SinCosOracle& o = test::Oracle();
  const hn::ScalableTag<double> d;
  const size_t N = hn::Lanes(d);
  auto theta = hwy::AllocateAligned<double>(N);
  auto c = hwy::AllocateAligned<double>(N);
  auto s = hwy::AllocateAligned<double>(N);
  EngineErrors err;
  long double beyond_ratio = 0;  // largest error / EngineBound beyond 2^29
  size_t failures = 0;
  for (int sign = 1; sign >= -1; sign -= 2) {
    for (size_t i0 = 0; i0 < o.theta.size(); i0 += N) {
      const size_t n = std::min(N, o.theta.size() - i0);
      for (size_t j = 0; j < N; ++j) theta[j] = sign * o.theta[i0 + std::min(j, n - 1)];
      hn::Vec<decltype(d)> vc, vs;
      CosSinF64(d, hn::Load(d, theta.get()), vc, vs);
      hn::Store(vc, d, c.get());
      hn::Store(vs, d, s.get());
      for (size_t j = 0; j < n; ++j) {
        const long double want_c = o.cos[i0 + j], want_s = sign * o.sin[i0 + j];
        const long double ec = std::fabs(c[j] - want_c), es = std::fabs(s[j] - want_s);
        const long double bound = test::EngineBound(theta[j]);
        err.Add(theta[j], std::max(ec, es));
        if (std::fabs(theta[j]) >= test::kReducedLimit) {
          beyond_ratio = std::max(beyond_ratio, std::max(ec, es) / bound);
        }
        if ((ec > bound || es > bound) && ++failures <= 10) {
          ADD_FAILURE() << "theta " << theta[j] << " (bits 0x" << std::hex
                        << test::Bits64(theta[j]) << std::dec << "): cos " << c[j] << " vs "
                        << static_cast<double>(want_c) << ", sin " << s[j] << " vs "
                        << static_cast<double>(want_s) << ", errors " << static_cast<double>(ec)
                        << ", " << static_cast<double>(es) << " > bound "
                        << static_cast<double>(bound);
        }
      }
    }
  }
  EXPECT_EQ(failures, 0u);
  std::printf("sincos %s CosSinF64: %zu angles x 2 signs; max |err| %.3Lf * 2^-53 below 2^29, "
              "%.4Lg * 2^-53 in [2^29, 2^50] (%.3Lf of ulp(theta) + 2^-52)\n",
              hwy::TargetName(HWY_TARGET), o.theta.size(), err.reduced, err.beyond,
              beyond_ratio);
}

// CosSinRow over rows of inv_freq = theta (pos = 1: the double product is theta itself), row
// lengths that leave every tail length, with attention factors 1, 0.5, 0.3 and -1.
HWY_NOINLINE void TestCosSinRowSweep() {
  const test::SinCosOracle& o = test::Oracle();
  const hn::ScalableTag<double> d;
  const size_t N = hn::Lanes(d);
  const double kFactors[] = {1.0, 0.5, 0.3, -1.0};
  const size_t kMaxRow = 67;
  auto freq = hwy::AllocateAligned<double>(kMaxRow + 1);
  auto cos = hwy::AllocateAligned<float>(kMaxRow + 1);
  auto sin = hwy::AllocateAligned<float>(kMaxRow + 1);
  long double max_ulp = 0;  // largest |out - m exact| / ulp_f32(m exact), below 2^29
  size_t failures = 0, checked = 0;
  for (double m : kFactors) {
    // Factor 1 runs every reduced angle; the others every 7th row, to bound the runtime.
    size_t row = 0;
    for (size_t i0 = 0; i0 < o.theta.size(); ++row) {
      const size_t len = std::min(1 + (row * 5) % kMaxRow, o.theta.size() - i0);
      const bool run = m == 1.0 || row % 7 == 0;
      const size_t misalign = row % 2;  // odd element offset: rows not vector-aligned
      if (run) {
        const double sign = (row % 3 == 0) ? -1.0 : 1.0;
        for (size_t j = 0; j < len; ++j) freq[misalign + j] = sign * o.theta[i0 + j];
        CosSinRow(1.0, freq.get() + misalign, len, m, cos.get() + misalign, sin.get() + misalign);
        for (size_t j = 0; j < len; ++j) {
          const double t = freq[misalign + j];
          if (!(std::fabs(t) < test::kReducedLimit)) continue;
          const long double want_c = m * o.cos[i0 + j], want_s = m * sign * o.sin[i0 + j];
          const float got_c = cos[misalign + j], got_s = sin[misalign + j];
          const long double ec = std::fabs(got_c - want_c), es = std::fabs(got_s - want_s);
          const long double bc = 0.5L * test::UlpF32(want_c) + std::ldexp(1.0L, -52);
          const long double bs = 0.5L * test::UlpF32(want_s) + std::ldexp(1.0L, -52);
          max_ulp = std::max({max_ulp, ec / test::UlpF32(want_c), es / test::UlpF32(want_s)});
          ++checked;
          if ((ec > bc || es > bs) && ++failures <= 10) {
            ADD_FAILURE() << "m " << m << " theta " << t << " row length " << len << " lane " << j
                          << " (N " << N << "): cos " << got_c << " vs "
                          << static_cast<double>(want_c) << ", sin " << got_s << " vs "
                          << static_cast<double>(want_s);
          }
        }
      }
      i0 += len;
    }
  }
  EXPECT_EQ(failures, 0u);
  EXPECT_GT(checked, o.theta.size());
  std::printf("sincos %s CosSinRow: %zu outputs checked; max |err| %.9Lf ulp_f32 (bound 0.5 + "
              "2^-52 abs)\n", hwy::TargetName(HWY_TARGET), 2 * checked, max_ulp);
}

// Exact special values: cos/sin of +-0 and of subnormal angles, on every lane.
HWY_NOINLINE void TestCosSinSpecialValues() {
  const hn::ScalableTag<double> d;
  const size_t N = hn::Lanes(d);
  auto c = hwy::AllocateAligned<double>(N);
  auto s = hwy::AllocateAligned<double>(N);
  const double kTiny[] = {0.0, -0.0, std::numeric_limits<double>::denorm_min(),
                          -std::numeric_limits<double>::min(), 1e-300, -3e-200};
  for (double t : kTiny) {
    hn::Vec<decltype(d)> vc, vs;
    CosSinF64(d, hn::Set(d, t), vc, vs);
    hn::Store(vc, d, c.get());
    hn::Store(vs, d, s.get());
    for (size_t j = 0; j < N; ++j) {
      EXPECT_EQ(c[j], 1.0) << t;
      EXPECT_EQ(s[j], t) << t;  // sin(t) = t exactly for |t| < 2^-27 (r^3 term vanishes)
      // The sign of a zero is not part of the contract: sin(-0) comes out +0 (k = +0, and
      // -0 + (+0) = +0 in the polynomial), on every target alike.
      if (t != 0.0) {
        EXPECT_EQ(std::signbit(s[j]), std::signbit(t)) << t;
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(SinCosKernelTest);
HWY_EXPORT_AND_TEST_P(SinCosKernelTest, TestCosSinF64Sweep);
HWY_EXPORT_AND_TEST_P(SinCosKernelTest, TestCosSinRowSweep);
HWY_EXPORT_AND_TEST_P(SinCosKernelTest, TestCosSinSpecialValues);
}  // namespace posenc
#endif
