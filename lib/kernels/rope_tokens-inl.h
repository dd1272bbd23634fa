// Per-target RoPE over a range of tokens for storage type T (float, hwy::bfloat16_t,
// hwy::float16_t): per token one f32 cos/sin row (computed, or fetched from a table or a cache of
// any dtype), then every head of q and k. Each dtype's dispatch TU instantiates RopeTokens<T>
// (lib/kernels/rope_static-inl.h).

#if defined(POSENC_LIB_KERNELS_ROPE_TOKENS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POSENC_LIB_KERNELS_ROPE_TOKENS_INL_H_
#undef POSENC_LIB_KERNELS_ROPE_TOKENS_INL_H_
#else
#define POSENC_LIB_KERNELS_ROPE_TOKENS_INL_H_
#endif

#include <cstdint>
#include <type_traits>

#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"
#include "lib/kernels/cpu_features.h"
#include "lib/kernels/half-inl.h"
#include "lib/kernels/rope-inl.h"
#include "lib/core/rope_plan.h"
#include "lib/kernels/sincos-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

// Row `row` of a caller cache / table in f32: a pointer into it, or converted into `scratch`.
HWY_INLINE const float* CacheRowF32(const void* base, DType dtype, int64_t row, size_t half,
                                    float* scratch) {
  const int64_t at = row * static_cast<int64_t>(half);
  switch (dtype) {
    case DType::kBF16:
      ConvertToF32(static_cast<const hwy::bfloat16_t*>(base) + at, half, scratch);
      return scratch;
    case DType::kF16:
      ConvertToF32(static_cast<const hwy::float16_t*>(base) + at, half, scratch);
      return scratch;
    default:
      return static_cast<const float*>(base) + at;
  }
}

// What the heads of each of the plan's tensors ask the caches for (rope-inl.h, HeadPrefetch),
// the same for every token of a call: rope_plan.h decides, once per call, and for the heads
// ahead also the CPU (cpu_features.h, SoftwareHeadPrefetch).
struct PlanHeadPrefetch {
  HeadPrefetch io[std::extent_v<decltype(kernels::RopePlan::io)>];

  explicit PlanHeadPrefetch(const kernels::RopePlan& plan) {
    const bool heads = kernels::PrefetchesHeads(plan) && kernels::SoftwareHeadPrefetch();
    const bool outputs = kernels::PrefetchesOutputs(plan);
    for (int i = 0; i < plan.num_io; ++i) {
      io[i].in_next_token = heads ? kernels::NextTokenStride(plan, plan.io[i]) : 0;
      io[i].in_heads_ahead = kernels::PrefetchAheadHeads(plan);
      io[i].in_to_l2 = kernels::PrefetchToL2(plan);
      io[i].out_next_head = outputs && plan.io[i].in != plan.io[i].out;
    }
  }
};

