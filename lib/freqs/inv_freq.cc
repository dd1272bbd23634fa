#include "lib/freqs/inv_freq.h"

#include <cmath>

namespace posenc {
namespace freqs {

std::vector<double> DefaultInvFreq(double base, int64_t rotary_dim) {
  std::vector<double> inv(static_cast<size_t>(rotary_dim / 2));
  for (size_t i = 0; i < inv.size(); ++i) {
    inv[i] = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(rotary_dim));
  }
  return inv;
}

const double* CachedDefaultInvFreq(double base, int64_t rotary_dim) {
  struct Memo {
    double base = 0.0;
    int64_t rotary_dim = -1;
    std::vector<double> inv;
  };
  thread_local Memo memo;
  if (memo.rotary_dim != rotary_dim || !(memo.base == base)) {
    memo.inv = DefaultInvFreq(base, rotary_dim);
    memo.base = base;
    memo.rotary_dim = rotary_dim;
  }
  return memo.inv.data();
}

}  // namespace freqs
}  // namespace posenc
