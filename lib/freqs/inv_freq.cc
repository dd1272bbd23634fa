#include "lib/freqs/inv_freq.h"

#include <cmath>

#include "lib/freqs/det_math.h"

namespace posenc {
namespace freqs {

std::vector<double> DefaultInvFreq(double base, int64_t rotary_dim) {
  std::vector<double> inv(static_cast<size_t>(rotary_dim / 2));
  for (size_t i = 0; i < inv.size(); ++i) {
    inv[i] = DetPow(base, -2.0 * static_cast<double>(i) / static_cast<double>(rotary_dim));
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

const double* CachedSinusoidalFreqs(double base, int64_t d_model, int spacing) {
  struct Memo {
    double base = 0.0;
    int64_t d_model = -1;
    int spacing = -1;
    std::vector<double> w;
  };
  thread_local Memo memo;
  if (memo.d_model == d_model && memo.spacing == spacing && memo.base == base) {
    return memo.w.data();
  }
  if (spacing == 0) {
    memo.w = DefaultInvFreq(base, d_model);
  } else {
    const int64_t half = d_model / 2;
    const double step = DetLog(base) / static_cast<double>(half - 1 > 1 ? half - 1 : 1);
    memo.w.resize(static_cast<size_t>(half));
    for (int64_t i = 0; i < half; ++i) memo.w[i] = DetExp(-static_cast<double>(i) * step);
  }
  memo.base = base;
  memo.d_model = d_model;
  memo.spacing = spacing;
  return memo.w.data();
}

}  // namespace freqs
}  // namespace posenc
