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

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"
#include "lib/kernels/cpu_features.h"
#include "lib/kernels/half-inl.h"
#include "lib/kernels/rope-inl.h"
#include "lib/kernels/rope_chain-inl.h"
#include "lib/core/rope_plan.h"
#include "lib/kernels/sincos-inl.h"
#include "lib/kernels/sinusoidal_rotate-inl.h"

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
    // The distance in heads (a division) only for calls that prefetch: a decode step skips it.
    const int64_t heads_ahead = heads ? kernels::PrefetchAheadHeads(plan) : 1;
    for (int i = 0; i < plan.num_io; ++i) {
      io[i].in_next_token = heads ? kernels::NextTokenStride(plan, plan.io[i]) : 0;
      io[i].in_heads_ahead = heads_ahead;
      io[i].in_to_l2 = kernels::PrefetchToL2(plan);
      io[i].out_next_head = outputs && plan.io[i].in != plan.io[i].out;
    }
  }
};

// Token t = b * seq + s of a range [begin, ...), stepped rather than divided on every token (an
// integer division per token cost ~1 % at 16 Llama-3-8B tokens, docs/performance.md section
// 3.23); a range that starts in the first sequence (every serial call) needs no division at all.
struct TokenCursor {
  int64_t t, b = 0, s;
  const int64_t seq;
  TokenCursor(int64_t begin, int64_t seq_len) : t(begin), s(begin), seq(seq_len) {
    if (begin >= seq) {
      b = begin / seq;
      s = begin % seq;
    }
  }
  void Next() {
    ++t;
    if (++s == seq) {
      s = 0;
      ++b;
    }
  }
};

// The computed cos/sin rows of a call's tokens, in order. With attention factor 1 (m · ĉ = ĉ)
// tokens whose positions run p0, p0 + 1, ... get their rows a block at a time as sinusoidal
// tables do (ConsecutiveRowBlocks: the engine for the first row, a rotation for the others, the
// engine's bits, docs/math.md §9.6; about half the time a row on Zen 4); other calls one
// CosSinRow a token. Row(t): cos at [0, half), sin at [half, 2 * half) of the returned row.
// Constructed on every call, so it stays small: the blocks live on the heap, allocated only by
// computed calls of kMinBlockTokens or more (held in an std::optional instead, GCC 12 zeroed
// 712 bytes with rep stos on every call, table calls included: ~20 ns a decode step).
class ComputedRows {
 public:
  // Blocks of at most this many floats (32 KiB), so they stay in L1 / L2 beside the heads.
  static constexpr size_t kBlockFloats = 8192;
  // Fewer tokens do not repay the set-up (the rotation steps cost one engine row, plus two
  // allocations): 2 Llama-3-8B tokens took 2.06 against 1.90 us, 4 tokens 3.61 against 3.67 us
  // (Zen 4, docs/performance.md section 3.20).
  static constexpr int64_t kMinBlockTokens = 4;

  ComputedRows(const kernels::RopePlan& plan, size_t half, int64_t begin, int64_t end,
               float* one_row)
      : plan_(plan), half_(half), end_(end), one_row_(one_row) {
    if (plan.source != kernels::RowSource::kCompute || plan.attention_factor != 1.0 ||
        end - begin < kMinBlockTokens) {
      return;
    }
    max_rows_ = std::min(kSinusoidalBlockRows, std::max<size_t>(2, kBlockFloats / (2 * half)));
    rows_ = hwy::AllocateAligned<float>(max_rows_ * 2 * half);
    blocks_ = std::make_unique<ConsecutiveRowBlocks>(plan.inv_freq, half,
                                                     SinusoidalLayout::kConcatCosSin);
  }

