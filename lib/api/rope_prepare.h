// Internal: validation and planning of a RoPE call, shared by posenc::ApplyRope and
// posenc::reference::ApplyRope so both accept and reject exactly the same inputs.
#ifndef POSENC_LIB_API_ROPE_PREPARE_H_
#define POSENC_LIB_API_ROPE_PREPARE_H_

#include "lib/kernels/rope_plan.h"
#include "posenc/rope.h"
#include "posenc/status.h"

namespace posenc {
namespace api {

struct PreparedRope {
  kernels::RopePlan plan;
  // For the reference: where exact (double) cos/sin come from. Set for kCompute and for tables
  // (the table's own inv_freq and factor); caller caches are read as given.
  bool caller_cache = false;
  const double* inv_freq = nullptr;
  double attention_factor = 1.0;
};

// Validates everything up front and fills *out (a fresh PreparedRope; its contents are
// unspecified on failure). Nothing the caller passed in is written.
Status PrepareRope(const RopeTensors& tensors, const RopeParams& params, PreparedRope* out);

// Frequencies checks shared with RopeTable::Create.
Status CheckFrequencies(const Frequencies& freqs, int64_t rotary_dim);

}  // namespace api
}  // namespace posenc

#endif  // POSENC_LIB_API_ROPE_PREPARE_H_
