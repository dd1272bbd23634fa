// Internal: the reference's own RoPE frequencies, computed from the formulas of docs/math.md
// section 4 in long double and rounded once to double. Written independently of lib/freqs (it
// uses libm's long-double pow/log, not posenc's det_math), so a bug in posenc's frequency code
// does not cancel out of the tests that hold posenc to reference::ApplyRope.
#ifndef POSENC_LIB_REFERENCE_FREQS_REFERENCE_H_
#define POSENC_LIB_REFERENCE_FREQS_REFERENCE_H_

#include <cstdint>
#include <vector>

#include "posenc/freqs.h"
#include "posenc/sinusoidal.h"

namespace posenc {
namespace reference {

// inv_freq[i] = base^(-e_i), i < rotary_dim / 2, where the exponent e_i = 2i / rotary_dim is the
// double quotient (as HF and numpy form it) and the power is evaluated in long double.
std::vector<double> InvFreqFromBase(double base, int64_t rotary_dim);

// The sinusoidal frequencies w_i, i < d_model / 2 (posenc/sinusoidal.h): kPaper base^(-e_i) with
// e_i the double 2i / d_model (InvFreqFromBase); kTensor2Tensor exp(-e_i) with e_i the double
// i * s, s the double ln(base) / max(d_model / 2 - 1, 1), as tensor2tensor / fairseq form the
// exponents in Python floats; the exponential in long double.
std::vector<double> SinusoidalFreqs(double base, int64_t d_model, FrequencySpacing spacing);

// What posenc::ComputeFrequencies returns for a config it accepts (the config is not validated
// here: pass only configs ComputeFrequencies accepted), computed from docs/math.md section 4.
RopeFrequencies FrequenciesOf(const RopeConfig& config, int64_t seq_len);

}  // namespace reference
}  // namespace posenc

#endif  // POSENC_LIB_REFERENCE_FREQS_REFERENCE_H_
