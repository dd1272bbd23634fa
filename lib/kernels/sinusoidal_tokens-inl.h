// Per-target sinusoidal encodings over a range of tokens for storage type T (float,
// hwy::bfloat16_t, hwy::float16_t): per token one f32 PE row (the angle engine's bits, computed
// in blocks of consecutive positions by sinusoidal_rotate-inl.h, or fetched from a table), then
// written out or added to x. Each dtype's dispatch TU instantiates SinusoidalTokens<T>.
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

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"
#include "lib/kernels/demote-inl.h"
#include "lib/kernels/half-inl.h"
#include "lib/core/rope_plan.h"
#include "lib/kernels/sincos-inl.h"
#include "lib/kernels/sinusoidal_rotate-inl.h"
#include "lib/core/sinusoidal_plan.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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

// The row of token t in a [batch, seq] view with the given strides.
template <class T>
HWY_INLINE T* RowOf(T* base, const int64_t* stride, int64_t t, int64_t seq) {
  return base + (t / seq) * stride[0] + (t % seq) * stride[1];
}

// Computed rows go through a scratch block when they are not the output (adds, half types):
// at most this many floats, so the block stays in L2.
constexpr size_t kScratchFloats = 32768;

// out = PE (or x * x_scale + PE) for tokens [begin, end). Rows are computed in blocks of
// consecutive positions (SinusoidalBlockRows: the engine's bits, so the split into blocks, like
// the split into threads, changes no output).
template <class T>
void SinusoidalTokens(const kernels::SinusoidalPlan& plan, int64_t begin, int64_t end) {
  const size_t d = static_cast<size_t>(plan.d_model);
  const size_t half = d / 2;
  T* const out = static_cast<T*>(plan.out);
  const auto id = [&plan](int64_t t) {
    return kernels::PositionOf(plan.positions, t / plan.seq, t % plan.seq, plan.seq);
  };
  const auto finish = [&plan, out, d](int64_t t, const float* pe) {
    T* o = RowOf(out, plan.out_stride, t, plan.seq);
    if (plan.add) {
      AddRow(RowOf(static_cast<const T*>(plan.x), plan.x_stride, t, plan.seq), pe, plan.x_scale,
             d, o);
    } else if constexpr (std::is_same_v<T, float>) {
      std::memcpy(o, pe, d * sizeof(float));
    } else {
      ConvertFromF32(pe, d, o);
    }
  };
  if (plan.table_rows != nullptr) {
    for (int64_t t = begin; t < end; ++t) finish(t, plan.table_rows + id(t) * plan.d_model);
    return;
  }
  const auto position = [&](int64_t t) { return id(t) + plan.position_offset; };
  const bool direct = !plan.add && std::is_same_v<T, float>;  // rows are written in place
  size_t max_rows = direct ? kSinusoidalBlockRows : std::min(kSinusoidalBlockRows, kScratchFloats / d);
  if (max_rows == 0 || end - begin < 2) max_rows = 1;
  hwy::AlignedFreeUniquePtr<float[]> scratch;
  if (!direct) scratch = hwy::AllocateAligned<float>(max_rows * d);
  ConsecutiveRowBlocks blocks(plan.freqs, half, plan.layout);
  float* rows[kSinusoidalBlockRows];
  for (int64_t t = begin; t < end;) {
    const int64_t p0 = position(t);
    size_t n = ConsecutiveRun(position, t, end, max_rows, p0);
    for (size_t j = 0; j < n; ++j) {
      const int64_t tj = t + static_cast<int64_t>(j);
      if constexpr (std::is_same_v<T, float>) {
        rows[j] = direct ? RowOf(out, plan.out_stride, tj, plan.seq) : scratch.get() + j * d;
      } else {
        rows[j] = scratch.get() + j * d;
      }
    }
    n = blocks.Write(p0, n, rows);
    if (!direct) {
      for (size_t j = 0; j < n; ++j) finish(t + static_cast<int64_t>(j), rows[j]);
    }
    t += static_cast<int64_t>(n);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#endif  // POSENC_LIB_KERNELS_SINUSOIDAL_TOKENS_INL_H_
