// MulAddExact and NegMulAddExact (lib/kernels/exact_fma-inl.h) on every SIMD target, called
// directly: the same bits as std::fmaf (one rounding to nearest even; fmaf(-a, b, c) for the
// second) for every lane of full vectors, on triples chosen
// where a second rounding shows: random bit patterns over the whole f32 range, products
// cancelled by c (c = -RN(a * b), so the result is the product's rounding error), results at
// f32 ulp midpoints and next to them, subnormal results and operands, the overflow threshold,
// signed zeros, infinities and NaN. A Mul then Add (Highway's MulAdd on SSE4, SSSE3, EMU128,
// SCALAR) fails it, and so does the emulation without its round-to-odd step (double rounding).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "hwy/aligned_allocator.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/exact_fma_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"
#include "lib/kernels/exact_fma-inl.h"

#ifndef POSENC_TESTS_EXACT_FMA_CASES_ONCE_
#define POSENC_TESTS_EXACT_FMA_CASES_ONCE_
namespace posenc {
namespace test {

inline float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

struct Triples {
  std::vector<float> a, b, c;
  void Add(float x, float y, float z) {
    a.push_back(x);
    b.push_back(y);
    c.push_back(z);
  }
};

// The cases of the file comment; the same for every target.
inline const Triples& Cases() {
  static const Triples t = [] {
    Triples t;
    std::mt19937 rng(20261207);
    std::uniform_int_distribution<uint32_t> bits;
    std::uniform_int_distribution<int> exponent(-70, 60);
    std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
    auto random_normal = [&](int lo, int hi) {
      const float m = std::ldexp(mantissa(rng), std::uniform_int_distribution<int>(lo, hi)(rng));
      return (bits(rng) & 1) ? -m : m;
    };
    for (int i = 0; i < 200000; ++i) {  // any bit patterns (NaN, Inf, subnormals among them)
      t.Add(FromBits(bits(rng)), FromBits(bits(rng)), FromBits(bits(rng)));
    }
    for (int i = 0; i < 200000; ++i) {  // comparable magnitudes: sums that round
      t.Add(random_normal(-20, 20), random_normal(-20, 20), random_normal(-40, 40));
    }
    for (int i = 0; i < 200000; ++i) {  // c cancels the product: the result is its error
      const float a = random_normal(-60, 60), b = random_normal(-60, 60);
      const float p = a * b;
      t.Add(a, b, -p);
      t.Add(a, b, -std::nextafter(p, 0.0f));  // and one ulp beside it
    }
    for (int i = 0; i < 200000; ++i) {
      // a * b + c at or next to an f32 midpoint: a, b of 12 significant bits (exact product of
      // <= 24 bits, here made half an ulp of c off an f32 number), c a 24-bit number, plus a
      // tiny third term through the product's low bits so that double rounding would matter.
      const int e = exponent(rng);
      const float c = std::ldexp(mantissa(rng), e);
      const float half_ulp = std::ldexp(1.0f, e - 24);
      const float a = std::ldexp(static_cast<float>(2049 + (bits(rng) % 2046)), -11);
      const float b = half_ulp / a;  // inexact in general: the product lands near the midpoint
      t.Add(a, b, c);
      t.Add(-a, b, c);
      t.Add(std::nextafter(a, 4.0f), b, c);
    }
    for (int i = 0; i < 100000; ++i) {  // subnormal results and operands
      t.Add(random_normal(-75, -60), random_normal(-75, -60), random_normal(-150, -120));
      t.Add(FromBits(bits(rng) & 0x807FFFFFu), random_normal(-2, 2), random_normal(-149, -126));
    }
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float max = std::numeric_limits<float>::max();
    const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, inf, -inf, nan, max, -max,
                              std::numeric_limits<float>::min(),
                              std::numeric_limits<float>::denorm_min(), 0x1.fffffep-1f};
    for (float x : specials) {
      for (float y : specials) {
        for (float z : specials) t.Add(x, y, z);
      }
    }
    // The overflow threshold: max + half an ulp rounds to Inf, just below it to max.
    t.Add(max, 1.0f, std::ldexp(1.0f, 103));
    t.Add(max, 1.0f, std::nextafter(std::ldexp(1.0f, 103), 0.0f));
    t.Add(0x1.fffffep+63f, 0x1.0p+64f, std::ldexp(1.0f, 103));
    return t;
  }();
  return t;
}

}  // namespace test
}  // namespace posenc
#endif  // POSENC_TESTS_EXACT_FMA_CASES_ONCE_

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

HWY_NOINLINE void TestMulAddExactIsFmaf() {
  const test::Triples& t = test::Cases();
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t n = t.a.size() / N * N;
  auto out = hwy::AllocateAligned<float>(N);
  size_t mismatches = 0;
  for (size_t i = 0; i < 2 * n; i += N) {  // MulAddExact, then NegMulAddExact (fmaf(-a, b, c))
    const bool neg = i >= n;
    const size_t at = neg ? i - n : i;
    const auto a = hn::LoadU(d, &t.a[at]), b = hn::LoadU(d, &t.b[at]), c = hn::LoadU(d, &t.c[at]);
    hn::Store(neg ? NegMulAddExact(d, a, b, c) : MulAddExact(d, a, b, c), d, out.get());
    for (size_t j = 0; j < N; ++j) {
      const float want = std::fmaf(neg ? -t.a[at + j] : t.a[at + j], t.b[at + j], t.c[at + j]);
      const float got = out[j];
      const bool same = std::isnan(want) ? std::isnan(got) : test::Bits(got) == test::Bits(want);
      if (!same && ++mismatches <= 5) {
        ADD_FAILURE() << hwy::TargetName(HWY_TARGET) << (neg ? ": fma(-" : ": fma(")
                      << std::hexfloat << t.a[at + j] << ", " << t.b[at + j] << ", "
                      << t.c[at + j] << ") = " << want << ", got " << got;
      }
    }
  }
  EXPECT_EQ(mismatches, 0u) << hwy::TargetName(HWY_TARGET) << ", of " << 2 * n << " lanes";
  std::printf("exact_fma %s: %zu lanes, %zu differ from std::fmaf\n", hwy::TargetName(HWY_TARGET),
              2 * n, mismatches);
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(ExactFmaTest);
HWY_EXPORT_AND_TEST_P(ExactFmaTest, TestMulAddExactIsFmaf);
}  // namespace posenc
#endif
