// The RoPE row kernels (lib/kernels/rope-inl.h) on every SIMD target, called directly on one head:
// RotationRows + RotateHeadT for f32 (kF64 and kF32 arithmetic), bf16 and f16, both pair layouts,
// forward and inverse, every row length 1..40 and longer ones (vector bodies, the 2-vector
// unroll, every tail length), rows and heads at odd element offsets (misaligned), in place and
// out of place, against a scalar oracle written here (long double rotation of the stored values
// by the given f32 cos/sin row, which is exact by definition as for a caller's cache).
// Bound (lib/kernels/rope-inl.h, docs/math.md section 7), for the output o of storage type T of
// a pair with inputs (x, y), M = max(|x|, |y|):
//   |o - X| < B ulp_T(M),  B = 2 (f32, kF64), 3 (f32, kF32), 1 + 3*2^-13 (f16), 1 + 3*2^-16 (bf16).
// Also: the elements past 2 * half are not touched, in place equals out of place bit for bit,
// and f32 streaming stores (where StreamableHead allows them) store the same bits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "hwy/aligned_allocator.h"
#include "hwy/base.h"
#include "posenc/half.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/rope_row_kernel_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"
#include "lib/kernels/rope-inl.h"

#ifndef POSENC_TESTS_ROPE_ROW_ONCE_
#define POSENC_TESTS_ROPE_ROW_ONCE_
namespace posenc {
namespace test {

// Storage type traits: exact value, round-to-nearest-even store, ulp at M.
template <class T>
struct Storage;
template <>
struct Storage<float> {
  static constexpr int kMantissa = 23, kMinExp = -126;
  static double Value(float v) { return v; }
  static float From(double v) { return static_cast<float>(v); }
};
template <>
struct Storage<hwy::bfloat16_t> {
  static constexpr int kMantissa = 7, kMinExp = -126;
  static double Value(hwy::bfloat16_t v) {
    uint16_t b;
    std::memcpy(&b, &v, 2);
    return reference::BF16ToDouble(b);
  }
  static hwy::bfloat16_t From(double v) {
    const uint16_t b = reference::RoundToBF16(v);
    hwy::bfloat16_t t;
    std::memcpy(&t, &b, 2);
    return t;
  }
};
template <>
struct Storage<hwy::float16_t> {
  static constexpr int kMantissa = 10, kMinExp = -14;
  static double Value(hwy::float16_t v) {
    uint16_t b;
    std::memcpy(&b, &v, 2);
    return reference::F16ToDouble(b);
  }
  static hwy::float16_t From(double v) {
    const uint16_t b = reference::RoundToF16(v);
    hwy::float16_t t;
    std::memcpy(&t, &b, 2);
    return t;
  }
};

template <class T>
long double UlpAt(long double m) {
  int e = Storage<T>::kMinExp;
  if (m >= std::ldexp(1.0L, Storage<T>::kMinExp)) {
    std::frexp(m, &e);
    e -= 1;  // m in [2^e, 2^(e+1))
  }
  return std::ldexp(1.0L, e - Storage<T>::kMantissa);
}

// The bound B of the file comment.
template <class T, bool kF64>
long double BoundUlps() {
  if (std::is_same_v<T, float>) return kF64 ? 2.0L : 3.0L;
  return 1.0L + 3.0L * std::ldexp(1.0L, Storage<T>::kMantissa - 23);
}

// One head's inputs: values spread over binades (f32: down to the subnormals; half types within
// their range, 2M below the largest finite value), some zeros and equal pairs.
template <class T>
std::vector<T> HeadValues(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const bool f32 = std::is_same_v<T, float>;
  std::uniform_int_distribution<int> exp(f32 ? -140 : -20, f32 ? 40 : 9);
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) {
    double x = std::ldexp(unit(rng), exp(rng));
    if (rng() % 17 == 0) x = 0.0;
    if (rng() % 13 == 0 && i > 0) x = -Storage<T>::Value(v[i - 1]);
    v[i] = Storage<T>::From(x);
  }
  return v;
}

}  // namespace test
}  // namespace posenc
#endif  // POSENC_TESTS_ROPE_ROW_ONCE_

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class T, bool kF64, bool kInterleaved, bool kInverse>
void CheckRowKernel(std::mt19937& rng, long double& max_ratio) {
  using S = test::Storage<T>;
  using Row = RowOf<T, kF64>;
  std::vector<size_t> halves;
  for (size_t h = 1; h <= 40; ++h) halves.push_back(h);
  for (size_t h : {63, 64, 65, 127, 128, 129, 300}) halves.push_back(h);
  const long double bound = test::BoundUlps<T, kF64>();
  const T kSentinel = S::From(12345.0);
  size_t failures = 0;
  for (size_t half : halves) {
    const size_t n = 2 * half;
    for (size_t offset : {size_t{0}, size_t{1}, size_t{3}}) {
      // The token's f32 cos/sin row (misaligned by `offset` too), from real angles and a factor.
      auto row = hwy::AllocateAligned<float>(2 * half + 8);
      float* cos = row.get() + offset;
      float* sin = cos + half;
      const double m = (offset == 1) ? 0.7 : 1.0;
      std::uniform_real_distribution<double> angle(-1e4, 1e4);
      for (size_t i = 0; i < half; ++i) {
        const double t = angle(rng);
        cos[i] = static_cast<float>(m * std::cos(t));
        sin[i] = static_cast<float>(m * std::sin(t));
      }
      auto scratch = hwy::AllocateAligned<Row>(4 * half);
      const Row* row_cos = nullptr;
      const Row* row_sin = nullptr;
      RotationRows<T, kF64, kInterleaved, kInverse>(cos, sin, half, scratch.get(), row_cos, row_sin);

      const std::vector<T> values = test::HeadValues<T>(n, rng);
      auto in_buf = hwy::AllocateAligned<T>(n + 8);
      auto out_buf = hwy::AllocateAligned<T>(n + 8);
      auto inplace_buf = hwy::AllocateAligned<T>(n + 8);
      T* in = in_buf.get() + offset;
      T* out = out_buf.get() + (offset + 2) % 5;
      T* inplace = inplace_buf.get() + offset;
      for (size_t i = 0; i < n + 2; ++i) out[i] = kSentinel;
      for (size_t i = 0; i < n; ++i) in[i] = inplace[i] = values[i];
      in[n] = inplace[n] = kSentinel;
      RotateHeadT<T, kF64, kInterleaved, kInverse>(in, row_cos, row_sin, half, out);
      RotateHeadT<T, kF64, kInterleaved, kInverse>(inplace, row_cos, row_sin, half, inplace);

      EXPECT_EQ(std::memcmp(&out[n], &kSentinel, sizeof(T)), 0) << "wrote past the head, half " << half;
      EXPECT_EQ(std::memcmp(&inplace[n], &kSentinel, sizeof(T)), 0) << "in place: past the head";
      EXPECT_EQ(std::memcmp(out, inplace, n * sizeof(T)), 0)
          << "in place differs from out of place, half " << half << " offset " << offset;
      for (size_t i = 0; i < half; ++i) {
        const size_t ix = kInterleaved ? 2 * i : i;
        const size_t iy = kInterleaved ? 2 * i + 1 : i + half;
        const long double x = S::Value(in[ix]), y = S::Value(in[iy]);
        const long double c = cos[i], s = kInverse ? -static_cast<long double>(sin[i]) : sin[i];
        const long double want_x = x * c - y * s, want_y = y * c + x * s;
        const long double ulp = test::UlpAt<T>(std::max(std::fabs(x), std::fabs(y)));
        const long double ex = std::fabs(S::Value(out[ix]) - want_x) / ulp;
        const long double ey = std::fabs(S::Value(out[iy]) - want_y) / ulp;
        max_ratio = std::max({max_ratio, ex, ey});
        if (!(ex < bound && ey < bound) && ++failures <= 5) {
          ADD_FAILURE() << "half " << half << " offset " << offset << " pair " << i << ": x " << (double)x
                        << " y " << (double)y << " c " << (double)c << " s " << (double)s
                        << " -> " << S::Value(out[ix]) << ", " << S::Value(out[iy]) << " want "
                        << (double)want_x << ", " << (double)want_y << " (" << (double)ex << ", "
                        << (double)ey << " ulp, bound " << (double)bound << ")";
        }
      }
      if constexpr (std::is_same_v<T, float>) {
        // Streaming stores where the head allows them: the same bits as the plain stores.
        const hn::ScalableTag<std::conditional_t<kF64, double, float>> d;
        const hn::Rebind<float, decltype(d)> df;
        auto stream_buf = hwy::AllocateAligned<float>(n + 8);
        // Aligned to the vector (one store per vector) and 16 bytes past it (one per block).
        for (size_t lead : {0, 4}) {
          float* dst = stream_buf.get() + lead;
          if (!StreamableHead(df, dst, half)) continue;
          RotateHeadT<T, kF64, kInterleaved, kInverse, true>(in, row_cos, row_sin, half, dst);
          FenceStreamingStores();
          EXPECT_EQ(std::memcmp(dst, out, n * sizeof(float)), 0)
              << "streaming stores differ, half " << half << " lead " << lead;
        }
      }
    }
  }
  EXPECT_EQ(failures, 0u);
}

