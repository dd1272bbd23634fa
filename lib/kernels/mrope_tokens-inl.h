// Per-target M-RoPE over a range of tokens for storage type T: per token one f32 cos/sin row whose
// pair i takes the position of stream plan.pair_stream[i] (computed, or gathered from table /
// cache rows), then every head of q and k with the plain RoPE head rotation (rope-inl.h).
//
// Bitwise contract: pair i's cos/sin is f32(m * cos(p * inv_freq[i])) from the same double engine
// (sincos-inl.h CosSinF64) and the same lane-wise operations as CosSinRow, with p the position of
// the pair's stream. Every lane is computed independently, so a pair's value does not depend on
// which other pairs share its vector: when all streams of a token are equal (text-only tokens) the
// row is bitwise the plain RoPE row, and it is taken from CosSinRow itself (no gather).

#if defined(POSENC_LIB_KERNELS_MROPE_TOKENS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POSENC_LIB_KERNELS_MROPE_TOKENS_INL_H_
#undef POSENC_LIB_KERNELS_MROPE_TOKENS_INL_H_
#else
#define POSENC_LIB_KERNELS_MROPE_TOKENS_INL_H_
#endif

#include <cstdint>
#include <type_traits>

#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"
#include "lib/kernels/rope-inl.h"
#include "lib/core/rope_plan.h"
#include "lib/kernels/rope_tokens-inl.h"
#include "lib/kernels/sincos-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

// cos[i], sin[i] = f32(m * cos(pos[i] * inv_freq[i])), f32(m * sin(...)) for the lanes of d: the
// arithmetic of CosSinLanes with a per-lane position.
template <class D>
HWY_INLINE void CosSinLanesPerPair(D d, const double* HWY_RESTRICT pos,
                                   const double* HWY_RESTRICT inv_freq, double m,
                                   float* HWY_RESTRICT cos, float* HWY_RESTRICT sin) {
  const hn::Rebind<float, D> df;
  const auto theta = hn::Mul(hn::LoadU(d, pos), hn::LoadU(d, inv_freq));
  hn::Vec<D> c, s;
  CosSinF64(d, theta, c, s);
  const auto vm = hn::Set(d, m);
  hn::StoreU(DemoteF64ToF32(d, hn::Mul(c, vm)), df, cos);
  hn::StoreU(DemoteF64ToF32(d, hn::Mul(s, vm)), df, sin);
}

HWY_INLINE void CosSinRowPerPair(const double* HWY_RESTRICT pos,
                                 const double* HWY_RESTRICT inv_freq, size_t half, double m,
                                 float* HWY_RESTRICT cos, float* HWY_RESTRICT sin) {
  const hn::ScalableTag<double> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= half; i += N) CosSinLanesPerPair(d, pos + i, inv_freq + i, m, cos + i, sin + i);
  const hn::CappedTag<double, 1> d1;
  for (; i < half; ++i) CosSinLanesPerPair(d1, pos + i, inv_freq + i, m, cos + i, sin + i);
}