  const float* Row(int64_t t) {
    if (!blocks_) {
      CosSinRow(static_cast<double>(Position(t)), plan_.inv_freq, half_, plan_.attention_factor,
                one_row_, one_row_ + half_);
      return one_row_;
    }
    if (t < first_ || t >= last_) {
      const int64_t p0 = Position(t);
      size_t n = ConsecutiveRun([this](int64_t token) { return Position(token); }, t, end_,
                                max_rows_, p0);
      float* rows[kSinusoidalBlockRows];
      for (size_t j = 0; j < n; ++j) rows[j] = rows_.get() + j * 2 * half_;
      n = blocks_->Write(p0, n, rows);
      first_ = t;
      last_ = t + static_cast<int64_t>(n);
    }
    return rows_.get() + static_cast<size_t>(t - first_) * 2 * half_;
  }

 private:
  int64_t Position(int64_t t) const {
    return kernels::PositionOf(plan_.positions, t / plan_.seq, t % plan_.seq, plan_.seq);
  }

  const kernels::RopePlan& plan_;
  const size_t half_;
  const int64_t end_;
  float* const one_row_;  // 2 * half floats: the row of a call without blocks
  size_t max_rows_ = 1;
  hwy::AlignedFreeUniquePtr<float[]> rows_;  // max_rows_ rows of 2 * half floats
  std::unique_ptr<ConsecutiveRowBlocks> blocks_;
  int64_t first_ = 0, last_ = 0;  // the tokens whose rows rows_ holds
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
  ComputedRows computed(plan, half, begin, end, scratch);
  bool streamed = false;
  for (TokenCursor c(begin, plan.seq); c.t < end; c.Next()) {
    const int64_t t = c.t, b = c.b, s = c.s;
    const float* cos;
    const float* sin;
    if (plan.source == kernels::RowSource::kCompute) {
      cos = computed.Row(t);
      sin = cos + half;
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

// RotationArithmetic::kFmaChain for f32 heads (rope_chain-inl.h): per token the hi / lo rows
// (computed with CosSinRow<true>, one engine row a token; a table's lo rows; a caller cache's
// values with lo parts 0), for interleaved heads their pair rows, then every head of q and k:
// the chain where its guard passes, else kF64's operations on the hi rows (widened once per token
// on first use).
template <bool kInterleaved, bool kInverse>
void RopeChainTokensT(const kernels::RopePlan& plan, int64_t begin, int64_t end) {
  const size_t half = static_cast<size_t>(plan.rotary_dim / 2);
  const size_t tail = static_cast<size_t>(plan.head_dim - plan.rotary_dim);
  const size_t row_values = kInterleaved ? 2 * half : half;  // of each of the four rows
  // Scratch: the token's rows (4 * half: hi and lo, computed or converted), a zero lo row (half),
  // the pair rows (4 * row_values, interleaved) and kF64's widened rows (4 * half doubles at
  // most): on the stack up to kStackPairs pairs (head_dim 512), else on the heap.
  constexpr size_t kStackPairs = 256;
  constexpr size_t kFloats = (5 + (kInterleaved ? 8 : 0)) * kStackPairs;
  HWY_ALIGN float stack[kFloats];
  HWY_ALIGN double stack_wide[4 * kStackPairs];
  hwy::AlignedFreeUniquePtr<float[]> heap;
  hwy::AlignedFreeUniquePtr<double[]> heap_wide;
  float* rows = stack;
  double* wide = stack_wide;
  if (half > kStackPairs) {
    heap = hwy::AllocateAligned<float>(kFloats / kStackPairs * half);
    heap_wide = hwy::AllocateAligned<double>(4 * half);
    rows = heap.get();
    wide = heap_wide.get();
  }
  float* zero_lo = rows + 4 * half;
  float* pairs = rows + 5 * half;
  const bool cache = plan.source != kernels::RowSource::kCompute && plan.cos_lo_rows == nullptr;
  if (cache) std::fill(zero_lo, zero_lo + half, 0.0f);
  const bool stream = kernels::StreamsOutputs(plan);
  const bool row_chunks = kernels::ChunksRegisterRows(plan);
  const PlanHeadPrefetch prefetch(plan);
  bool streamed = false;
  for (TokenCursor c(begin, plan.seq); c.t < end; c.Next()) {
    const int64_t t = c.t, b = c.b, s = c.s;
    ChainRows r;
    if (plan.source == kernels::RowSource::kCompute) {
      CosSinRow<true>(static_cast<double>(kernels::PositionOf(plan.positions, b, s, plan.seq)),
                      plan.inv_freq, half, plan.attention_factor, rows, rows + half,
                      rows + 2 * half, rows + 3 * half);
      r = {rows, rows + half, rows + 2 * half, rows + 3 * half};
    } else {
      const int64_t row = plan.source == kernels::RowSource::kPerToken
                              ? t
                              : kernels::PositionOf(plan.positions, b, s, plan.seq);
      r.ch = CacheRowF32(plan.cos_rows, plan.cache_dtype, row, half, rows);
      r.sh = CacheRowF32(plan.sin_rows, plan.cache_dtype, row, half, rows + half);
      if (cache) {
        r.cl = r.sl = zero_lo;
      } else {
        r.cl = plan.cos_lo_rows + row * static_cast<int64_t>(half);
        r.sl = plan.sin_lo_rows + row * static_cast<int64_t>(half);
      }
    }
    const float* hi_cos = r.ch;  // the f32 row kF64's fallback widens
    const float* hi_sin = r.sh;
    if constexpr (kInterleaved) {
      BuildPairRows<kInverse>(r.ch, r.sh, half, pairs, pairs + row_values);
      BuildPairRows<kInverse>(r.cl, r.sl, half, pairs + 2 * row_values, pairs + 3 * row_values);
      r = {pairs, pairs + row_values, pairs + 2 * row_values, pairs + 3 * row_values};
    }
    ChainFallbackRows fallback{hi_cos, hi_sin, wide};
    for (int i = 0; i < plan.num_io; ++i) {
      const kernels::HeadsIO& io = plan.io[i];
      const float* in = static_cast<const float*>(io.in) + b * io.in_stride[0] + s * io.in_stride[1];
      float* out = static_cast<float*>(io.out) + b * io.out_stride[0] + s * io.out_stride[1];
      if (cache) {
        ChainTokenHeads<kInterleaved, kInverse, true>(r, fallback, half, tail, in, io.in_stride[2],
                                                      out, io.out_stride[2], io.heads, row_chunks,
                                                      stream, prefetch.io[i], streamed);
      } else {
        ChainTokenHeads<kInterleaved, kInverse, false>(r, fallback, half, tail, in,
                                                       io.in_stride[2], out, io.out_stride[2],
                                                       io.heads, row_chunks, stream,
                                                       prefetch.io[i], streamed);
      }
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
// direction; f32 honours plan.arithmetic (kF64, else f32 lanes), half types always compute in
// f32.
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
    if (plan.arithmetic == RotationArithmetic::kF64) {
      return RopeVariantLayout<Kernel, T, true>(plan, begin, end);
    }
  }
  RopeVariantLayout<Kernel, T, false>(plan, begin, end);
}

template <class T>
void RopeTokens(const kernels::RopePlan& plan, int64_t begin, int64_t end) {
  if constexpr (std::is_same_v<T, float>) {
    if (plan.arithmetic == RotationArithmetic::kFmaChain) {
      if (plan.interleaved) {
        if (plan.inverse) return RopeChainTokensT<true, true>(plan, begin, end);
        return RopeChainTokensT<true, false>(plan, begin, end);
      }
      if (plan.inverse) return RopeChainTokensT<false, true>(plan, begin, end);
      return RopeChainTokensT<false, false>(plan, begin, end);
    }
  }
  RopeVariant<RopeTokensKernel, T>(plan, begin, end);
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_ROPE_TOKENS_INL_H_
