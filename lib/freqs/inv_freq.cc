#include "lib/freqs/inv_freq.h"

#include <algorithm>
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

FreqFacts FactsOf(const double* v, int64_t n) {
  FreqFacts f;
  f.first_nonfinite = n;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i])) {
      f.first_nonfinite = i;
      break;
    }
    f.max_abs = std::max(f.max_abs, std::fabs(v[i]));
  }
  return f;
}

SharedFreqs CachedDefaultInvFreq(double base, int64_t rotary_dim, FreqFacts* facts) {
  struct Memo {
    double base = 0.0;
    int64_t rotary_dim = -1;
    SharedFreqs inv;
    FreqFacts facts;
  };
  thread_local Memo memo;
  if (memo.inv == nullptr || memo.rotary_dim != rotary_dim || !(memo.base == base)) {
    // Built before the memo changes, so the memo is consistent even if allocation throws.
    SharedFreqs inv = std::make_shared<const std::vector<double>>(DefaultInvFreq(base, rotary_dim));
    memo.facts = FactsOf(inv->data(), static_cast<int64_t>(inv->size()));
    memo.inv = std::move(inv);
    memo.base = base;
    memo.rotary_dim = rotary_dim;
  }
  if (facts != nullptr) *facts = memo.facts;
  return memo.inv;
}

SharedFreqs CachedSinusoidalFreqs(double base, int64_t d_model, int spacing, FreqFacts* facts) {
  struct Memo {
    double base = 0.0;
    int64_t d_model = -1;
    int spacing = -1;
    SharedFreqs w;
    FreqFacts facts;
  };
  thread_local Memo memo;
  if (memo.w != nullptr && memo.d_model == d_model && memo.spacing == spacing &&
      memo.base == base) {
    if (facts != nullptr) *facts = memo.facts;
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
  SharedFreqs shared = std::make_shared<const std::vector<double>>(std::move(w));
  memo.facts = FactsOf(shared->data(), static_cast<int64_t>(shared->size()));
  memo.w = std::move(shared);
  memo.base = base;
  memo.d_model = d_model;
  memo.spacing = spacing;
  if (facts != nullptr) *facts = memo.facts;
  return memo.w;
}

}  // namespace freqs
}  // namespace posenc
