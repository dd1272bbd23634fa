// The rotation's arithmetic alone, as a floor for the suite's RoPE rows ("source": "floor").
//
// Each floor rotates Llama-3-8B-shaped heads (head_dim 128, half-layout pairs, in place) with the
// token's cos / sin row held in registers (where the target's vectors can form arrays), and does
// nothing else: no validation, no dispatch through posenc, no cos / sin evaluation, no NaN probe,
// no tail. What is left is the arithmetic the accuracy contract asks of each output, so where
// that arithmetic sets the time (data in L1 / L2: the suite times floors at 1 and 16 tokens
// only) a call of posenc with it cannot be faster than its floor on the same bytes, and the
// floor's time over the in-place scale's bounds how close posenc can get to a goal stated in
// units of that scale (docs/performance.md sections 2 and 3.26). Where memory sets the time,
// a floor bounds nothing.
//
// The arithmetics per output vector (x, y the pair's inputs, c, s the row):
//   kF32:      fl(fl(x c) - fl(y s)): 2 multiplies, 1 subtract (posenc's kF32, B = 3).
//   kF64:      promote x, y; fl64(x c - y s), fused where the target has FMA (exact products);
//              demote once (posenc's kF64, the default, B = 2).
//   kFmaChain: c = ch + cl, s = sh + sl (f32 hi / lo parts of the double row);
//              t = fl(fl(x cl) - fl(y sl)), o = fma(x, ch, fma(-y, sh, t)): 5 operations, no
//              conversion. The cheapest f32 evaluation found so far with B < 2 for pairs with
//              max(|x|, |y|) >= 2^-124 (proof: docs/math.md section 9.7); below that the lo
//              products fall under f32's subnormal spacing and it reached 2.32 ulp for M in
//              [2^-126, 2^-125) (section 3.29), so a guard first scans each head (an OR, an
//              AND and a minimum per two input vectors) and rotates a head that may hold such a
//              pair with kF64's operations instead: B < 2 for every input. posenc's
//              RotationArithmetic::kFmaChain (lib/kernels/rope_chain-inl.h) with its rows in
//              registers, without the per-element finiteness test the kernels add. Each fma rounds
//              once on every target (lib/kernels/exact_fma-inl.h: the instruction, or on SSE4,
//              SSSE3, EMU128 and SCALAR its emulation through double), so the chain writes the
//              same bits everywhere and its time there includes what the emulation costs.
#ifndef POSENC_BENCH_ROTATION_FLOOR_H_
#define POSENC_BENCH_ROTATION_FLOOR_H_

#include <cstdint>

#include "posenc/aligned.h"
#include "posenc/rope.h"

namespace posenc {
namespace bench {

enum class FloorArithmetic { kF32, kF64, kFmaChain };
const char* FloorArithmeticName(FloorArithmetic a);  // "f32", "f64", "fma_chain"

// The pairs of a head the floors rotate (head_dim 128).
inline constexpr int64_t kFloorPairs = 64;

// The rows of `tokens` consecutive positions from `first`: cos / sin (f32, kFloorPairs values
// per token, the table's values), their f64 widenings, the lo parts of the FMA chain
// (f32(v - f32 value) of the double cos / sin of the same angle, std::cos / std::sin), and the
// pair rows of interleaved heads (2 * kFloorPairs values per token: (c0, c0, c1, c1, ...) and
// (-s0, s0, -s1, s1, ...), f32 and f64).
struct FloorRows {
  int64_t tokens = 0;
  AlignedVector<float> cos, sin, cos_lo, sin_lo, pair_cos, pair_sin;
  AlignedVector<double> cos64, sin64, pair_cos64, pair_sin64;
};

// From `table` (rotary_dim 2 * kFloorPairs, positions [first, first + tokens) inside it, the
// angles p * inv_freq[i] of its own frequencies); false if the table does not fit.
bool MakeFloorRows(const RopeTable& table, int64_t first, int64_t tokens, FloorRows* rows);

// Rotates rows.tokens tokens of q and k in place, token t with row t: q's `q_heads` heads, then
// k's `k_heads` (contiguous: token t, head h of x at x + (t * heads + h) * 2 * kFloorPairs; k
// may be null), with the best SIMD target of this CPU. Interleaved pairs: kF32 and kF64 only
// (posenc's interleaved step: one load, a swap within the register, the pair rows). Returns
// false, having written nothing, for kFmaChain with interleaved pairs or another layout.
bool RotateFloor(FloorArithmetic a, PairLayout pairs, const FloorRows& rows, float* q,
                 int64_t q_heads, float* k, int64_t k_heads);

}  // namespace bench
}  // namespace posenc

#endif  // POSENC_BENCH_ROTATION_FLOOR_H_
