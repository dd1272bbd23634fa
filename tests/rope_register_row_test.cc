// Register-resident rows (lib/kernels/rope-inl.h, RegisterRowTokenHeads) on every SIMD target:
// the heads of one token whose row is V full vectors (V = half / Lanes for the half layout,
// 2 * half / Lanes interleaved), the whole row in registers or (where allowed) in chunks of K
// vectors, must get exactly the bytes RotateHeadT gives each head (the row kernel
// rope_row_kernel_test holds to the long double oracle and its bound; RopeTester drives the same
// path end to end against the double reference), for f32 heads with kF64 and kF32 arithmetic
// and for bf16 and f16 heads (paired bf16 stores; odd chunk sizes take one single step), both
// pair layouts, forward and inverse, 1 and 3 heads, padded and misaligned heads, in place and out
// of place, f32 with and without streaming stores, NaN and Inf inputs (NaN outputs canonical), V
// from 1 to past 2 kMaxRegisterRowVectors (one chunk and several). Every other row (not whole
// vectors; V past kMaxRegisterRowVectors where chunks are not allowed, or with no divisor from 2
// to kMaxRegisterRowVectors) and every target without the path (SCALAR, SVE) must be declined
// with nothing written. Padding between and after heads must stay untouched.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "hwy/aligned_allocator.h"
#include "hwy/base.h"
#include "posenc/half.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/rope_register_row_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"
#include "lib/kernels/rope-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Every byte of every buffer starts as this: padding must keep it.
constexpr unsigned char kSentinelByte = 0x5A;

template <class T>
constexpr DType DTypeOf() {
  if constexpr (std::is_same_v<T, hwy::bfloat16_t>) return DType::kBF16;
  if constexpr (std::is_same_v<T, hwy::float16_t>) return DType::kF16;
  return DType::kF32;
}

// Inputs spread over binades (down to the f32 subnormals), with zeros, rounded to T; sometimes
// one signalling NaN with a payload (it must come out canonical) or an Inf.
template <class T>
void FillHead(T* p, size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> exp(-140, 40);
  std::vector<float> f(n);
  for (size_t i = 0; i < n; ++i) {
    f[i] = (rng() % 17 == 0) ? 0.0f : static_cast<float>(std::ldexp(unit(rng), exp(rng)));
  }
  if (rng() % 8 == 1) f[rng() % n] = -INFINITY;
  ASSERT_TRUE(ConvertFromF32(f.data(), n, DTypeOf<T>(), p).ok());
  if (rng() % 8 == 0) {
    const uint32_t nan32 = 0x7FA00001u;
    const uint16_t nan16 = std::is_same_v<T, hwy::float16_t> ? 0x7D01 : 0x7F81;
    std::memcpy(&p[rng() % n], sizeof(T) == 4 ? static_cast<const void*>(&nan32) : &nan16,
                sizeof(T));
  }
}

// The rows the path must take: V whole vectors with V <= kMaxRegisterRowVectors, or, with
// chunks, a chunk size K in [2, kMaxRegisterRowVectors] dividing V (the contract of
// RegisterRowTokenHeads).
bool ExpectTaken(size_t elements, size_t lanes, bool chunks) {
  if (kMaxRegisterRowVectors == 0 || elements % lanes != 0) return false;
  const size_t V = elements / lanes;
  if (V <= kMaxRegisterRowVectors) return true;
  if (!chunks) return false;
  for (size_t K = 2; K <= kMaxRegisterRowVectors; ++K) {
    if (V % K == 0) return true;
  }
  return false;
}

template <class T>
hwy::AlignedFreeUniquePtr<T[]> SentinelBuffer(size_t n) {
  auto p = hwy::AllocateAligned<T>(n);
  std::memset(static_cast<void*>(p.get()), kSentinelByte, n * sizeof(T));
  return p;
}

