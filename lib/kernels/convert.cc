// Dispatch TU for the bf16 / f16 <-> f32 conversions behind posenc/half.h (lib/api/convert.cc).
#include <cstddef>
#include <cstdint>

#include "lib/kernels/registry.h"
#include "posenc/tensor.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels/convert.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/kernels/half-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

void ToF32Impl(const void* src, DType dtype, size_t n, float* dst) {
  if (dtype == DType::kBF16) return ConvertToF32(static_cast<const hwy::bfloat16_t*>(src), n, dst);
  if (dtype == DType::kF16) return ConvertToF32(static_cast<const hwy::float16_t*>(src), n, dst);
  ConvertToF32(static_cast<const float*>(src), n, dst);
}

void FromF32Impl(const float* src, size_t n, DType dtype, void* dst) {
  if (dtype == DType::kBF16) return ConvertFromF32(src, n, static_cast<hwy::bfloat16_t*>(dst));
  if (dtype == DType::kF16) return ConvertFromF32(src, n, static_cast<hwy::float16_t*>(dst));
  ConvertFromF32(src, n, static_cast<float*>(dst));
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_EXPORT(ToF32Impl);
HWY_EXPORT(FromF32Impl);
namespace kernels {
void ToF32(const void* src, DType dtype, size_t n, float* dst) {
  HWY_DYNAMIC_DISPATCH(ToF32Impl)(src, dtype, n, dst);
}
void FromF32(const float* src, size_t n, DType dtype, void* dst) {
  HWY_DYNAMIC_DISPATCH(FromF32Impl)(src, n, dtype, dst);
}
}  // namespace kernels
}  // namespace posenc
#endif
