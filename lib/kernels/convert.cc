// Dispatch TU for the public bf16 / f16 <-> f32 conversions (posenc/half.h).
#include <cstddef>
#include <cstdint>

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
#include "lib/api/targets_internal.h"
#include "lib/api/tensor_checks.h"
#include "posenc/half.h"

namespace posenc {
HWY_EXPORT(ToF32Impl);
HWY_EXPORT(FromF32Impl);

namespace {
Status CheckConvert(const void* src, const void* dst, DType dtype, size_t n) {
  const Status& env = api::EnsureTargetsInitialized();
  if (!env.ok()) return env;
  if (dtype != DType::kF32 && dtype != DType::kBF16 && dtype != DType::kF16) {
    return api::Err(StatusCode::kInvalidArgument, "dtype = ", static_cast<int>(dtype),
                    ": not a posenc::DType");
  }
  if (n == 0) return Status::Ok();
  if (src == nullptr) return Status(StatusCode::kInvalidArgument, "src is null");
  if (dst == nullptr) return Status(StatusCode::kInvalidArgument, "dst is null");
  return Status::Ok();
}
}  // namespace

Status ConvertToF32(const void* src, DType dtype, size_t n, float* dst) {
  Status st = CheckConvert(src, dst, dtype, n);
  if (st.ok() && n != 0) HWY_DYNAMIC_DISPATCH(ToF32Impl)(src, dtype, n, dst);
  return st;
}

Status ConvertFromF32(const float* src, size_t n, DType dtype, void* dst) {
  Status st = CheckConvert(src, dst, dtype, n);
  if (st.ok() && n != 0) HWY_DYNAMIC_DISPATCH(FromF32Impl)(src, n, dtype, dst);
  return st;
}
}  // namespace posenc
#endif