template <class T, bool kF64, bool kInterleaved, bool kInverse>
void MRopeTokensT(const kernels::RopePlan& plan, int64_t begin, int64_t end) {
  constexpr int64_t kMaxStreams = 4;  // api::StreamSnapshot::kMaxStreams
  const size_t half = static_cast<size_t>(plan.rotary_dim / 2);
  const size_t tail = static_cast<size_t>(plan.head_dim - plan.rotary_dim);
  const int64_t streams = plan.num_streams;
  const bool compute = plan.source == kernels::RowSource::kCompute;
  const bool convert = !compute && plan.cache_dtype != DType::kF32;
  // Per token: the cos/sin row (2 * half floats), the per-pair positions (half doubles) and, for
  // bf16 / f16 caches, each stream's converted rows (2 * streams * half floats). On the stack up
  // to 512 pairs, else the heap.
  constexpr size_t kStackPairs = 512;
  HWY_ALIGN float row_stack[2 * kStackPairs];
  HWY_ALIGN double pos_stack[kStackPairs];
  HWY_ALIGN float conv_stack[2 * kMaxStreams * kStackPairs];
  hwy::AlignedFreeUniquePtr<float[]> row_heap, conv_heap;
  hwy::AlignedFreeUniquePtr<double[]> pos_heap;
  float* row = row_stack;
  double* pos = pos_stack;
  float* conv = conv_stack;
  if (half > kStackPairs) {
    row_heap = hwy::AllocateAligned<float>(2 * half);
    pos_heap = hwy::AllocateAligned<double>(half);
    row = row_heap.get();
    pos = pos_heap.get();
    if (convert) {
      conv_heap = hwy::AllocateAligned<float>(2 * static_cast<size_t>(streams) * half);
      conv = conv_heap.get();
    }
  }
  const uint8_t* pair_stream = plan.pair_stream;
  // The rows the heads read (widened to double for kF64 f32 heads, pair rows when interleaved).
  using Row = RowOf<T, kF64>;
  RotationRowScratch<T, kF64> rows(half);
  // Register-resident rows (RotateTokenHeads), in chunks only in small calls; no streaming.
  const bool row_chunks = kernels::ChunksRegisterRows(plan);
  const PlanHeadPrefetch prefetch(plan);
  bool unused_streamed = false;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t b = t / plan.seq;
    const int64_t s = t % plan.seq;
    int64_t p[kMaxStreams];
    bool equal = true;
    for (int64_t j = 0; j < streams; ++j) {
      p[j] = kernels::PositionOf(plan.streams[j], b, s, plan.seq);
      equal = equal && p[j] == p[0];
    }
    const float* cos = row;
    const float* sin = row + half;
    if (compute) {
      if (equal) {
        CosSinRow(static_cast<double>(p[0]), plan.inv_freq, half, plan.attention_factor, row,
                  row + half);
      } else {
        for (size_t i = 0; i < half; ++i) pos[i] = static_cast<double>(p[pair_stream[i]]);
        CosSinRowPerPair(pos, plan.inv_freq, half, plan.attention_factor, row, row + half);
      }
    } else {
      const float* cos_of[kMaxStreams];
      const float* sin_of[kMaxStreams];
      const int64_t used = equal ? 1 : streams;
      for (int64_t j = 0; j < used; ++j) {
        cos_of[j] = CacheRowF32(plan.cos_rows, plan.cache_dtype, p[j], half, conv + 2 * j * half);
        sin_of[j] =
            CacheRowF32(plan.sin_rows, plan.cache_dtype, p[j], half, conv + (2 * j + 1) * half);
      }
      if (equal) {
        cos = cos_of[0];
        sin = sin_of[0];
      } else {
        for (size_t i = 0; i < half; ++i) {
          row[i] = cos_of[pair_stream[i]][i];
          row[half + i] = sin_of[pair_stream[i]][i];
        }
      }
    }
    const Row* row_cos;
    const Row* row_sin;
    RotationRows<T, kF64, kInterleaved, kInverse>(cos, sin, half, rows.get(), row_cos, row_sin);
    for (int i = 0; i < plan.num_io; ++i) {
      const kernels::HeadsIO& io = plan.io[i];
      const T* in = static_cast<const T*>(io.in) + b * io.in_stride[0] + s * io.in_stride[1];
      T* out = static_cast<T*>(io.out) + b * io.out_stride[0] + s * io.out_stride[1];
      RotateTokenHeads<T, kF64, kInterleaved, kInverse>(row_cos, row_sin, half, tail, in,
                                                     io.in_stride[2], out, io.out_stride[2],
                                                     io.heads, row_chunks, false, prefetch.io[i],
                                                     unused_streamed);
    }
  }
}

template <class T, bool kF64, bool kInterleaved, bool kInverse>
struct MRopeTokensKernel {
  static void Run(const kernels::RopePlan& plan, int64_t begin, int64_t end) {
    MRopeTokensT<T, kF64, kInterleaved, kInverse>(plan, begin, end);
  }
};

// The same variant ladder as RopeTokens (rope_tokens-inl.h RopeVariant).
template <class T>
void MRopeTokens(const kernels::RopePlan& plan, int64_t begin, int64_t end) {
  RopeVariant<MRopeTokensKernel, T>(plan, begin, end);
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_MROPE_TOKENS_INL_H_
