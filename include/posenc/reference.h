// posenc/reference.h: posenc::reference, the double-precision oracles of the public calls.
//
// Each oracle evaluates the same call with plain scalar loops in double (libm cos/sin of the double
// angle) and rounds once to the output type, with the same validation and error messages as the
// posenc:: call it mirrors. Slow; they are what the tests hold the SIMD kernels to, and what a user
// can hold posenc to. The headers of the calls (rope.h, half.h, sinusoidal.h, rerope.h) include
// this one, so code that reached an oracle through them still compiles; the oracles of shift.h
// and vision.h are still declared there (this header includes both).
//
// The declarations take the calls' types by reference only: they are forward-declared here and
// defined by the headers included at the end, so either order of inclusion works.
#ifndef POSENC_REFERENCE_H_
#define POSENC_REFERENCE_H_

#include <cstdint>

#include "posenc/export.h"
#include "posenc/status.h"
#include "posenc/tensor.h"

namespace posenc {

enum class PairLayout;  // posenc/rope.h
struct RopeTensors;
struct RopeParams;
struct RelativeRopeTensors;  // posenc/rerope.h
struct RelativeRopeParams;
struct DistanceMap;
struct SinusoidalParams;  // posenc/sinusoidal.h
struct EmbeddingView;

namespace reference {

// ---- RoPE (posenc/rope.h)
// The same API evaluated with plain scalar loops in double precision (libm cos/sin of the double
// angle), rounded once to the output type. Same validation and error messages as posenc::ApplyRope.
// Slow; it is the oracle the tests hold the SIMD kernels to.
POSENC_API Status ApplyRope(const RopeTensors& tensors, const RopeParams& params);

// The unrounded double results: q_out64 / k_out64 receive contiguous [batch, seq, heads, head_dim]
// doubles (every element, pass-through ones included) for q / k; either may be null to skip it.
// The tensors' own outputs are not written.
POSENC_API Status ApplyRopeF64(const RopeTensors& tensors, const RopeParams& params, double* q_out64,
                    double* k_out64);

// ulp(m): the spacing of f32 numbers at |m| (2^-149 for subnormal and zero m); UlpOf for any
// dtype (bf16: 2^(e-7), f16: 2^(e-10), subnormal spacing below the normal range).
POSENC_API double UlpF32(double m);
POSENC_API double UlpOf(DType dtype, double m);

// The accuracy measure of the contract: the largest |out - exact| over all elements of `out` (a
// view of any dtype), in ulp (of out's dtype) of M = max(|x|, |y|) of the element's input pair
// from `in` (the input values before the call, same shape). `exact` is contiguous
// [batch, seq, heads, head_dim] as written by ApplyRopeF64. Pass-through elements (index >=
// rotary_dim) must equal the input bit for bit, and a NaN output where exact is not NaN counts as
// an error: either returns +inf. Pairs outside the contract's domain are skipped: an input that
// is not finite, or 2M above the largest finite value of out's dtype (the output may overflow).
POSENC_API double MaxPairUlpError(const Tensor& out, const Tensor& in, const double* exact,
                       int64_t rotary_dim, PairLayout pairs);

// ---- bf16 / f16 rounding (posenc/half.h)
// Scalar oracles, written independently of the SIMD code (exponent/mantissa arithmetic in double
// with std::nearbyint). RoundTo* rounds a double once, RNE; the *ToDouble are exact.
POSENC_API uint16_t RoundToBF16(double v);
POSENC_API uint16_t RoundToF16(double v);
POSENC_API double BF16ToDouble(uint16_t bits);
POSENC_API double F16ToDouble(uint16_t bits);

// ---- sinusoidal encodings (posenc/sinusoidal.h)
// Double-precision oracles (libm sin/cos of the double angle), same validation and messages.
// WriteSinusoidalF64 / AddSinusoidalF64 write contiguous [batch, seq, d_model] doubles.
POSENC_API Status WriteSinusoidal(const SinusoidalParams& params, const EmbeddingView& out);
POSENC_API Status AddSinusoidal(const SinusoidalParams& params, const EmbeddingView& x,
                     const EmbeddingView* out = nullptr);
POSENC_API Status WriteSinusoidalF64(const SinusoidalParams& params, const EmbeddingView& shape, double* out);
POSENC_API Status AddSinusoidalF64(const SinusoidalParams& params, const EmbeddingView& x, double* out);

// ---- ReRoPE attention scores (posenc/rerope.h)
// The same call in plain scalar double (libm cos/sin of the same double angles, the cos/sin
// algebra (qx kx + qy ky) cos + (qx ky - qy kx) sin, compensated summation), rounded once to f32.
// Same validation and messages as posenc::RelativeRopeScores.
POSENC_API Status RelativeRopeScores(const RelativeRopeTensors& tensors,
                                     const RelativeRopeParams& params);

// Unrounded doubles into scores64 and, if not null, the magnitude M of each score (see the
// accuracy contract; 0 for masked scores) into magnitude64, both contiguous
// [batch, heads, q_len, k_len]. The tensors' scores view is validated but not written.
POSENC_API Status RelativeRopeScoresF64(const RelativeRopeTensors& tensors,
                                        const RelativeRopeParams& params, double* scores64,
                                        double* magnitude64);

// f(d) as posenc evaluates it (double), d any signed distance: f(-d) = -f(d). Assumes a valid map.
POSENC_API double MappedDistance(const DistanceMap& map, int64_t d);

// The accuracy contract for one score: 0.5 ulp(score) + C * 2^-53 * magnitude with
// C = floor(rotary_dim / 16) + floor((head_dim - rotary_dim) / 8) + 16.
POSENC_API double RelativeRopeErrorBound(float score, double magnitude, int64_t head_dim,
                                         int64_t rotary_dim);

}  // namespace reference
}  // namespace posenc

// The types the oracles take (each of these headers includes this one back; the guards make
// either order work).
#include "posenc/half.h"
#include "posenc/rerope.h"
#include "posenc/rope.h"
#include "posenc/shift.h"
#include "posenc/sinusoidal.h"
#include "posenc/vision.h"

#endif  // POSENC_REFERENCE_H_