template <class T, bool kF64>
void CheckAllLayouts(const char* name) {
  std::mt19937 rng(1234);
  long double max_ratio = 0;
  for (int round = 0; round < 8; ++round) {  // fresh values, rows and angles each round
    CheckRowKernel<T, kF64, false, false>(rng, max_ratio);
    CheckRowKernel<T, kF64, false, true>(rng, max_ratio);
    CheckRowKernel<T, kF64, true, false>(rng, max_ratio);
    CheckRowKernel<T, kF64, true, true>(rng, max_ratio);
  }
  std::printf("rope rows %s %s: max error %.6Lf ulp_T(M) (bound %.6Lf)\n",
              hwy::TargetName(HWY_TARGET), name, max_ratio, test::BoundUlps<T, kF64>());
}

HWY_NOINLINE void TestRowsF32F64Arithmetic() { CheckAllLayouts<float, true>("f32 kF64"); }
HWY_NOINLINE void TestRowsF32F32Arithmetic() { CheckAllLayouts<float, false>("f32 kF32"); }
HWY_NOINLINE void TestRowsBF16() { CheckAllLayouts<hwy::bfloat16_t, false>("bf16"); }
HWY_NOINLINE void TestRowsF16() { CheckAllLayouts<hwy::float16_t, false>("f16"); }

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(RopeRowKernelTest);
HWY_EXPORT_AND_TEST_P(RopeRowKernelTest, TestRowsF32F64Arithmetic);
HWY_EXPORT_AND_TEST_P(RopeRowKernelTest, TestRowsF32F32Arithmetic);
HWY_EXPORT_AND_TEST_P(RopeRowKernelTest, TestRowsBF16);
HWY_EXPORT_AND_TEST_P(RopeRowKernelTest, TestRowsF16);
}  // namespace posenc
#endif
