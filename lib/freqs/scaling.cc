// RoPE scaling types (DESIGN.md §1), in double. HF semantics as of transformers'
// modeling_rope_utils.py; the README's table lists the keys each type reads.
#include <cmath>
#include <string>

#include "lib/api/tensor_checks.h"
#include "lib/freqs/det_math.h"
#include "lib/freqs/inv_freq.h"
#include "lib/freqs/scaling.h"
#include "posenc/freqs.h"

namespace posenc {
namespace {

using api::Err;
constexpr auto kInvalid = StatusCode::kInvalidArgument;
constexpr double kTwoPi = 6.283185307179586476925286766559;

bool Positive(double v) { return std::isfinite(v) && v > 0.0; }

// YaRN's attention scaling g(s, m).
double YarnMscale(double s, double m) { return s <= 1.0 ? 1.0 : 0.1 * m * freqs::DetLog(s) + 1.0; }

// M0: original_max_position_embeddings, else max_position_embeddings.
int64_t OriginalLength(const RopeConfig& c) {
  return c.original_max_position_embeddings > 0 ? c.original_max_position_embeddings
                                                : c.max_position_embeddings;
}

}  // namespace

const char* RopeTypeName(RopeType type) {
  switch (type) {
    case RopeType::kDefault: return "default";
    case RopeType::kLinear: return "linear";
    case RopeType::kDynamic: return "dynamic";
    case RopeType::kNtk: return "ntk";
    case RopeType::kYarn: return "yarn";
    case RopeType::kLlama3: return "llama3";
    case RopeType::kLongRope: return "longrope";
  }
  return "unknown";
}

namespace freqs {

// Semantic checks of a config, messages naming the config.json key.
Status ValidateConfig(const RopeConfig& c, int64_t* rotary_dim_out) {
  const std::string& d = c.dict_key;
  const char* type = RopeTypeName(c.rope_type);
  if (!Positive(c.rope_theta)) {
    return Err(kInvalid, "rope_theta = ", c.rope_theta, ": must be finite and > 0");
  }
  if (c.head_dim <= 0) return Err(kInvalid, "head_dim = ", c.head_dim, ": must be > 0");
  if (!(c.partial_rotary_factor > 0.0 && c.partial_rotary_factor <= 1.0)) {
    return Err(kInvalid, "partial_rotary_factor = ", c.partial_rotary_factor,
               ": must be in (0, 1]");
  }
  const int64_t r = static_cast<int64_t>(static_cast<double>(c.head_dim) * c.partial_rotary_factor);
  if (r <= 0 || r % 2 != 0 || r > c.head_dim) {
    return Err(kInvalid, "rotary_dim = int(head_dim ", c.head_dim, " * partial_rotary_factor ",
               c.partial_rotary_factor, ") = ", r, ": must be even, > 0 and <= head_dim");
  }
  if (c.max_position_embeddings < 0) {
    return Err(kInvalid, "max_position_embeddings = ", c.max_position_embeddings, ": must be > 0");
  }
  if (c.original_max_position_embeddings < 0) {
    return Err(kInvalid, "original_max_position_embeddings = ", c.original_max_position_embeddings,
               ": must be > 0");
  }
  const bool needs_factor = c.rope_type == RopeType::kLinear || c.rope_type == RopeType::kDynamic ||
                            c.rope_type == RopeType::kLlama3;
  if (needs_factor && !c.factor) {
    return Err(kInvalid, d, ".factor: missing (required by rope_type ", type, ")");
  }
  if (c.factor && !Positive(*c.factor)) {
    return Err(kInvalid, d, ".factor = ", *c.factor, ": must be finite and > 0");
  }
  switch (c.rope_type) {
    case RopeType::kDefault:
    case RopeType::kLinear:
      break;
    case RopeType::kDynamic:
    case RopeType::kNtk:
      if (r <= 2) {
        return Err(kInvalid, "rotary_dim = ", r, ": rope_type ", type,
                   " needs rotary_dim > 2 (exponent r / (r - 2))");
      }
      if (c.rope_type == RopeType::kDynamic && c.max_position_embeddings <= 0) {
        return Err(kInvalid, "max_position_embeddings: missing (required by rope_type dynamic)");
      }
      if (c.rope_type == RopeType::kNtk && !Positive(c.alpha)) {
        return Err(kInvalid, d, ".alpha = ", c.alpha, ": must be finite and > 0");
      }
      break;
    case RopeType::kYarn:
      if (OriginalLength(c) <= 0) {
        return Err(kInvalid, "original_max_position_embeddings / max_position_embeddings: "
                             "missing (required by rope_type yarn)");
      }
      if (!c.factor && c.max_position_embeddings <= 0) {
        return Err(kInvalid, d, ".factor: missing, and max_position_embeddings is absent to derive it");
      }
      if (!Positive(c.beta_fast)) return Err(kInvalid, d, ".beta_fast = ", c.beta_fast, ": must be > 0");
      if (!Positive(c.beta_slow)) return Err(kInvalid, d, ".beta_slow = ", c.beta_slow, ": must be > 0");
      for (const auto& [name, v] : {std::pair<const char*, const std::optional<double>&>{"mscale", c.mscale},
                                    {"mscale_all_dim", c.mscale_all_dim},
                                    {"attention_factor", c.attention_factor}}) {
        if (v && !std::isfinite(*v)) return Err(kInvalid, d, ".", name, " = ", *v, ": must be finite");
      }
      break;
    case RopeType::kLlama3:
      if (c.original_max_position_embeddings <= 0) {
        return Err(kInvalid, d, ".original_max_position_embeddings: missing (required by rope_type llama3)");
      }
      if (!Positive(c.low_freq_factor)) {
        return Err(kInvalid, d, ".low_freq_factor = ", c.low_freq_factor, ": must be > 0");
      }
      if (!(std::isfinite(c.high_freq_factor) && c.high_freq_factor > c.low_freq_factor)) {
        return Err(kInvalid, d, ".high_freq_factor = ", c.high_freq_factor,
                   ": must be finite and > low_freq_factor = ", c.low_freq_factor);
      }
      break;
    case RopeType::kLongRope: {
      if (OriginalLength(c) <= 0) {
        return Err(kInvalid, "original_max_position_embeddings / max_position_embeddings: "
                             "missing (required by rope_type longrope)");
      }
      for (const auto& [name, v] : {std::pair<const char*, const std::vector<double>&>{"short_factor", c.short_factor},
                                    {"long_factor", c.long_factor}}) {
        if (static_cast<int64_t>(v.size()) != r / 2) {
          return Err(kInvalid, d, ".", name, " has ", v.size(), " values: must have rotary_dim / 2 = ",
                     r / 2);
        }
        for (size_t i = 0; i < v.size(); ++i) {
          if (!Positive(v[i])) return Err(kInvalid, d, ".", name, "[", i, "] = ", v[i], ": must be > 0");
        }
      }
      if (c.attention_factor && !std::isfinite(*c.attention_factor)) {
        return Err(kInvalid, d, ".attention_factor = ", *c.attention_factor, ": must be finite");
      }
      break;
    }
    default:
      return Err(kInvalid, "rope_type = ", static_cast<int>(c.rope_type), ": not a RopeType");
  }
  *rotary_dim_out = r;
  return Status::Ok();
}

}  // namespace freqs

Status ComputeFrequencies(const RopeConfig& c, int64_t seq_len, RopeFrequencies* out) {
  try {
    if (out == nullptr) return Err(kInvalid, "out is null");
    if (seq_len < 0) return Err(kInvalid, "seq_len = ", seq_len, ": must be >= 0 (0 = unknown)");
    int64_t r = 0;
    Status st = freqs::ValidateConfig(c, &r);
    if (!st.ok()) return st;
    const double rd = static_cast<double>(r);
    RopeFrequencies f;
    f.rope_type = c.rope_type;
    f.head_dim = c.head_dim;
    f.rotary_dim = r;
    double base = c.rope_theta;
    switch (c.rope_type) {
      case RopeType::kDynamic: {
        const double m = static_cast<double>(c.max_position_embeddings);
        if (seq_len > c.max_position_embeddings) {
          const double s = *c.factor;
          base *= freqs::DetPow(s * static_cast<double>(seq_len) / m - (s - 1.0), rd / (rd - 2.0));
        }
        break;
      }
      case RopeType::kNtk:
        base *= freqs::DetPow(c.alpha, rd / (rd - 2.0));
        break;
      default:
        break;
    }
    f.inv_freq = freqs::DefaultInvFreq(base, r);
    const size_t half = f.inv_freq.size();
    switch (c.rope_type) {
      case RopeType::kLinear:
        for (double& v : f.inv_freq) v /= *c.factor;
        break;
      case RopeType::kYarn: {
        const double m0 = static_cast<double>(OriginalLength(c));
        const double s = c.factor ? *c.factor : static_cast<double>(c.max_position_embeddings) / m0;
        auto corr = [&](double rotations) {
          return rd * freqs::DetLog(m0 / (rotations * kTwoPi)) / (2.0 * freqs::DetLog(base));
        };
        double low = corr(c.beta_fast), high = corr(c.beta_slow);
        if (c.truncate) {
          low = std::floor(low);
          high = std::ceil(high);
        }
        low = std::max(low, 0.0);
        high = std::min(high, rd - 1.0);
        if (low == high) high += 0.001;
        for (size_t i = 0; i < half; ++i) {
          const double ramp =
              std::min(1.0, std::max(0.0, (static_cast<double>(i) - low) / (high - low)));
          const double keep = 1.0 - ramp;  // weight of the unscaled (extrapolated) frequency
          f.inv_freq[i] = (f.inv_freq[i] / s) * (1.0 - keep) + f.inv_freq[i] * keep;
        }
        if (c.attention_factor) {
          f.attention_factor = *c.attention_factor;
        } else if (c.mscale && c.mscale_all_dim && *c.mscale != 0.0 && *c.mscale_all_dim != 0.0) {
          f.attention_factor = YarnMscale(s, *c.mscale) / YarnMscale(s, *c.mscale_all_dim);
        } else {
          f.attention_factor = YarnMscale(s, 1.0);
        }
        break;
      }
      case RopeType::kLlama3: {
        const double m0 = static_cast<double>(c.original_max_position_embeddings);
        const double low_wavelen = m0 / c.low_freq_factor;
        const double high_wavelen = m0 / c.high_freq_factor;
        for (double& v : f.inv_freq) {
          const double wavelen = kTwoPi / v;
          if (wavelen > low_wavelen) {
            v /= *c.factor;
          } else if (!(wavelen < high_wavelen)) {
            const double t = (m0 / wavelen - c.low_freq_factor) /
                             (c.high_freq_factor - c.low_freq_factor);
            v = (1.0 - t) * v / *c.factor + t * v;
          }
        }
        break;
      }
      case RopeType::kLongRope: {
        const int64_t m0 = OriginalLength(c);
        const std::vector<double>& ext = seq_len > m0 ? c.long_factor : c.short_factor;
        for (size_t i = 0; i < half; ++i) {
          f.inv_freq[i] = 1.0 / (ext[i] * freqs::DetPow(base, 2.0 * static_cast<double>(i) / rd));
        }
        double s = 1.0;
        if (c.original_max_position_embeddings > 0 && c.max_position_embeddings > 0) {
          s = static_cast<double>(c.max_position_embeddings) / static_cast<double>(m0);
        } else if (c.factor) {
          s = *c.factor;
        }
        f.attention_factor =
            c.attention_factor ? *c.attention_factor
                               : (s <= 1.0 ? 1.0
                                           : std::sqrt(1.0 + freqs::DetLog(s) /
                                                                 freqs::DetLog(static_cast<double>(m0))));
        break;
      }
      default:
        break;
    }
    *out = std::move(f);
    return Status::Ok();
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInternal, "out of memory");
  }
}

}  // namespace posenc
