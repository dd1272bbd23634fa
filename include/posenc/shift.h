// posenc/shift.h: KV-cache position shift (llama.cpp's context shift, sliding-window eviction):
// re-rotate keys that are already rotated, by per-token (or per-batch, or uniform) deltas.
//
// Math. A RoPE rotation at position p is R(p * w) per pair (w = inv_freq[i]); rotations of one
// pair commute and add their angles, so a key rotated at p becomes the key rotated at p + delta
// by one more rotation R(delta * w): ShiftRope is ApplyRope with the deltas as positions (bitwise,
// on every target and thread count; negative deltas rotate backwards). It must use the same
// frequencies, attention factor 1 and pair layout the cache was rotated with.
//
// Error after n successive shifts (docs/shift.md derives it; tests/shift_test.cc checks it): each
// shift is one RoPE call, within B ulp of max(|x|, |y|) of its input pair (B = 2 for f32 with
// RotationArithmetic::kF64, 3 with kF32, 1 + 3 * 2^-13 for f16, 1 + 3 * 2^-16 for bf16), and
// rotations preserve the pair's norm r, so after n shifts every element is within
//     n * B * ulp_T(r) <= n * B * 2^-(p_T) * r       (p_T = 23 f32, 10 f16, 7 bf16 bits)
// of the key rotated from scratch at the final position (plus the from-scratch rotation's own
// B ulp), i.e. the error grows at most linearly in n (about sqrt(n) when the roundings behave
// randomly). A runtime that keeps (or can recompute) unrotated keys should re-rotate from them
// once n * B * ulp_T exceeds its tolerance: for bf16 / f16 caches after very few shifts (one
// shift already costs up to ~1 ulp of bf16, 2^-8 relative), for f32 caches after ~10^3 shifts
// (2.4e-4 relative at most, measured far below).
#ifndef POSENC_SHIFT_H_
#define POSENC_SHIFT_H_

#include <cstdint>

#include "posenc/export.h"
#include "posenc/rope.h"
#include "posenc/status.h"
#include "posenc/tensor.h"

namespace posenc {

struct ShiftParams {
  enum class DeltaKind { kUniform, kPerBatch, kPerToken };
  DeltaKind kind = DeltaKind::kUniform;
  int64_t delta = 0;                     // kUniform: every token moves by delta
  const int64_t* deltas = nullptr;       // kPerBatch: [batch]; kPerToken: [batch, seq]
  PairLayout pairs = PairLayout::kHalf;  // kFromConfig means kHalf
  RotationArithmetic arithmetic = RotationArithmetic::kF64;
  int64_t rotary_dim = 0;  // 0: head_dim
  Frequencies freqs;       // the cache's frequencies (attention factor must be 1)
  Execution exec;
};

// Re-rotates k ([batch, seq, heads, head_dim] view, any dtype and strides) by the deltas, into
// k_out (absent: in place). Validation as ApplyRope (messages name "deltas" for the positions);
// nothing is written on failure.
POSENC_API Status ShiftRope(const Tensor& k, const Tensor& k_out, const ShiftParams& params);

// Fused undo-at-p / redo-at-p' for frequencies that change (longrope's short -> long switch,
// dynamic NTK's new base, a YaRN factor change): keys rotated at from_positions with from_freqs
// become the keys rotated at to_positions with to_freqs, in one pass. Same tensor rules and
// messages as ApplyRope (prefixed "from: " / "to: "). Two ways to get each token's row:
//
// - Exact (both sources on the fly, the default). Per pair, with a = p_to * w_to[i] and
//   b = p_from * w_from[i], the rotation by a - b uses cos(a - b) = cos a cos b + sin a sin b (each
//   from the exact double engine) times m = to attention factor / from attention factor, rounded
//   once to f32: as accurate as a plain RoPE row (forming a - b first would lose up to ulp(a)), so
//   one call keeps ApplyRope's bound B (posenc/rope.h), provided |m| <= 1.
// - Rows (either source a RopeTable or a caller cache, CosSinSource in posenc/rope.h). Each side
//   supplies its f32 row as ApplyRope would read it (a side still on the fly computes the very row
//   a RopeTable of its frequencies holds, so a table and the on-the-fly side give the same bits); the
//   two rows are composed in double, (C_to C_from + S_to S_from, S_to C_from - C_to S_from) /
//   m_from^2, rounded once to f32, and the head rotated as ApplyRope rotates it. m_from is the
//   factor the from rows carry: the table's attention_factor(), else from_freqs.attention_factor
//   (so a from cache must hold from_freqs.attention_factor * cos / sin; to caches are used as
//   given). Not bitwise the exact way: each f32 row value is off by up to 2^-24 relative, which
//   costs up to 4 more ulp (docs/shift.md): within B + 4 ulp of max(|x|, |y|) of the exact result
//   for tables and on-the-fly rows (f32: 6 with kF64, 7 with kF32; bf16 / f16: 1 + 7 * 2^(p-23)),
//   provided |m_to / m_from| <= 1. Cos/sin cost nothing per token but two row reads: the way for a
//   runtime that keeps both longrope tables. A cache holding a table's values gives its bits.
struct RerotateParams {
  PairLayout pairs = PairLayout::kHalf;  // kFromConfig means kHalf
  RotationArithmetic arithmetic = RotationArithmetic::kF64;
  int64_t rotary_dim = 0;
  Frequencies from_freqs, to_freqs;  // read by on-the-fly sources (and from_freqs'
                                     // attention_factor by a from cache)
  Positions from_positions, to_positions;  // ignored by a per-token cache of that side
  CosSinSource from_source, to_source;     // on the fly, a RopeTable or a caller cache each
  Execution exec;
};
POSENC_API Status RerotateRope(const Tensor& k, const Tensor& k_out, const RerotateParams& params);

namespace reference {
// The same in double (posenc::reference::ApplyRope with the deltas as positions).
POSENC_API Status ShiftRope(const Tensor& k, const Tensor& k_out, const ShiftParams& params);
// Double: each side's row in double (libm cos/sin of its angle times its factor for on-the-fly
// sides and tables, a cache's values as given), composed as above in double, rounded once.
POSENC_API Status RerotateRope(const Tensor& k, const Tensor& k_out, const RerotateParams& params);
}  // namespace reference

}  // namespace posenc

#endif  // POSENC_SHIFT_H_
