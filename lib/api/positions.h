// Internal: validation of Positions and the range they span, shared by every entry family.
#ifndef POSENC_LIB_API_POSITIONS_H_
#define POSENC_LIB_API_POSITIONS_H_

#include <cstdint>
#include <string>

#include "posenc/rope.h"
#include "posenc/status.h"

namespace posenc {
namespace api {

// The largest |angle| (radians, p * frequency) posenc reduces: 2^50. Beyond it calls fail with
// kOutOfRange rather than return meaningless values.
constexpr double kMaxAngle = 1125899906842624.0;

// Pointers non-null, offset + seq - 1 without int64 overflow. Messages name the argument `name`.
Status CheckPositions(const Positions& p, int64_t batch, int64_t seq,
                      const char* name = "positions");

// Smallest and largest position of the call, with the first token holding each.
struct PositionRange {
  int64_t min = 0, max = 0;
  int64_t min_token = 0, max_token = 0;
};
PositionRange RangeOf(const Positions& p, int64_t batch, int64_t seq);

// "[b=1, s=3]" for token index b * seq + s.
std::string TokenName(int64_t token, int64_t seq);

// kOutOfRange naming the first offending token when positions leave [0, rows).
Status CheckRowsCover(const PositionRange& r, int64_t rows, int64_t seq, const char* what);

// Largest position of a call with `batch` x `seq` tokens; validates the positions first.
Status LargestPosition(const Positions& positions, int64_t batch, int64_t seq, int64_t* out);

}  // namespace api
}  // namespace posenc

#endif  // POSENC_LIB_API_POSITIONS_H_
