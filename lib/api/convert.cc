// The public bf16 / f16 <-> f32 conversions (posenc/half.h): validation here, the dispatched
// conversion in lib/kernels/convert.cc.
#include <cstddef>

#include "lib/api/targets_internal.h"
#include "lib/core/guard.h"
#include "lib/api/tensor_checks.h"
#include "lib/kernels/registry.h"
#include "posenc/half.h"
#include "posenc/tensor.h"

namespace posenc {
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
  return api::Guarded("posenc::ConvertToF32", [&] {
    Status st = CheckConvert(src, dst, dtype, n);
    if (st.ok() && n != 0) kernels::ToF32(src, dtype, n, dst);
    return st;
  });
}

Status ConvertFromF32(const float* src, size_t n, DType dtype, void* dst) {
  return api::Guarded("posenc::ConvertFromF32", [&] {
    Status st = CheckConvert(src, dst, dtype, n);
    if (st.ok() && n != 0) kernels::FromF32(src, n, dtype, dst);
    return st;
  });
}
}  // namespace posenc
