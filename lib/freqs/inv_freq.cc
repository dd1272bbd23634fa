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

SharedFreqs CachedDefaultInvFreq(double base, int64_t rotary_dim) {
  struct Memo {
    double base = 0.0;
    int64_t rotary_dim = -1;
    SharedFreqs inv;
  };
  thread_local Memo memo;
  if (memo.inv == nullptr || memo.rotary_dim != rotary_dim || !(memo.base == base)) {
    // Built before the memo changes, so the memo is consistent even if allocation throws.
    SharedFreqs inv = std::make_shared<const std::vector<double>>(DefaultInvFreq(base, rotary_dim));
    memo.inv = std::move(inv);
    memo.base = base;
    memo.rotary_dim = rotary_dim;
  }
  return memo.inv;
}

SharedFreqs CachedSinusoidalFreqs(double base, int64_t d_model, int spacing) {
  struct Memo {
    double base = 0.0;
    int64_t d_model = -1;
    int spacing = -1;
    SharedFreqs w;
  };
  thread_local Memo memo;
  if (memo.w != nullptr && memo.d_model == d_model && memo.spacing == spacing &&
      memo.base == base) {
    return memo.w;
  }
  std::vector<double> w;
  if (spacing == 0) {
    w = DefaultInvFreq(base, d_model);
  } else {
    const int64_t half = d_model / 2;
    const double step = DetLog(base) / static_cast<double>(half - 1 > 1 ? half - 1 : 1);
    w.resize(static_cast<size_t>(half));
    for (int64_t i = 0; i < half; ++i) w[static_cast<size_t>(i)] = DetExp(-static_cast<double>(i) * step);
  }
  memo.w = std::make_shared<const std::vector<double>>(std::move(w));
  memo.base = base;
  memo.d_model = d_model;
  memo.spacing = spacing;
  return memo.w;
}

}  // namespace freqs
}  // namespace posenc
