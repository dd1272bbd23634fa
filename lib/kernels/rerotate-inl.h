// Per-target fused re-rotation (posenc::RerotateRope): per token and pair, with a = p_to * w_to[i]
// and b = p_from * w_from[i] (double products), cos/sin of each from the exact engine
// (sincos-inl.h CosSinF64, ~1e-16 absolute for |angle| < 2^29), then in double
//   cos(a - b) = cos a cos b + sin a sin b,   sin(a - b) = sin a cos b - cos a sin b,
// times m (the ratio of attention factors), rounded once to f32: within 2^-25 + 2^-50 of the exact
// value, the accuracy a plain RoPE row has, so the head rotation (rope-inl.h) keeps its bound B.
// Forming a - b first instead would lose up to ulp(a) (2^-24 rad at |a| ~ 2^29). Only Mul, Add,
// Sub: bitwise identical on every target. With a table or cache on either side the rows are
// composed instead (ComposeLanes, posenc/shift.h "Rows"); the head rotation is rope-inl.h's.

#if defined(POSENC_LIB_KERNELS_REROTATE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POSENC_LIB_KERNELS_REROTATE_INL_H_
#undef POSENC_LIB_KERNELS_REROTATE_INL_H_
#else
#define POSENC_LIB_KERNELS_REROTATE_INL_H_
#endif

#include <cstdint>
#include <type_traits>

#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"
#include "lib/core/rerotate_plan.h"
#include "lib/kernels/rope-inl.h"
#include "lib/kernels/rope_tokens-inl.h"
#include "lib/kernels/sincos-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

template <class D>
HWY_INLINE void RerotateLanes(D d, double p_to, const double* HWY_RESTRICT w_to, double p_from,
                              const double* HWY_RESTRICT w_from, double m, float* HWY_RESTRICT cos,
                              float* HWY_RESTRICT sin) {
  const hn::Rebind<float, D> df;
  hn::Vec<D> ca, sa, cb, sb;
  CosSinF64(d, hn::Mul(hn::Set(d, p_to), hn::LoadU(d, w_to)), ca, sa);
  CosSinF64(d, hn::Mul(hn::Set(d, p_from), hn::LoadU(d, w_from)), cb, sb);
  const auto c = hn::Add(hn::Mul(ca, cb), hn::Mul(sa, sb));
  const auto s = hn::Sub(hn::Mul(sa, cb), hn::Mul(ca, sb));
  const auto vm = hn::Set(d, m);
  hn::StoreU(DemoteF64ToF32(d, hn::Mul(c, vm)), df, cos);
  hn::StoreU(DemoteF64ToF32(d, hn::Mul(s, vm)), df, sin);
}

// The row way (posenc/shift.h): cos/sin = (C_to C_from + S_to S_from, S_to C_from - C_to S_from)
// * scale for the lanes of d, from the two f32 rows promoted to double (exact): each product of
// two f32 values is exact in double, the sum rounds once, the scale once, the result once to f32.
template <class D>
HWY_INLINE void ComposeLanes(D d, const float* HWY_RESTRICT ct, const float* HWY_RESTRICT st,
                             const float* HWY_RESTRICT cf, const float* HWY_RESTRICT sf,
                             double scale, float* HWY_RESTRICT cos, float* HWY_RESTRICT sin) {
  const hn::Rebind<float, D> df;
  const auto vct = hn::PromoteTo(d, hn::LoadU(df, ct)), vst = hn::PromoteTo(d, hn::LoadU(df, st));
  const auto vcf = hn::PromoteTo(d, hn::LoadU(df, cf)), vsf = hn::PromoteTo(d, hn::LoadU(df, sf));
  const auto c = hn::Add(hn::Mul(vct, vcf), hn::Mul(vst, vsf));
  const auto s = hn::Sub(hn::Mul(vst, vcf), hn::Mul(vct, vsf));
  const auto vm = hn::Set(d, scale);
  hn::StoreU(DemoteF64ToF32(d, hn::Mul(c, vm)), df, cos);
  hn::StoreU(DemoteF64ToF32(d, hn::Mul(s, vm)), df, sin);
}

// One side's f32 row of token t = (b, s): computed as ApplyRope computes it (CosSinRow, the values
// a RopeTable of these frequencies holds), or read from a table / cache (converted into scratch
// for bf16 / f16 caches). `scratch` holds 2 * half floats.
HWY_INLINE void SideRowF32(kernels::RowSource source, const Positions& positions,
                           const double* inv_freq, double m, const void* cos_rows,
                           const void* sin_rows, DType cache_dtype, int64_t b, int64_t s,
                           int64_t seq, size_t half, float* scratch, const float*& cos,
                           const float*& sin) {
  if (source == kernels::RowSource::kCompute) {
    CosSinRow(static_cast<double>(kernels::PositionOf(positions, b, s, seq)), inv_freq, half, m,
              scratch, scratch + half);
    cos = scratch;
    sin = scratch + half;
    return;
  }
  const int64_t row = source == kernels::RowSource::kPerToken
                          ? b * seq + s
                          : kernels::PositionOf(positions, b, s, seq);
  cos = CacheRowF32(cos_rows, cache_dtype, row, half, scratch);
  sin = CacheRowF32(sin_rows, cache_dtype, row, half, scratch + half);
}

