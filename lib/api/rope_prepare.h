// Internal: validation and planning of a RoPE call, shared by posenc::ApplyRope and
// posenc::reference::ApplyRope so both accept and reject exactly the same inputs.
#ifndef POSENC_LIB_API_ROPE_PREPARE_H_
#define POSENC_LIB_API_ROPE_PREPARE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "lib/api/positions.h"
#include "lib/freqs/inv_freq.h"
#include "lib/core/rope_plan.h"
#include "posenc/rope.h"
#include "posenc/status.h"

namespace posenc {
namespace api {

// Everything a validated call needs while its kernels run: the plan and what it points at that
// posenc owns (the positions copy, shared default frequencies). Lives on the caller's stack for
// the whole call; not copyable (the plan points into it).
struct PreparedRope {
  kernels::RopePlan plan;
  PositionSnapshot positions;       // plan.positions reads this copy
  // M-RoPE multi-stream ids: plan.streams read this copy. Constructed only by calls that pass
  // stream ids, so the other calls (every decode step) skip initialising it.
  std::optional<StreamSnapshot> streams;
  std::vector<uint8_t> pair_stream;  // M-RoPE: plan.pair_stream
  freqs::SharedFreqs default_freqs;  // plan.inv_freq when computed from freqs.base
  // For the reference: where exact (double) cos/sin come from. Set for kCompute and for tables
  // (the table's own inv_freq and factor); caller caches are read as given.
  bool caller_cache = false;
  uint64_t cache_bytes = 0;  // of each caller cache (cos, sin)
  const double* inv_freq = nullptr;
  double attention_factor = 1.0;
};

// Validates everything up front and fills *out (a fresh PreparedRope; its contents are
// unspecified on failure). Nothing the caller passed in is written.
Status PrepareRope(const RopeTensors& tensors, const RopeParams& params, PreparedRope* out);

// Validates params.mrope for rotary_dim and fills the pair -> stream map (MRopeSections in
// posenc/rope.h). Messages name "mrope.<field>".
Status BuildPairStreams(const MRopeSections& mrope, int64_t rotary_dim, std::vector<uint8_t>* out);

// The tensor part of PrepareRope (views, shapes, dtypes, overlaps between q, k and outputs).
Status CheckRopeTensors(const RopeTensors& tensors);

// The frequencies of an on-the-fly call or of a table (RoPE and ReRoPE, calls and tables),
// checked once: attention_factor finite; the caller's inv_freq array (aligned, rotary_dim / 2
// finite values) or the shared default computed from a finite base > 0, whose values must be
// finite too (a subnormal base overflows them). Messages name "freqs.<field>".
struct CheckedFrequencies {
  const double* inv_freq = nullptr;  // rotary_dim / 2 values: the caller's array or *computed
  freqs::SharedFreqs computed;       // set when computed from freqs.base
  double max_freq = 0.0;             // the largest |inv_freq[i]|
};
Status CheckFrequencies(const Frequencies& freqs, int64_t rotary_dim, CheckedFrequencies* out);

}  // namespace api
}  // namespace posenc

#endif  // POSENC_LIB_API_ROPE_PREPARE_H_
