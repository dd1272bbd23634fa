// Internal: the public entries take their row kernel from the registry (lib/kernels/registry.h).
#ifndef POSENC_LIB_API_KERNEL_CHOICE_H_
#define POSENC_LIB_API_KERNEL_CHOICE_H_

#include "lib/api/tensor_checks.h"
#include "lib/kernels/registry.h"
#include "posenc/status.h"
#include "posenc/tensor.h"

namespace posenc {
namespace api {

// The registered kernel of (op, dtype) for a validated plan; kInternal (a registry bug: the
// registry test checks every entry) when none is registered.
template <class Plan>
Status ChooseKernel(kernels::KernelOp op, DType dtype, kernels::RowKernel<Plan>* out) {
  *out = kernels::FindKernel<Plan>(op, dtype);
  if (*out == nullptr) {
    return Err(StatusCode::kInternal, "no ", kernels::KernelOpName(op),
               " kernel is registered for dtype ", static_cast<int>(dtype));
  }
  return Status::Ok();
}

}  // namespace api
}  // namespace posenc

#endif  // POSENC_LIB_API_KERNEL_CHOICE_H_
