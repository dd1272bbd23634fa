// Internal: frequency vectors in double.
#ifndef POSENC_LIB_FREQS_INV_FREQ_H_
#define POSENC_LIB_FREQS_INV_FREQ_H_

#include <cstdint>
#include <vector>

namespace posenc {
namespace freqs {

// inv_freq[i] = base^(-2i / rotary_dim), i < rotary_dim / 2, each one std::pow in double.
std::vector<double> DefaultInvFreq(double base, int64_t rotary_dim);

// The same vector, memoised per thread for the last (base, rotary_dim): a decode step then pays
// no pow() calls. The pointer stays valid until this thread asks for another (base, rotary_dim).
const double* CachedDefaultInvFreq(double base, int64_t rotary_dim);

}  // namespace freqs
}  // namespace posenc

#endif  // POSENC_LIB_FREQS_INV_FREQ_H_
