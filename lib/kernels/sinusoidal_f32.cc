// f32 sinusoidal encodings over a range of tokens: per token one PE row (computed with the RoPE
// angle engine, or fetched from a table), then written out or added to x. Dispatch TU.
//
// The add is out = f32(double(x) * x_scale + double(pe)): one rounding, so it equals "table,
// then add in double" bit for bit on every target.
#include <cstdint>
#include <cstring>

#include "lib/kernels/rope_plan.h"
#include "lib/kernels/sinusoidal_plan.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels/sinusoidal_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/aligned_allocator.h"
#include "lib/kernels/convert-inl.h"
#include "lib/kernels/sincos-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// PE row of one position in the plan's layout, from the per-pair sin/cos.
void LayOutRow(SinusoidalLayout layout, const float* sin, const float* cos, size_t half,
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

template <class D>
HWY_INLINE void AddLanes(D d, const float* x, const float* pe, double scale, float* out) {
  const hn::Rebind<float, D> df;
  const auto v = hn::Add(hn::Mul(hn::PromoteTo(d, hn::LoadU(df, x)), hn::Set(d, scale)),
                         hn::PromoteTo(d, hn::LoadU(df, pe)));
  hn::StoreU(DemoteF64ToF32(d, v), df, out);
}

// out[j] = f32(x[j] * scale + pe[j]) for j < n; out may equal x.
void AddRow(const float* x, const float* pe, double scale, size_t n, float* out) {
  const hn::ScalableTag<double> d;
  const hn::CappedTag<double, 1> d1;
  const size_t N = hn::Lanes(d);
  size_t j = 0;
  for (; j + N <= n; j += N) AddLanes(d, x + j, pe + j, scale, out + j);
  for (; j < n; ++j) AddLanes(d1, x + j, pe + j, scale, out + j);
}

void SinusoidalTokensF32Impl(const kernels::SinusoidalPlan& plan, int64_t begin, int64_t end) {
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
    float* out = static_cast<float*>(plan.out) + b * plan.out_stride[0] + s * plan.out_stride[1];
    if (plan.add) {
      const float* x =
          static_cast<const float*>(plan.x) + b * plan.x_stride[0] + s * plan.x_stride[1];
      AddRow(x, pe, plan.x_scale, d, out);
    } else {
      std::memcpy(out, pe, d * sizeof(float));
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_EXPORT(SinusoidalTokensF32Impl);
namespace kernels {
void SinusoidalTokensF32(const SinusoidalPlan& plan, int64_t begin, int64_t end) {
  HWY_DYNAMIC_DISPATCH(SinusoidalTokensF32Impl)(plan, begin, end);
}
}  // namespace kernels
}  // namespace posenc
#endif
