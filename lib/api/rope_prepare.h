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

// The copies of one call's positions that its plan reads (PrepareRopePositions).
struct RopePositions {
  PositionSnapshot positions;  // 1-D positions: plan.positions reads this copy
  // M-RoPE multi-stream ids: plan.streams read this copy. Constructed only by calls that pass
  // stream ids, so the other calls (every decode step) skip initialising it.
  std::optional<StreamSnapshot> streams;
};

// What a call's positions are checked against (set by PrepareRopeLayout): the angle limit of
// cos/sin computed on the fly (|p * inv_freq| with the largest |inv_freq|), or the rows of a
// table or a by-position cache. Per-token caches read no positions.
struct PositionLimit {
  enum class Kind { kAngle, kRows };
  Kind kind = Kind::kAngle;
  double max_freq = 0.0;          // kAngle
  int64_t rows = 0;               // kRows
  const char* rows_name = nullptr;  // kRows: "table's" or "cache's"
};

// Everything a validated call needs while its kernels run: the plan and what it points at that
// posenc owns (the positions copy, shared default frequencies). Lives on the caller's stack for
// the whole call; not copyable (the plan points into it).
struct PreparedRope {
  kernels::RopePlan plan;
  RopePositions positions;           // plan.positions / plan.streams read these copies
  std::vector<uint8_t> pair_stream;  // M-RoPE: plan.pair_stream
  int64_t mrope_sections = 0;        // params.mrope.num_sections (0: no M-RoPE)
  PositionLimit limit;
  freqs::SharedFreqs default_freqs;  // plan.inv_freq when computed from freqs.base
  // For the reference: where exact (double) cos/sin come from. Set for kCompute and for tables
  // (the table's own inv_freq and factor); caller caches are read as given.
  bool caller_cache = false;
  uint64_t cache_bytes = 0;  // of each caller cache (cos, sin)
  const double* inv_freq = nullptr;
  double attention_factor = 1.0;
};

// Validates everything up front and fills *out (a fresh PreparedRope; its contents are
// unspecified on failure). Nothing the caller passed in is written. PrepareRopeLayout, then
// PrepareRopePositions with params.positions.
Status PrepareRope(const RopeTensors& tensors, const RopeParams& params, PreparedRope* out);

// Everything but the positions: tensors, rotary_dim, layout, arithmetic, threads, M-RoPE
// sections, the cos/sin source (and what positions must satisfy for it: out->limit), and that no
// input the call reads (inv_freq, a cache or a table) overlaps an output. params.positions is not
// read. Fills *out except out->positions and the plan's position fields.
Status PrepareRopeLayout(const RopeTensors& tensors, const RopeParams& params, PreparedRope* out);

// The positions of one call with a layout PrepareRopeLayout accepted for `tensors`: copies them
// into *state (their only reads: see PositionSnapshot), points *plan (a copy of layout.plan, or
// layout.plan itself) at the copies, and checks them against layout.limit and against the
// outputs (position ids must not overlap an output). Multi-stream ids need M-RoPE sections;
// per-token caches read no positions.
Status PrepareRopePositions(const PreparedRope& layout, const RopeTensors& tensors,
                            const Positions& positions, RopePositions* state,
                            kernels::RopePlan* plan);

// Whether `a` is one of RotationArithmetic's values (a cast from the C API or Python may not be).
inline bool IsRotationArithmetic(RotationArithmetic a) {
  return a == RotationArithmetic::kF64 || a == RotationArithmetic::kF32 ||
         a == RotationArithmetic::kFmaChain;
}

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
