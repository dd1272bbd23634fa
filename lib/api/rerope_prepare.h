// Internal: validation and planning of a RelativeRopeScores call, shared by the kernels' entry
// point and posenc::reference so both accept and reject exactly the same inputs.
#ifndef POSENC_LIB_API_REROPE_PREPARE_H_
#define POSENC_LIB_API_REROPE_PREPARE_H_

#include "lib/api/positions.h"
#include "lib/freqs/inv_freq.h"
#include "lib/core/rerope_plan.h"
#include "posenc/rerope.h"
#include "posenc/status.h"

namespace posenc {
namespace api {

struct PreparedRerope {
  kernels::ReropePlan plan;
  // Frequencies and attention factor in force (the table's, or params.freqs'), for the reference.
  const double* inv_freq = nullptr;
  double attention_factor = 1.0;
  // Copies of the caller's positions; plan.q_positions / plan.k_positions read these.
  PositionSnapshot q_positions, k_positions;
  // Owns the memoised default frequencies plan.inv_freq points into (see freqs::SharedFreqs).
  freqs::SharedFreqs default_freqs;
};

// Validates everything up front and fills *out (contents unspecified on failure). Nothing the
// caller passed in is written.
Status PrepareRerope(const RelativeRopeTensors& tensors, const RelativeRopeParams& params,
                     PreparedRerope* out);

// mode a DistanceMode, window > 0 unless kExact, leak finite and > 1 for kLeaky; messages start
// with `name` ("map").
Status CheckDistanceMap(const DistanceMap& map, const char* name);

// Largest |angle| the call's distances reach for frequencies with max |inv_freq| = max_freq:
// f(max_distance) * max_freq, checked against 2^50 (kOutOfRange naming `what` otherwise).
Status CheckMappedAngle(const DistanceMap& map, int64_t max_distance, double max_freq,
                        const char* what);

}  // namespace api
}  // namespace posenc

#endif  // POSENC_LIB_API_REROPE_PREPARE_H_