template <class T, bool kF64, bool kInterleaved>
void RerotateTokensT(const kernels::RerotatePlan& rp, int64_t begin, int64_t end) {
  const kernels::RopePlan& plan = rp.rope;
  const size_t half = static_cast<size_t>(plan.rotary_dim / 2);
  const size_t tail = static_cast<size_t>(plan.head_dim - plan.rotary_dim);
  // The token's composed row (2 * half floats) and, for the row way, each side's f32 row
  // (2 * half floats each): on the stack up to kStackPairs pairs, else the heap.
  constexpr size_t kStackPairs = 512;
  HWY_ALIGN float stack[6 * kStackPairs];
  hwy::AlignedFreeUniquePtr<float[]> heap;
  float* row = stack;
  if (half > kStackPairs) {
    heap = hwy::AllocateAligned<float>(6 * half);
    row = heap.get();
  }
  float* to_scratch = row + 2 * half;
  float* from_scratch = row + 4 * half;
  // The rows the heads read (widened to double for kF64 f32 heads, pair rows when interleaved).
  using Row = RowOf<T, kF64>;
  RotationRowScratch<T, kF64> rows(half);
  // Register-resident rows (RotateTokenHeads), in chunks only in small calls; no streaming.
  const bool row_chunks = kernels::ChunksRegisterRows(plan);
  const PlanHeadPrefetch prefetch(plan);
  bool unused_streamed = false;
  const hn::ScalableTag<double> d;
  const hn::CappedTag<double, 1> d1;
  const size_t N = hn::Lanes(d);
  for (int64_t t = begin; t < end; ++t) {
    const int64_t b = t / plan.seq;
    const int64_t s = t % plan.seq;
    size_t i = 0;
    if (rp.exact) {
      const double p_to = static_cast<double>(kernels::PositionOf(plan.positions, b, s, plan.seq));
      const double p_from =
          static_cast<double>(kernels::PositionOf(rp.from_positions, b, s, plan.seq));
      for (; i + N <= half; i += N) {
        RerotateLanes(d, p_to, plan.inv_freq + i, p_from, rp.from_inv_freq + i, rp.exact_factor,
                      row + i, row + half + i);
      }
      for (; i < half; ++i) {
        RerotateLanes(d1, p_to, plan.inv_freq + i, p_from, rp.from_inv_freq + i,
                      rp.exact_factor, row + i, row + half + i);
      }
    } else {
      const float *ct, *st, *cf, *sf;
      SideRowF32(plan.source, plan.positions, plan.inv_freq, plan.attention_factor, plan.cos_rows,
                 plan.sin_rows, plan.cache_dtype, b, s, plan.seq, half, to_scratch, ct, st);
      SideRowF32(rp.from_source, rp.from_positions, rp.from_inv_freq, rp.from_attention_factor,
                 rp.from_cos_rows, rp.from_sin_rows, rp.from_cache_dtype, b, s, plan.seq, half,
                 from_scratch, cf, sf);
      for (; i + N <= half; i += N) {
        ComposeLanes(d, ct + i, st + i, cf + i, sf + i, rp.row_scale, row + i, row + half + i);
      }
      for (; i < half; ++i) {
        ComposeLanes(d1, ct + i, st + i, cf + i, sf + i, rp.row_scale, row + i, row + half + i);
      }
    }
    const Row* row_cos;
    const Row* row_sin;
    RotationRows<T, kF64, kInterleaved, false>(row, row + half, half, rows.get(), row_cos, row_sin);
    for (int n = 0; n < plan.num_io; ++n) {
      const kernels::HeadsIO& io = plan.io[n];
      const T* in = static_cast<const T*>(io.in) + b * io.in_stride[0] + s * io.in_stride[1];
      T* out = static_cast<T*>(io.out) + b * io.out_stride[0] + s * io.out_stride[1];
      RotateTokenHeads<T, kF64, kInterleaved, false>(row_cos, row_sin, half, tail, in,
                                                     io.in_stride[2], out, io.out_stride[2],
                                                     io.heads, row_chunks, false, prefetch.io[n],
                                                     unused_streamed);
    }
  }
}

template <class T>
void RerotateTokens(const kernels::RerotatePlan& rp, int64_t begin, int64_t end) {
  const bool f64 = std::is_same_v<T, float> && rp.rope.arithmetic == RotationArithmetic::kF64;
  if (rp.rope.interleaved) {
    if (f64) return RerotateTokensT<T, true, true>(rp, begin, end);
    return RerotateTokensT<T, false, true>(rp, begin, end);
  }
  if (f64) return RerotateTokensT<T, true, false>(rp, begin, end);
  return RerotateTokensT<T, false, false>(rp, begin, end);
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_REROTATE_INL_H_
