// posenc/positions.h: which position each token (b, s) of a [batch, seq, ...] call has.
//
// The token-row entries (ApplyRope, the sinusoidal encodings, ReRoPE) take a Positions;
// each entry's header says which kinds it accepts. The arrays are only read, during the call
// (posenc copies the ids once at its start). posenc/rope.h includes this header.
#ifndef POSENC_POSITIONS_H_
#define POSENC_POSITIONS_H_

#include <cstdint>

namespace posenc {

// Which position each token (b, s) has.
struct Positions {
  enum class Kind { kOffset, kPerBatchOffsets, kIds32, kIds64, kStreamIds32, kStreamIds64 };
  Kind kind = Kind::kOffset;
  int64_t offset = 0;                      // kOffset: p = offset + s
  const int64_t* batch_offsets = nullptr;  // kPerBatchOffsets: p = batch_offsets[b] + s, [batch]
  const int32_t* ids32 = nullptr;          // kIds32: p = ids32[b * seq + s], [batch, seq]
  const int64_t* ids64 = nullptr;          // kIds64: p = ids64[b * seq + s], [batch, seq]
  // kStreamIds32 / kStreamIds64 (M-RoPE): `streams` position streams per token, ids32 / ids64
  // [streams, batch, seq] (HF's position_ids [3, batch, seq] for (t, h, w)): stream j of token
  // (b, s) is ids[(j * batch + b) * seq + s]. Only ApplyRope with RopeParams::mrope (or a
  // config with mrope_section) accepts them; every other entry rejects them.
  int64_t streams = 0;

  static Positions Offset(int64_t start) {
    Positions p;
    p.offset = start;
    return p;
  }
  static Positions PerBatch(const int64_t* offsets) {
    Positions p;
    p.kind = Kind::kPerBatchOffsets;
    p.batch_offsets = offsets;
    return p;
  }
  static Positions Ids(const int32_t* ids) {
    Positions p;
    p.kind = Kind::kIds32;
    p.ids32 = ids;
    return p;
  }
  static Positions Ids(const int64_t* ids) {
    Positions p;
    p.kind = Kind::kIds64;
    p.ids64 = ids;
    return p;
  }
  static Positions StreamIds(const int32_t* ids, int64_t num_streams) {
    Positions p;
    p.kind = Kind::kStreamIds32;
    p.ids32 = ids;
    p.streams = num_streams;
    return p;
  }
  static Positions StreamIds(const int64_t* ids, int64_t num_streams) {
    Positions p;
    p.kind = Kind::kStreamIds64;
    p.ids64 = ids;
    p.streams = num_streams;
    return p;
  }
};

}  // namespace posenc

#endif  // POSENC_POSITIONS_H_
