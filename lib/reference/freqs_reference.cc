// The reference's frequencies (lib/reference/freqs_reference.h). Every intermediate is a long
// double (x86: 64-bit significand; aarch64: binary128) and each result is rounded once, so these
// values sit within a fraction of a double ulp of the formulas' exact values; posenc's own
// frequencies (lib/freqs, double with correctly rounded pow/log) are compared against them in
// tests/reference_freqs_test.cc. The key conventions (which key wins, HF's defaults) are those
// docs/math.md section 4 states.
#include "lib/reference/freqs_reference.h"

#include <algorithm>
#include <cmath>

namespace posenc {
namespace reference {
namespace {

using LD = long double;
const LD kPi = 3.14159265358979323846264338327950288L;

// The exponents are the double quotients HF forms in Python / numpy float64 (2i / r, r / (r - 2));
// everything after them is long double. (Forming them in long double instead moves an NTK-rescaled
// base by up to p ln(x) 2^-53 relatively, ~6 double ulps of the frequency for base 10 at 10^7
// tokens: a difference of definition, not of accuracy.)
double NtkExponent(int64_t r) { return static_cast<double>(r) / static_cast<double>(r - 2); }

// base^(-e_i) in long double, e_i the double 2i / r.
std::vector<LD> PowersOf(LD base, int64_t r) {
  std::vector<LD> v(static_cast<size_t>(r / 2));
  for (size_t i = 0; i < v.size(); ++i) {
    const double e = 2.0 * static_cast<double>(i) / static_cast<double>(r);
    v[i] = 1.0L / std::pow(base, static_cast<LD>(e));
  }
  return v;
}

std::vector<double> Rounded(const std::vector<LD>& v) {
  return std::vector<double>(v.begin(), v.end());
}

int64_t RotaryDimOf(const RopeConfig& c) {
  if (c.rope_type == RopeType::kProportional) return c.head_dim;
  if (c.rotary_dim) return *c.rotary_dim;
  return static_cast<int64_t>(static_cast<double>(c.head_dim) * c.partial_rotary_factor);
}

// M0: original_max_position_embeddings, else max_position_embeddings.
LD OriginalLen(const RopeConfig& c) {
  if (c.original_max_position_embeddings) return static_cast<LD>(*c.original_max_position_embeddings);
  return static_cast<LD>(c.max_position_embeddings.value_or(0));
}

// YaRN's g(s, m) = 0.1 m ln s + 1 for s > 1, else 1.
LD MscaleOf(LD s, LD m) { return s <= 1.0L ? 1.0L : 0.1L * m * std::log(s) + 1.0L; }

void Yarn(const RopeConfig& c, int64_t r, RopeFrequencies* f) {
  const LD rd = static_cast<LD>(r), m0 = OriginalLen(c), base = c.rope_theta;
  const LD s = c.factor ? static_cast<LD>(*c.factor)
                        : static_cast<LD>(*c.max_position_embeddings) / m0;
  // HF's `beta_fast or 32`, `beta_slow or 1`.
  const LD fast = c.beta_fast && *c.beta_fast != 0.0 ? *c.beta_fast : 32.0L;
  const LD slow = c.beta_slow && *c.beta_slow != 0.0 ? *c.beta_slow : 1.0L;
  auto correction_dim = [&](LD rotations) {
    return rd * std::log(m0 / (rotations * 2.0L * kPi)) / (2.0L * std::log(base));
  };
  LD low = correction_dim(fast), high = correction_dim(slow);
  if (c.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0L);
  high = std::min(high, rd - 1.0L);
  if (low == high) high += 0.001L;
  const std::vector<LD> extrapolation = PowersOf(base, r);
  std::vector<LD> inv(extrapolation.size());
  for (size_t i = 0; i < inv.size(); ++i) {
    const LD ramp = std::clamp((static_cast<LD>(i) - low) / (high - low), 0.0L, 1.0L);
    const LD extrapolation_weight = 1.0L - ramp;
    inv[i] = extrapolation[i] / s * (1.0L - extrapolation_weight) +
             extrapolation[i] * extrapolation_weight;
  }
  f->inv_freq = Rounded(inv);
  if (c.attention_factor) {
    f->attention_factor = *c.attention_factor;
  } else if (c.mscale && c.mscale_all_dim && *c.mscale != 0.0 && *c.mscale_all_dim != 0.0) {
    f->attention_factor = static_cast<double>(MscaleOf(s, *c.mscale) / MscaleOf(s, *c.mscale_all_dim));
  } else {
    f->attention_factor = static_cast<double>(MscaleOf(s, 1.0L));
  }
}

void Llama3(const RopeConfig& c, int64_t r, RopeFrequencies* f) {
  const LD m0 = OriginalLen(c), factor = *c.factor;
  const LD low = *c.low_freq_factor, high = *c.high_freq_factor;
  std::vector<LD> inv = PowersOf(c.rope_theta, r);
  for (LD& v : inv) {
    const LD wavelen = 2.0L * kPi / v;
    if (wavelen > m0 / low) {
      v = v / factor;
    } else if (!(wavelen < m0 / high)) {  // the medium band: interpolate
      const LD smooth = (m0 / wavelen - low) / (high - low);
      v = (1.0L - smooth) * v / factor + smooth * v;
    }
  }
  f->inv_freq = Rounded(inv);
}

void LongRope(const RopeConfig& c, int64_t r, int64_t seq_len, RopeFrequencies* f) {
  const LD m0 = OriginalLen(c);
  const std::vector<double>& ext = static_cast<LD>(seq_len) > m0 ? *c.long_factor : *c.short_factor;
  std::vector<LD> inv = PowersOf(c.rope_theta, r);
  for (size_t i = 0; i < inv.size(); ++i) inv[i] = inv[i] / static_cast<LD>(ext[i]);
  f->inv_freq = Rounded(inv);
  if (c.attention_factor) {
    f->attention_factor = *c.attention_factor;
    return;
  }
  const LD s = c.factor ? static_cast<LD>(*c.factor)
                        : static_cast<LD>(*c.max_position_embeddings) / m0;
  f->attention_factor =
      s <= 1.0L ? 1.0 : static_cast<double>(std::sqrt(1.0L + std::log(s) / std::log(m0)));
}

}  // namespace

std::vector<double> InvFreqFromBase(double base, int64_t rotary_dim) {
  return Rounded(PowersOf(base, rotary_dim));
}

std::vector<double> SinusoidalFreqs(double base, int64_t d_model, FrequencySpacing spacing) {
  if (spacing == FrequencySpacing::kPaper) return InvFreqFromBase(base, d_model);
  const int64_t half = d_model / 2;
  const double step = static_cast<double>(std::log(static_cast<LD>(base))) /
                      static_cast<double>(std::max<int64_t>(half - 1, 1));
  std::vector<double> w(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    const double e = static_cast<double>(i) * step;
    w[static_cast<size_t>(i)] = static_cast<double>(std::exp(-static_cast<LD>(e)));
  }
  return w;
}

RopeFrequencies FrequenciesOf(const RopeConfig& c, int64_t seq_len) {
  RopeFrequencies f;
  f.rope_type = c.rope_type;
  f.head_dim = c.head_dim;
  const int64_t r = RotaryDimOf(c);
  f.rotary_dim = r;
  switch (c.rope_type) {
    case RopeType::kDefault:
      f.inv_freq = InvFreqFromBase(c.rope_theta, r);
      break;
    case RopeType::kLinear: {
      std::vector<LD> inv = PowersOf(c.rope_theta, r);
      for (LD& v : inv) v = v / static_cast<LD>(*c.factor);
      f.inv_freq = Rounded(inv);
      break;
    }
    case RopeType::kDynamic: {
      LD base = c.rope_theta;
      const LD m = static_cast<LD>(*c.max_position_embeddings), s = *c.factor;
      if (static_cast<LD>(seq_len) > m) {
        base *= std::pow(s * static_cast<LD>(seq_len) / m - (s - 1.0L), static_cast<LD>(NtkExponent(r)));
      }
      f.inv_freq = Rounded(PowersOf(base, r));
      break;
    }
    case RopeType::kNtk:
      f.inv_freq = Rounded(PowersOf(c.rope_theta * std::pow(static_cast<LD>(*c.alpha), static_cast<LD>(NtkExponent(r))), r));
      break;
    case RopeType::kYarn:
      Yarn(c, r, &f);
      break;
    case RopeType::kLlama3:
      Llama3(c, r, &f);
      break;
    case RopeType::kLongRope:
      LongRope(c, r, seq_len, &f);
      break;
    case RopeType::kProportional: {
      // The first floor(partial_rotary_factor * head_dim / 2) pairs: base^(-2i / head_dim) /
      // factor (the exponent over the whole head); the others frequency 0.
      const int64_t rotated = static_cast<int64_t>(
          std::floor(c.partial_rotary_factor * static_cast<double>(c.head_dim) / 2.0));
      const std::vector<LD> full = PowersOf(c.rope_theta, c.head_dim);
      const LD factor = c.factor ? static_cast<LD>(*c.factor) : 1.0L;
      f.inv_freq.assign(static_cast<size_t>(r / 2), 0.0);
      for (int64_t i = 0; i < rotated && i < r / 2; ++i) {
        f.inv_freq[static_cast<size_t>(i)] = static_cast<double>(full[static_cast<size_t>(i)] / factor);
      }
      break;
    }
  }
  return f;
}

}  // namespace reference
}  // namespace posenc
