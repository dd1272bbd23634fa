// Internal: frequency vectors in double.
#ifndef POSENC_LIB_FREQS_INV_FREQ_H_
#define POSENC_LIB_FREQS_INV_FREQ_H_

#include <cstdint>
#include <memory>
#include <vector>

namespace posenc {
namespace freqs {

// inv_freq[i] = base^(-2i / rotary_dim), i < rotary_dim / 2, each one DetPow (correctly rounded
// but for near-ties, and the same bits on every machine, unlike libm's pow).
std::vector<double> DefaultInvFreq(double base, int64_t rotary_dim);

// An immutable frequency vector that a call holds while its kernels read it.
using SharedFreqs = std::shared_ptr<const std::vector<double>>;

// What every caller checks of a frequency vector, found once when a memo is filled, so that a
// decode step neither recomputes nor re-scans the values: the first index whose value is not
// finite (the size when all are) and the largest |value| (meaningful when all are finite).
struct FreqFacts {
  int64_t first_nonfinite = 0;
  double max_abs = 0.0;
};
// The facts of v[0..n): every frequency check's one scan (memoised vectors and caller arrays).
FreqFacts FactsOf(const double* v, int64_t n);

// The same vector, memoised per thread for the last (base, rotary_dim), with its facts in
// *facts when facts is not null: a decode step then pays no pow() calls and no scan. The memo shares the vector with the caller instead of lending a pointer into
// itself: a thread that waits inside tbb::parallel_for may run another task that asks for other
// frequencies, and the memo moving on must not free what the first call's kernels still read.
SharedFreqs CachedDefaultInvFreq(double base, int64_t rotary_dim, FreqFacts* facts = nullptr);

// Sinusoidal frequencies w_i, i < d_model / 2: kPaper base^(-2i/d) (= DefaultInvFreq), or
// kTensor2Tensor exp(-i * ln(base) / max(d/2 - 1, 1)) as tensor2tensor / fairseq compute them.
// `spacing` is the int value of posenc::FrequencySpacing. Memoised and shared like the above.
SharedFreqs CachedSinusoidalFreqs(double base, int64_t d_model, int spacing,
                                  FreqFacts* facts = nullptr);

}  // namespace freqs
}  // namespace posenc

#endif  // POSENC_LIB_FREQS_INV_FREQ_H_
