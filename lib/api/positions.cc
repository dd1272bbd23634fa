#include "lib/api/positions.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "lib/api/tensor_checks.h"
#include "lib/core/rope_plan.h"

namespace posenc {
namespace api {

Status PositionSnapshot::Take(const Positions& p, int64_t batch, int64_t seq, const char* name,
                              Positions* out) {
  Positions& dest = out != nullptr ? *out : positions_;
  dest = Positions();
  switch (p.kind) {
    case Positions::Kind::kOffset: {
      int64_t last;
      if (__builtin_add_overflow(p.offset, seq - 1, &last)) {
        return Err(StatusCode::kInvalidArgument, name, ".offset = ", p.offset,
                   ": offset + seq - 1 overflows int64");
      }
      dest = Positions::Offset(p.offset);
      return Status::Ok();
    }
    case Positions::Kind::kPerBatchOffsets:
    case Positions::Kind::kIds32:
    case Positions::Kind::kIds64:
      break;
    case Positions::Kind::kStreamIds32:
    case Positions::Kind::kStreamIds64:
      return Err(StatusCode::kInvalidArgument, name, ".kind = ",
                 p.kind == Positions::Kind::kStreamIds32 ? "kStreamIds32" : "kStreamIds64",
                 ": multi-stream (M-RoPE) ids are accepted only by ApplyRope with mrope sections");
    default:
      return Err(StatusCode::kInvalidArgument, name, ".kind = ", static_cast<int>(p.kind),
                 ": not a Positions::Kind");
  }
  const bool per_batch = p.kind == Positions::Kind::kPerBatchOffsets;
  if (per_batch && p.batch_offsets == nullptr) {
    return Err(StatusCode::kInvalidArgument, name, ".batch_offsets is null");
  }
  if (p.kind == Positions::Kind::kIds32 && p.ids32 == nullptr) {
    return Err(StatusCode::kInvalidArgument, name, ".ids32 is null");
  }
  if (p.kind == Positions::Kind::kIds64 && p.ids64 == nullptr) {
    return Err(StatusCode::kInvalidArgument, name, ".ids64 is null");
  }
  const bool ids32 = p.kind == Positions::Kind::kIds32;
  const std::string field =
      std::string(name) + (per_batch ? ".batch_offsets" : ids32 ? ".ids32" : ".ids64");
  Status st = per_batch ? CheckAligned(p.batch_offsets, 8, field.c_str())
              : ids32   ? CheckAligned(p.ids32, 4, field.c_str())
                        : CheckAligned(p.ids64, 8, field.c_str());
  if (!st.ok()) return st;
  int64_t n = batch;  // an output view of batch x seq tokens was validated: no overflow, but check
  if (!per_batch && __builtin_mul_overflow(batch, seq, &n)) {
    return Err(StatusCode::kInvalidArgument, name, ": batch * seq = ", batch, " * ", seq,
               " overflows int64");
  }
  int64_t* copy = inline_;
  if (n > kInline) {
    heap_.resize(static_cast<size_t>(n));
    copy = heap_.data();
  }
  if (p.kind == Positions::Kind::kIds32) {
    for (int64_t i = 0; i < n; ++i) copy[i] = p.ids32[i];
  } else {
    const int64_t* src = per_batch ? p.batch_offsets : p.ids64;
    for (int64_t i = 0; i < n; ++i) copy[i] = src[i];
  }
  if (per_batch) {
    for (int64_t b = 0; b < batch; ++b) {
      int64_t last;
      if (__builtin_add_overflow(copy[b], seq - 1, &last)) {
        return Err(StatusCode::kInvalidArgument, name, ".batch_offsets[", b, "] = ", copy[b],
                   ": offset + seq - 1 overflows int64");
      }
    }
    dest = Positions::PerBatch(copy);
  } else {
    dest = Positions::Ids(static_cast<const int64_t*>(copy));
  }
  return Status::Ok();
}

Status StreamSnapshot::Take(const Positions& p, int64_t batch, int64_t seq, int64_t streams) {
  streams_ = 0;
  const bool ids32 = p.kind == Positions::Kind::kStreamIds32;
  if (!ids32 && p.kind != Positions::Kind::kStreamIds64) {
    return Err(StatusCode::kInvalidArgument, "positions.kind = ", static_cast<int>(p.kind),
               ": not a Positions::Kind");
  }
  if (p.streams != streams) {
    return Err(StatusCode::kInvalidArgument, "positions.streams = ", p.streams,
               ": must equal mrope.num_sections = ", streams, " (one position stream per section)");
  }
  if (streams < 1 || streams > kMaxStreams) {
    return Err(StatusCode::kInvalidArgument, "positions.streams = ", streams, ": must be in [1, ",
               kMaxStreams, "]");
  }
  if (ids32 ? p.ids32 == nullptr : p.ids64 == nullptr) {
    return Err(StatusCode::kInvalidArgument, ids32 ? "positions.ids32" : "positions.ids64",
               " is null");
  }
  Status st = ids32 ? CheckAligned(p.ids32, 4, "positions.ids32")
                    : CheckAligned(p.ids64, 8, "positions.ids64");
  if (!st.ok()) return st;
  int64_t per_stream, n;
  if (__builtin_mul_overflow(batch, seq, &per_stream) ||
      __builtin_mul_overflow(per_stream, streams, &n)) {
    return Err(StatusCode::kInvalidArgument, "positions: streams * batch * seq = ", streams, " * ",
               batch, " * ", seq, " overflows int64");
  }
  int64_t* copy = inline_;
  if (n > kInline) {
    heap_.resize(static_cast<size_t>(n));
    copy = heap_.data();
  }
  if (ids32) {
    for (int64_t i = 0; i < n; ++i) copy[i] = p.ids32[i];
  } else {
    for (int64_t i = 0; i < n; ++i) copy[i] = p.ids64[i];
  }
  for (int64_t j = 0; j < streams; ++j) {
    stream_[j] = Positions::Ids(static_cast<const int64_t*>(copy + j * per_stream));
  }
  streams_ = streams;
  return Status::Ok();
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

Status CheckAngle(double x, double max_freq, const std::string& argument, int64_t value,
                  const char* formula) {
  if (AngleWithinLimit(x, max_freq)) return Status::Ok();
  return Err(StatusCode::kOutOfRange, argument, " = ", value, ": angle ", formula, " = ",
             std::fabs(x) * max_freq, " exceeds 2^50, the largest angle posenc reduces");
}

Status CheckPositionAngle(const PositionRange& r, int64_t offset, double max_freq, int64_t seq,
                          const char* formula) {
  const double lo = std::fabs(static_cast<double>(r.min + offset));
  const double hi = std::fabs(static_cast<double>(r.max + offset));
  const bool at_max = hi >= lo;
  // The token's name is formatted only for a message (else a decode step pays an ostringstream).
  if (AngleWithinLimit(at_max ? hi : lo, max_freq)) return Status::Ok();
  return CheckAngle(at_max ? hi : lo, max_freq,
                    "positions" + TokenName(at_max ? r.max_token : r.min_token, seq),
                    at_max ? r.max : r.min, formula);
}

Status LargestPosition(const Positions& positions, int64_t batch, int64_t seq, int64_t* out) {
  PositionSnapshot snapshot;
  Status st = snapshot.Take(positions, batch, seq);
  if (!st.ok()) return st;
  *out = RangeOf(snapshot.positions(), batch, seq).max;
  return Status::Ok();
}

PositionBytes CallerPositionBytes(const Positions& p, int64_t batch, int64_t seq) {
  // Saturating: an absurd extent makes the overlap check conservative, never wrap.
  auto bytes = [](int64_t n, uint64_t size) {
    uint64_t b;
    return __builtin_mul_overflow(static_cast<uint64_t>(n), size, &b) ? UINT64_MAX : b;
  };
  switch (p.kind) {
    case Positions::Kind::kPerBatchOffsets:
      return {p.batch_offsets, bytes(batch, 8), "positions.batch_offsets"};
    case Positions::Kind::kIds32:
      return {p.ids32, bytes(batch * seq, 4), "positions.ids32"};
    case Positions::Kind::kIds64:
      return {p.ids64, bytes(batch * seq, 8), "positions.ids64"};
    case Positions::Kind::kStreamIds32:  // saturating: streams was validated, batch * seq too
      return {p.ids32, bytes(batch * seq, 4 * static_cast<uint64_t>(p.streams)), "positions.ids32"};
    case Positions::Kind::kStreamIds64:
      return {p.ids64, bytes(batch * seq, 8 * static_cast<uint64_t>(p.streams)), "positions.ids64"};
    default:
      return {};
  }
}

}  // namespace api
}  // namespace posenc
