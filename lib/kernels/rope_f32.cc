// f32 RoPE over a range of tokens: per token one cos/sin row (computed, or fetched from a table
// or cache), then every head of q and k. Dispatch TU: compiled once per SIMD target.
#include <cstdint>
#include <cstring>

#include "lib/kernels/rope_plan.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels/rope_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/aligned_allocator.h"
#include "lib/kernels/rope-inl.h"
#include "lib/kernels/sincos-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

template <bool kF64, bool kInterleaved, bool kInverse>
void RopeTokensF32T(const kernels::RopePlan& plan, int64_t begin, int64_t end) {
  const size_t half = static_cast<size_t>(plan.rotary_dim / 2);
  const size_t tail = static_cast<size_t>(plan.head_dim - plan.rotary_dim);
  hwy::AlignedFreeUniquePtr<float[]> scratch;
  if (plan.source == kernels::RowSource::kCompute) {
    scratch = hwy::AllocateAligned<float>(2 * half);
  }
  for (int64_t t = begin; t < end; ++t) {
    const int64_t b = t / plan.seq;
    const int64_t s = t % plan.seq;
    const float* cos;
    const float* sin;
    if (plan.source == kernels::RowSource::kPerToken) {
      cos = plan.cos_rows + t * static_cast<int64_t>(half);
      sin = plan.sin_rows + t * static_cast<int64_t>(half);
    } else {
      const int64_t pos = kernels::PositionOf(plan.positions, b, s, plan.seq);
      if (plan.source == kernels::RowSource::kByPosition) {
        cos = plan.cos_rows + pos * static_cast<int64_t>(half);
        sin = plan.sin_rows + pos * static_cast<int64_t>(half);
      } else {
        CosSinRow(static_cast<double>(pos), plan.inv_freq, half, plan.attention_factor,
                  scratch.get(), scratch.get() + half);
        cos = scratch.get();
        sin = scratch.get() + half;
      }
    }
    for (int i = 0; i < plan.num_io; ++i) {
      const kernels::HeadsIO& io = plan.io[i];
      const float* in = static_cast<const float*>(io.in) + b * io.in_stride[0] +
                        s * io.in_stride[1];
      float* out = static_cast<float*>(io.out) + b * io.out_stride[0] + s * io.out_stride[1];
      const bool in_place = in == out;
      for (int64_t h = 0; h < io.heads; ++h) {
        const float* head_in = in + h * io.in_stride[2];
        float* head_out = out + h * io.out_stride[2];
        RotateHead<kF64, kInterleaved, kInverse>(head_in, cos, sin, half, head_out);
        if (!in_place && tail != 0) {
          std::memcpy(head_out + 2 * half, head_in + 2 * half, tail * sizeof(float));
        }
      }
    }
  }
}

template <bool kF64>
void RopeTokensF32A(const kernels::RopePlan& plan, int64_t begin, int64_t end) {
  if (plan.interleaved) {
    if (plan.inverse) return RopeTokensF32T<kF64, true, true>(plan, begin, end);
    return RopeTokensF32T<kF64, true, false>(plan, begin, end);
  }
  if (plan.inverse) return RopeTokensF32T<kF64, false, true>(plan, begin, end);
  return RopeTokensF32T<kF64, false, false>(plan, begin, end);
}

void RopeTokensF32Impl(const kernels::RopePlan& plan, int64_t begin, int64_t end) {
  if (plan.f64_arithmetic) return RopeTokensF32A<true>(plan, begin, end);
  return RopeTokensF32A<false>(plan, begin, end);
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_EXPORT(RopeTokensF32Impl);
namespace kernels {
void RopeTokensF32(const RopePlan& plan, int64_t token_begin, int64_t token_end) {
  HWY_DYNAMIC_DISPATCH(RopeTokensF32Impl)(plan, token_begin, token_end);
}
}  // namespace kernels
}  // namespace posenc
#endif