// One call of RegisterRowTokenHeads on `heads` heads of 2 * half elements (strides padded by
// `pad`, the first head `lead` elements past an aligned start), against RotateHeadT per head.
template <class T, bool kF64, bool kInterleaved, bool kInverse>
void CheckOneCall(const RowOf<T, kF64>* row_cos, const RowOf<T, kF64>* row_sin, size_t half,
                  bool chunks, bool expect_taken, int64_t heads, size_t pad, size_t lead, int mode,
                  std::mt19937& rng, size_t& taken) {
  const bool in_place = mode == 0, stream = mode == 2;  // out of place: mode 1 and 2
  const int64_t in_stride = static_cast<int64_t>(2 * half + pad);
  const int64_t out_stride = in_place ? in_stride : static_cast<int64_t>(2 * half + (pad + 1) % 4);
  const size_t in_size = lead + heads * in_stride + 4, out_size = lead + heads * out_stride + 4;
  auto in_buf = SentinelBuffer<T>(in_size);
  for (int64_t h = 0; h < heads; ++h) FillHead(in_buf.get() + lead + h * in_stride, 2 * half, rng);
  std::vector<T> input(in_size);
  std::memcpy(static_cast<void*>(input.data()), in_buf.get(), in_size * sizeof(T));
  // Expected: RotateHeadT per head, into a copy of the buffer the call writes.
  const size_t got_size = in_place ? in_size : out_size;
  auto want = SentinelBuffer<T>(got_size);
  if (in_place) std::memcpy(static_cast<void*>(want.get()), input.data(), in_size * sizeof(T));
  for (int64_t h = 0; h < heads; ++h) {
    T* dst = want.get() + lead + h * (in_place ? in_stride : out_stride);
    RotateHeadT<T, kF64, kInterleaved, kInverse>(input.data() + lead + h * in_stride, row_cos,
                                                 row_sin, half, dst);
  }
  auto out_buf = SentinelBuffer<T>(out_size);
  T* in = in_buf.get() + lead;
  T* out = in_place ? in : out_buf.get() + lead;
  bool streamed = false;
  // Odd leads also ask for the lines ahead (HeadPrefetch, as large calls and calls out of place
  // do), here past the buffers' ends, into L1 or (padded heads) L2: the bytes written must not
  // change, nothing may fault.
  HeadPrefetch prefetch;
  if (lead % 2 == 1) {
    prefetch.in_next_token = heads * in_stride;
    prefetch.in_heads_ahead = heads + 2;
    prefetch.in_to_l2 = pad != 0;
    prefetch.out_next_head = true;
  }
  const bool took = RegisterRowTokenHeads<T, kF64, kInterleaved, kInverse>(
      row_cos, row_sin, half, in, in_stride, out, out_stride, heads, chunks, stream, prefetch,
      streamed);
  FenceStreamingStores();
  const char* what = in_place ? "in place" : stream ? "streaming" : "out of place";
  ASSERT_EQ(took, expect_taken) << "half " << half << " interleaved " << kInterleaved
                                << " chunks " << chunks << " " << what;
  const T* got = in_place ? in_buf.get() : out_buf.get();
  if (!took) {
    auto untouched = SentinelBuffer<T>(got_size);
    const T* before = in_place ? input.data() : untouched.get();
    EXPECT_EQ(std::memcmp(got, before, got_size * sizeof(T)), 0)
        << "declined but wrote, half " << half << " " << what;
    EXPECT_FALSE(streamed);
    return;
  }
  ++taken;
  EXPECT_EQ(std::memcmp(got, want.get(), got_size * sizeof(T)), 0)
      << "differs from RotateHeadT (or touched padding), half " << half << " interleaved "
      << kInterleaved << " heads " << heads << " pad " << pad << " lead " << lead << " " << what;
  if (!in_place) {
    EXPECT_EQ(std::memcmp(in_buf.get(), input.data(), in_size * sizeof(T)), 0) << "input changed";
  }
  if (!stream) {
    EXPECT_FALSE(streamed) << "half " << half;
  }
}