template <class T, bool kF64, bool kInterleaved, bool kInverse>
void RopeTokensT(const kernels::RopePlan& plan, int64_t begin, int64_t end) {
  const size_t half = static_cast<size_t>(plan.rotary_dim / 2);
  const size_t tail = static_cast<size_t>(plan.head_dim - plan.rotary_dim);
  const bool convert = plan.source != kernels::RowSource::kCompute && plan.cache_dtype != DType::kF32;
  // f32 heads with kF64 arithmetic rotate with the row widened to double once per token;
  // interleaved heads with the token's pair rows (BuildPairRows, 2 * half values each).
  using Row = RowOf<T, kF64>;
  constexpr bool kWiden = std::is_same_v<Row, double>;
  constexpr bool kRowCopy = kWiden || kInterleaved;  // RotationRows writes row_scratch
  const size_t row_values = kInterleaved ? 2 * half : half;  // of each of cos, sin
  // cos/sin rows of one token: on the stack up to 512 pairs (every model we know), else the heap;
  // a decode step then pays no allocation.
  constexpr size_t kStackPairs = 512;
  HWY_ALIGN float stack[2 * kStackPairs];
  HWY_ALIGN Row stack_row[kRowCopy ? 4 * kStackPairs : 1];
  hwy::AlignedFreeUniquePtr<float[]> heap;
  hwy::AlignedFreeUniquePtr<Row[]> heap_row;
  float* scratch = stack;
  Row* row_scratch = stack_row;
  if ((plan.source == kernels::RowSource::kCompute || convert) && half > kStackPairs) {
    heap = hwy::AllocateAligned<float>(2 * half);
    scratch = heap.get();
  }
  if (kRowCopy && half > kStackPairs) {
    heap_row = hwy::AllocateAligned<Row>(2 * row_values);
    row_scratch = heap_row.get();
  }
  // Large out-of-place f32 calls store their outputs with streaming stores (rope_plan.h).
  const bool stream = std::is_same_v<T, float> && kernels::StreamsOutputs(plan);
  // Rows too long for the registers go through them in chunks only in small calls (rope-inl.h,
  // RegisterRowTokenHeads).
  const bool row_chunks = kernels::ChunksRegisterRows(plan);
  const PlanHeadPrefetch prefetch(plan);
  bool streamed = false;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t b = t / plan.seq;
    const int64_t s = t % plan.seq;
    const float* cos;
    const float* sin;
    if (plan.source == kernels::RowSource::kCompute) {
      const int64_t pos = kernels::PositionOf(plan.positions, b, s, plan.seq);
      CosSinRow(static_cast<double>(pos), plan.inv_freq, half, plan.attention_factor, scratch,
                scratch + half);
      cos = scratch;
      sin = scratch + half;
    } else {
      const int64_t row = plan.source == kernels::RowSource::kPerToken
                              ? t
                              : kernels::PositionOf(plan.positions, b, s, plan.seq);
      cos = CacheRowF32(plan.cos_rows, plan.cache_dtype, row, half, scratch);
      sin = CacheRowF32(plan.sin_rows, plan.cache_dtype, row, half, scratch + half);
    }
    const Row* row_cos;
    const Row* row_sin;
    RotationRows<T, kF64, kInterleaved, kInverse>(cos, sin, half, row_scratch, row_cos, row_sin);
    for (int i = 0; i < plan.num_io; ++i) {
      const kernels::HeadsIO& io = plan.io[i];
      const T* in = static_cast<const T*>(io.in) + b * io.in_stride[0] + s * io.in_stride[1];
      T* out = static_cast<T*>(io.out) + b * io.out_stride[0] + s * io.out_stride[1];
      RotateTokenHeads<T, kF64, kInterleaved, kInverse>(row_cos, row_sin, half, tail, in,
                                                         io.in_stride[2], out, io.out_stride[2],
                                                         io.heads, row_chunks, stream,
                                                         prefetch.io[i], streamed);
    }
  }
  if (streamed) FenceStreamingStores();
}

template <class T, bool kF64, bool kInterleaved, bool kInverse>
struct RopeTokensKernel {
  static void Run(const kernels::RopePlan& plan, int64_t begin, int64_t end) {
    RopeTokensT<T, kF64, kInterleaved, kInverse>(plan, begin, end);
  }
};

// The variant ladder of every token kernel over a RopePlan (RoPE here, M-RoPE in
// mrope_tokens-inl.h): Kernel<T, kF64, kInterleaved, kInverse>::Run for the plan's layout and
// direction; f32 honours plan.f64_arithmetic, half types always compute in f32.
template <template <class, bool, bool, bool> class Kernel, class T, bool kF64>
void RopeVariantLayout(const kernels::RopePlan& plan, int64_t begin, int64_t end) {
  if (plan.interleaved) {
    if (plan.inverse) return Kernel<T, kF64, true, true>::Run(plan, begin, end);
    return Kernel<T, kF64, true, false>::Run(plan, begin, end);
  }
  if (plan.inverse) return Kernel<T, kF64, false, true>::Run(plan, begin, end);
  return Kernel<T, kF64, false, false>::Run(plan, begin, end);
}

template <template <class, bool, bool, bool> class Kernel, class T>
void RopeVariant(const kernels::RopePlan& plan, int64_t begin, int64_t end) {
  if constexpr (std::is_same_v<T, float>) {
    if (plan.f64_arithmetic) return RopeVariantLayout<Kernel, T, true>(plan, begin, end);
  }
  RopeVariantLayout<Kernel, T, false>(plan, begin, end);
}

template <class T>
void RopeTokens(const kernels::RopePlan& plan, int64_t begin, int64_t end) {
  RopeVariant<RopeTokensKernel, T>(plan, begin, end);
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_ROPE_TOKENS_INL_H_
