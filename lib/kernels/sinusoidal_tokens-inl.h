// Per-target sinusoidal encodings over a range of tokens for storage type T (float,
// hwy::bfloat16_t, hwy::float16_t): per token one f32 PE row (computed with the RoPE angle engine,
// or fetched from a table), then written out or added to x. Each dtype's dispatch TU
// instantiates SinusoidalTokens<T>.
//
// The add is f32(double(x) * x_scale + double(pe)): one rounding, so it equals "table, then add
// in double" bit for bit on every target (computed in f32 when x_scale == 1, same bits); half
// outputs are the RNE of that f32 value. PE is always finite, so a NaN output comes from x.

#if defined(POSENC_LIB_KERNELS_SINUSOIDAL_TOKENS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POSENC_LIB_KERNELS_SINUSOIDAL_TOKENS_INL_H_
#undef POSENC_LIB_KERNELS_SINUSOIDAL_TOKENS_INL_H_
#else
#define POSENC_LIB_KERNELS_SINUSOIDAL_TOKENS_INL_H_
#endif

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"
#include "lib/kernels/demote-inl.h"
#include "lib/kernels/half-inl.h"
#include "lib/core/rope_plan.h"
#include "lib/kernels/sincos-inl.h"
#include "lib/core/sinusoidal_plan.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// PE row of one position in the plan's layout, from the per-pair sin/cos.
HWY_INLINE void LayOutRow(SinusoidalLayout layout, const float* sin, const float* cos, size_t half,
               float* row) {
  switch (layout) {
    case SinusoidalLayout::kInterleaved:
      for (size_t i = 0; i < half; ++i) {
        row[2 * i] = sin[i];
        row[2 * i + 1] = cos[i];
      }
      break;
    case SinusoidalLayout::kConcatSinCos:
      std::memcpy(row, sin, half * sizeof(float));
      std::memcpy(row + half, cos, half * sizeof(float));
      break;
    case SinusoidalLayout::kConcatCosSin:
      std::memcpy(row, cos, half * sizeof(float));
      std::memcpy(row + half, sin, half * sizeof(float));
      break;
  }
}

// A NaN x propagates (quieted, as IEEE arithmetic does on every target: the only NaN operand);
// the NaN that x = +-Inf with x_scale = 0 makes is the canonical one (its sign differs between
// x86 and Arm).
template <class T, class D>
HWY_INLINE void AddLanes(D d, const T* x, const float* pe, double scale, T* out) {
  const hn::Rebind<float, D> df;
  const auto x64 = hn::PromoteTo(d, LoadAsF32(df, x));
  auto v = hn::Add(hn::Mul(x64, hn::Set(d, scale)), hn::PromoteTo(d, hn::LoadU(df, pe)));
  const hn::RebindToUnsigned<D> du;
  v = hn::IfThenElse(hn::AndNot(hn::IsNaN(x64), hn::IsNaN(v)),
                     hn::BitCast(d, hn::Set(du, uint64_t{0x7FF8000000000000})), v);
  StoreFromF32(DemoteF64ToF32(d, v), df, out);
}

// out[j] = T(f32(x[j] * scale + pe[j])) for j < n; out may equal x. With scale == 1 the sum is
// done in f32 directly: f32(f64(x + pe)) == f32(x + pe) because 53 >= 2 * 24 + 2 (double rounding
// is innocuous), so the bits are those of the double formula at half the conversions.
template <class T>
HWY_INLINE void AddRow(const T* x, const float* pe, double scale, size_t n, T* out) {
  size_t j = 0;
  if (scale == 1.0) {
    const hn::ScalableTag<float> df;
    const hn::CappedTag<float, 1> df1;
    for (; j + hn::Lanes(df) <= n; j += hn::Lanes(df)) {
      StoreFromF32(hn::Add(LoadAsF32(df, x + j), hn::LoadU(df, pe + j)), df, out + j);
    }
    for (; j < n; ++j) StoreFromF32(hn::Add(LoadAsF32(df1, x + j), hn::LoadU(df1, pe + j)), df1, out + j);
    return;
  }
  const hn::ScalableTag<double> d;
  const hn::CappedTag<double, 1> d1;
  const size_t N = hn::Lanes(d);
  for (; j + N <= n; j += N) AddLanes(d, x + j, pe + j, scale, out + j);
  for (; j < n; ++j) AddLanes(d1, x + j, pe + j, scale, out + j);
}

template <class T>
void SinusoidalTokens(const kernels::SinusoidalPlan& plan, int64_t begin, int64_t end) {
  const size_t d = static_cast<size_t>(plan.d_model);
  const size_t half = d / 2;
  hwy::AlignedFreeUniquePtr<float[]> scratch;
  if (plan.table_rows == nullptr) scratch = hwy::AllocateAligned<float>(2 * half + d);
  for (int64_t t = begin; t < end; ++t) {
    const int64_t b = t / plan.seq, s = t % plan.seq;
    const int64_t pos = kernels::PositionOf(plan.positions, b, s, plan.seq);
    const float* pe;
    if (plan.table_rows != nullptr) {
      pe = plan.table_rows + pos * plan.d_model;
    } else {
      float* sin = scratch.get();
      float* cos = sin + half;
      float* row = cos + half;
      CosSinRow(static_cast<double>(pos + plan.position_offset), plan.freqs, half, 1.0, cos, sin);
      LayOutRow(plan.layout, sin, cos, half, row);
      pe = row;
    }
    T* out = static_cast<T*>(plan.out) + b * plan.out_stride[0] + s * plan.out_stride[1];
    if (plan.add) {
      const T* x = static_cast<const T*>(plan.x) + b * plan.x_stride[0] + s * plan.x_stride[1];
      AddRow(x, pe, plan.x_scale, d, out);
    } else if constexpr (std::is_same_v<T, float>) {
      std::memcpy(out, pe, d * sizeof(float));
    } else {
      ConvertFromF32(pe, d, out);
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_SINUSOIDAL_TOKENS_INL_H_