template <class T, bool kF64, bool kInterleaved, bool kInverse>
void CheckRegisterRows(std::mt19937& rng, size_t& taken) {
  using Row = RowOf<T, kF64>;
  const size_t N = hn::Lanes(hn::ScalableTag<Row>());
  const size_t max_half = (2 * kMaxRegisterRowVectors + 1) * N + 1;
  for (size_t half = 1; half <= max_half; ++half) {
    // Past two vectors, whole vectors and their neighbours only (the rest decline alike).
    const size_t elements = kInterleaved ? 2 * half : half;
    if (half > 2 * N + 1 && elements % N > 2 && elements % N < N - 2) continue;
    auto row = hwy::AllocateAligned<float>(2 * half);
    std::uniform_real_distribution<double> angle(-1e4, 1e4);
    const double m = (half % 3 == 0) ? 0.7 : 1.0;
    for (size_t i = 0; i < half; ++i) {
      const double t = angle(rng);
      row[i] = static_cast<float>(m * std::cos(t));
      row[half + i] = static_cast<float>(m * std::sin(t));
    }
    auto scratch = hwy::AllocateAligned<Row>(4 * half);
    const Row* row_cos = nullptr;
    const Row* row_sin = nullptr;
    RotationRows<T, kF64, kInterleaved, kInverse>(row.get(), row.get() + half, half,
                                                  scratch.get(), row_cos, row_sin);
    for (bool chunks : {false, true}) {
      const bool expect_taken = ExpectTaken(elements, N, chunks);
      for (int64_t heads : {1, 3})
        for (size_t pad : {0, 3})
          for (size_t lead : {0, 1})
            // In place; out of place; streaming (f32 heads only: the others never stream).
            for (int mode = 0; mode < (std::is_same_v<T, float> ? 3 : 2); ++mode) {
              CheckOneCall<T, kF64, kInterleaved, kInverse>(row_cos, row_sin, half, chunks,
                                                            expect_taken, heads, pad, lead, mode,
                                                            rng, taken);
            }
    }
  }
}

template <class T, bool kF64>
void CheckLayoutsAndDirections(std::mt19937& rng, size_t& taken) {
  CheckRegisterRows<T, kF64, false, false>(rng, taken);
  CheckRegisterRows<T, kF64, false, true>(rng, taken);
  CheckRegisterRows<T, kF64, true, false>(rng, taken);
  CheckRegisterRows<T, kF64, true, true>(rng, taken);
}

HWY_NOINLINE void TestRegisterRows() {
  std::mt19937 rng(99);
  size_t taken = 0;
  for (int round = 0; round < 2; ++round) {
    CheckLayoutsAndDirections<float, true>(rng, taken);
    CheckLayoutsAndDirections<float, false>(rng, taken);
    CheckLayoutsAndDirections<hwy::bfloat16_t, false>(rng, taken);
    CheckLayoutsAndDirections<hwy::float16_t, false>(rng, taken);
  }
  // Each taken case is one call; targets without the path take none.
  if (kMaxRegisterRowVectors == 0) {
    EXPECT_EQ(taken, 0u);
  } else {
    EXPECT_GT(taken, 0u);
  }
}

// Streaming stores are issued for heads that allow them (StreamableHead): with a 64-byte
// aligned output and half a multiple of 16 floats every head does, on x86 targets with them.
HWY_NOINLINE void TestRegisterRowsStream() {
  using Row = float;
  const size_t N = hn::Lanes(hn::ScalableTag<Row>());
  if (kMaxRegisterRowVectors == 0) return;
  const size_t half = N * (N >= 16 ? 1 : 16 / N);
  if (half / N > kMaxRegisterRowVectors) return;
  auto row = hwy::AllocateAligned<float>(2 * half);
  for (size_t i = 0; i < 2 * half; ++i) row[i] = 0.5f;
  auto in = hwy::AllocateAligned<float>(4 * half);
  auto out = hwy::AllocateAligned<float>(4 * half);
  for (size_t i = 0; i < 4 * half; ++i) in[i] = static_cast<float>(i);
  bool streamed = false;
  ASSERT_TRUE((RegisterRowTokenHeads<float, false, false, false>(
      row.get(), row.get() + half, half, in.get(), static_cast<int64_t>(2 * half), out.get(),
      static_cast<int64_t>(2 * half), 2, false, true, HeadPrefetch(), streamed)));
  FenceStreamingStores();
  EXPECT_EQ(streamed, static_cast<bool>(POSENC_STREAM_STORES));
  for (size_t h = 0; h < 2; ++h)
    for (size_t i = 0; i < half; ++i) {
      const float x = in[h * 2 * half + i], y = in[h * 2 * half + half + i];
      EXPECT_EQ(out[h * 2 * half + i], x * 0.5f - y * 0.5f);
      EXPECT_EQ(out[h * 2 * half + half + i], y * 0.5f + x * 0.5f);
    }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(RopeRegisterRowTest);
HWY_EXPORT_AND_TEST_P(RopeRegisterRowTest, TestRegisterRows);
HWY_EXPORT_AND_TEST_P(RopeRegisterRowTest, TestRegisterRowsStream);
}  // namespace posenc
#endif
