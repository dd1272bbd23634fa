#include "lib/api/positions.h"

#include <sstream>

#include "lib/api/tensor_checks.h"
#include "lib/kernels/rope_plan.h"

namespace posenc {
namespace api {

Status CheckPositions(const Positions& p, int64_t batch, int64_t seq, const char* name) {
  switch (p.kind) {
    case Positions::Kind::kOffset: {
      int64_t last;
      if (__builtin_add_overflow(p.offset, seq - 1, &last)) {
        return Err(StatusCode::kInvalidArgument, name, ".offset = ", p.offset,
                   ": offset + seq - 1 overflows int64");
      }
      return Status::Ok();
    }
    case Positions::Kind::kPerBatchOffsets:
      if (p.batch_offsets == nullptr) {
        return Err(StatusCode::kInvalidArgument, name, ".batch_offsets is null");
      }
      for (int64_t b = 0; b < batch; ++b) {
        int64_t last;
        if (__builtin_add_overflow(p.batch_offsets[b], seq - 1, &last)) {
          return Err(StatusCode::kInvalidArgument, name, ".batch_offsets[", b,
                     "] = ", p.batch_offsets[b], ": offset + seq - 1 overflows int64");
        }
      }
      return Status::Ok();
    case Positions::Kind::kIds32:
      if (p.ids32 == nullptr) return Err(StatusCode::kInvalidArgument, name, ".ids32 is null");
      return Status::Ok();
    case Positions::Kind::kIds64:
      if (p.ids64 == nullptr) return Err(StatusCode::kInvalidArgument, name, ".ids64 is null");
      return Status::Ok();
  }
  return Err(StatusCode::kInvalidArgument, name, ".kind = ", static_cast<int>(p.kind),
             ": not a Positions::Kind");
}

PositionRange RangeOf(const Positions& p, int64_t batch, int64_t seq) {
  PositionRange r;
  r.min = r.max = kernels::PositionOf(p, 0, 0, seq);
  for (int64_t b = 0; b < batch; ++b) {
    // Offsets grow with s: only the first and last token of a row can be extreme.
    const bool monotonic = p.kind == Positions::Kind::kOffset ||
                           p.kind == Positions::Kind::kPerBatchOffsets;
    for (int64_t s = 0; s < seq; ++s) {
      if (monotonic && s != 0 && s != seq - 1) continue;
      const int64_t v = kernels::PositionOf(p, b, s, seq);
      if (v < r.min) r = {v, r.max, b * seq + s, r.max_token};
      if (v > r.max) r = {r.min, v, r.min_token, b * seq + s};
    }
  }
  return r;
}

std::string TokenName(int64_t token, int64_t seq) {
  std::ostringstream os;
  os << "[b=" << token / seq << ", s=" << token % seq << "]";
  return os.str();
}

Status CheckRowsCover(const PositionRange& r, int64_t rows, int64_t seq, const char* what) {
  if (r.min < 0) {
    return Err(StatusCode::kOutOfRange, "positions", TokenName(r.min_token, seq), " = ", r.min,
               ": outside the ", what, " rows [0, ", rows, ")");
  }
  if (r.max >= rows) {
    return Err(StatusCode::kOutOfRange, "positions", TokenName(r.max_token, seq), " = ", r.max,
               ": outside the ", what, " rows [0, ", rows, ")");
  }
  return Status::Ok();
}

Status LargestPosition(const Positions& positions, int64_t batch, int64_t seq, int64_t* out) {
  Status st = CheckPositions(positions, batch, seq);
  if (!st.ok()) return st;
  *out = RangeOf(positions, batch, seq).max;
  return Status::Ok();
}

}  // namespace api
}  // namespace posenc
