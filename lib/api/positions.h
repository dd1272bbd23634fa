// Internal: the positions of one call (read once from the caller's memory), their validation
// and the range they span, shared by every entry family.
#ifndef POSENC_LIB_API_POSITIONS_H_
#define POSENC_LIB_API_POSITIONS_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "posenc/rope.h"
#include "posenc/status.h"

namespace posenc {
namespace api {

// The largest |angle| (radians, p * frequency) posenc reduces: 2^50. Beyond it calls fail with
// kOutOfRange rather than return meaningless values.
constexpr double kMaxAngle = 1125899906842624.0;

// Whether |x| * max_freq is an angle posenc reduces (<= kMaxAngle; a NaN product passes, as
// before: NaN frequencies are rejected by the frequency checks).
inline bool AngleWithinLimit(double x, double max_freq) {
  return !(std::fabs(x) * max_freq > kMaxAngle);
}

// The one angle-limit check of every entry: kOutOfRange unless |x| * max_freq <= kMaxAngle, as
// "<argument> = <value>: angle <formula> = <|x| * max_freq> exceeds 2^50, the largest angle
// posenc reduces". `x` is what multiplies the frequency (a position, a mapped distance), `value`
// the argument's value as the caller gave it.
Status CheckAngle(double x, double max_freq, const std::string& argument, int64_t value,
                  const char* formula);

// A copy of the caller's position ids / per-batch offsets, taken once at the start of a call.
// Validation, planning and the kernels read only this copy, so ids that another thread changes
// during the call (or that sit in an output's memory: rejected anyway) cannot move an index
// outside the range that was validated. Cost: 8 bytes per token read and written once (a
// Llama-shaped call moves 40 KB per token); calls of up to kInline tokens copy into the object
// itself, so a decode step allocates nothing.
class PositionSnapshot {
 public:
  static constexpr int64_t kInline = 256;
  PositionSnapshot() = default;
  PositionSnapshot(const PositionSnapshot&) = delete;
  PositionSnapshot& operator=(const PositionSnapshot&) = delete;

  // Copies `p` for a call of batch x seq tokens and validates the copy: non-null pointers, a
  // known kind, offset + seq - 1 without int64 overflow. kIds32 ids are widened to int64.
  // Messages name the argument `name` (e.g. "q_positions").
  // With `out`, the copy's Positions is written to *out (a plan's field) instead of kept here
  // (positions() is then not set): a plan read right after would otherwise load the struct just
  // stored field by field here, a failed store forwarding that cost ~10 ns a decode step
  // (docs/performance.md section 3.25).
  Status Take(const Positions& p, int64_t batch, int64_t seq, const char* name = "positions",
              Positions* out = nullptr);
  // Positions reading the copy (kOffset, kPerBatchOffsets or kIds64); valid while *this lives.
  const Positions& positions() const { return positions_; }

 private:
  Positions positions_;
  int64_t inline_[kInline];
  std::vector<int64_t> heap_;
};

// The multi-stream ids of an M-RoPE call (Positions::Kind::kStreamIds32 / kStreamIds64,
// [streams, batch, seq]) copied once, like PositionSnapshot: each stream j is then a plain
// Positions (kIds64 over the copy, [batch, seq]) that RangeOf, PositionOf and the kernels read.
class StreamSnapshot {
 public:
  static constexpr int64_t kMaxStreams = 4;
  static constexpr int64_t kInline = 3 * 256;
  // User-provided (not = default) so that value-initialisation (std::optional::emplace) does not
  // zero the 6 KiB inline buffer that Take overwrites.
  StreamSnapshot() {}
  StreamSnapshot(const StreamSnapshot&) = delete;
  StreamSnapshot& operator=(const StreamSnapshot&) = delete;

  // Copies `p` for batch x seq tokens: a stream kind, non-null aligned ids, p.streams ==
  // `streams` (the number of M-RoPE sections; 1..kMaxStreams). Messages name "positions".
  Status Take(const Positions& p, int64_t batch, int64_t seq, int64_t streams);
  int64_t streams() const { return streams_; }
  const Positions& stream(int64_t j) const { return stream_[j]; }
  const Positions* all_streams() const { return stream_; }  // streams() of them

 private:
  int64_t streams_ = 0;
  Positions stream_[kMaxStreams];
  int64_t inline_[kInline];
  std::vector<int64_t> heap_;
};

// Smallest and largest position of the call, with the first token holding each. `p` must have
// been validated (a PositionSnapshot's positions).
struct PositionRange {
  int64_t min = 0, max = 0;
  int64_t min_token = 0, max_token = 0;
};
PositionRange RangeOf(const Positions& p, int64_t batch, int64_t seq);

// "[b=1, s=3]" for token index b * seq + s.
std::string TokenName(int64_t token, int64_t seq);

// kOutOfRange naming the first offending token when positions leave [0, rows).
Status CheckRowsCover(const PositionRange& r, int64_t rows, int64_t seq, const char* what);

// CheckAngle for the position of `r` farthest from 0 once `offset` is added (the caller has
// checked that the sums fit in int64), naming that token: "positions[b=0, s=3] = p: angle ...".
Status CheckPositionAngle(const PositionRange& r, int64_t offset, double max_freq, int64_t seq,
                          const char* formula);

// Largest position of a call with `batch` x `seq` tokens; validates the positions first.
Status LargestPosition(const Positions& positions, int64_t batch, int64_t seq, int64_t* out);

// The caller's memory the positions are read from (ids or offsets; none for kOffset), for the
// overlap checks against outputs. Call before taking a snapshot replaces them.
struct PositionBytes {
  const void* data = nullptr;
  uint64_t bytes = 0;
  const char* name = "";
};
PositionBytes CallerPositionBytes(const Positions& p, int64_t batch, int64_t seq);

}  // namespace api
}  // namespace posenc

#endif  // POSENC_LIB_API_POSITIONS_H_
