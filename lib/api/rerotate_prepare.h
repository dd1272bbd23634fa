// Internal: the validation and plan of one RerotateRope call, shared by the kernel entry
// (lib/api/rerotate.cc) and the oracle (lib/reference/rerotate_reference.cc).
#ifndef POSENC_LIB_API_REROTATE_PREPARE_H_
#define POSENC_LIB_API_REROTATE_PREPARE_H_

#include "lib/api/rope_prepare.h"
#include "lib/core/rerotate_plan.h"
#include "posenc/shift.h"
#include "posenc/status.h"
#include "posenc/tensor.h"

namespace posenc {
namespace api {

// Both sides prepared (each validated exactly as ApplyRope validates it) and the plan.
struct PreparedRerotate {
  PreparedRope from, to;
  kernels::RerotatePlan plan;
};

Status PrepareRerotate(const Tensor& k, const Tensor& k_out, const RerotateParams& rp,
                       PreparedRerotate* out);

}  // namespace api
}  // namespace posenc

#endif  // POSENC_LIB_API_REROTATE_PREPARE_H_
