// RoPE scaling types (docs/math.md), in double: one {name, required keys, Validate, Compute} entry
// per type (kEntries, below the functions it names).
// HF semantics as of transformers 5.24's modeling_rope_utils.py (the function each entry follows
// is named above it); the README's table lists the keys each type reads.
#include "lib/freqs/scaling.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "lib/core/guard.h"
#include "lib/core/status_util.h"
#include "lib/freqs/det_math.h"
#include "lib/freqs/inv_freq.h"
#include "posenc/freqs.h"

namespace posenc {
namespace freqs {
namespace {

using core::Err;
constexpr auto kInvalid = StatusCode::kInvalidArgument;
constexpr double kTwoPi = 6.283185307179586476925286766559;

bool Positive(double v) { return std::isfinite(v) && v > 0.0; }

// A key the type requires (present: checked by ValidateConfig), and an optional key, when given.
Status NeedsPositive(const RopeConfig& c, const char* key, double v) {
  if (!Positive(v)) return Err(kInvalid, c.dict_key, ".", key, " = ", v, ": must be finite and > 0");
  return Status::Ok();
}
Status PositiveIfGiven(const RopeConfig& c, const char* key, const std::optional<double>& v) {
  return v ? NeedsPositive(c, key, *v) : Status::Ok();
}

// Presence tests of the required keys (RequiredKey::present).
bool HasFactor(const RopeConfig& c) { return c.factor.has_value(); }
bool HasAlpha(const RopeConfig& c) { return c.alpha.has_value(); }
bool HasMaxLength(const RopeConfig& c) { return c.max_position_embeddings.has_value(); }
bool HasOriginalLength(const RopeConfig& c) { return OriginalLength(c) > 0; }
bool HasLowFreqFactor(const RopeConfig& c) { return c.low_freq_factor.has_value(); }
bool HasHighFreqFactor(const RopeConfig& c) { return c.high_freq_factor.has_value(); }
bool HasShortFactor(const RopeConfig& c) { return c.short_factor.has_value(); }
bool HasLongFactor(const RopeConfig& c) { return c.long_factor.has_value(); }
// yarn's factor defaults to M / M0; longrope's attention factor needs factor or M / M0.
bool HasYarnFactor(const RopeConfig& c) { return c.factor || c.max_position_embeddings; }
bool HasLongRopeScale(const RopeConfig& c) {
  return c.attention_factor || c.factor || c.max_position_embeddings;
}

// The NTK exponent r / (r - 2) needs r > 2.
Status NeedsRotaryAbove2(const RopeConfig& c, int64_t r) {
  if (r <= 2) {
    return Err(kInvalid, "rotary_dim = ", r, ": rope_type ", RopeTypeName(c.rope_type),
               " needs rotary_dim > 2 (exponent r / (r - 2))");
  }
  return Status::Ok();
}

// The config's scalar keys and their values, for messages about what they computed.
std::string DescribeKeys(const RopeConfig& c) {
  std::ostringstream os;
  os.precision(17);
  os << "rope_type " << RopeTypeName(c.rope_type) << ", rope_theta = " << c.rope_theta;
  const std::pair<const char*, const std::optional<double>*> keys[] = {
      {"factor", &c.factor}, {"alpha", &c.alpha}, {"mscale", &c.mscale},
      {"mscale_all_dim", &c.mscale_all_dim}, {"attention_factor", &c.attention_factor},
      {"low_freq_factor", &c.low_freq_factor}, {"high_freq_factor", &c.high_freq_factor}};
  for (const auto& [name, v] : keys) {
    if (*v) os << ", " << c.dict_key << "." << name << " = " << **v;
  }
  return os.str();
}

// The message for a frequency a config computed that is not finite or negative; `list_key`
// names the list entry that produced it, if any.
Status BadFrequency(const RopeConfig& c, const std::string& list_key, size_t i, double v, int64_t seq_len) {
  return Err(kInvalid, DescribeKeys(c), list_key, " gives inv_freq[", i, "] = ", v, " at seq_len ", seq_len,
             ": the frequencies a config computes must be finite");
}

// ---- default: _compute_default_rope_parameters (each model's compute_default_rope_parameters).
Status ValidateDefault(const RopeConfig&, int64_t) { return Status::Ok(); }
Status ComputeDefault(const RopeConfig& c, int64_t r, int64_t, RopeFrequencies* f) {
  f->inv_freq = DefaultInvFreq(c.rope_theta, r);
  return Status::Ok();
}

// ---- linear: _compute_linear_scaling_rope_parameters.
Status ValidateLinear(const RopeConfig& c, int64_t) { return NeedsPositive(c, "factor", *c.factor); }
Status ComputeLinear(const RopeConfig& c, int64_t r, int64_t, RopeFrequencies* f) {
  f->inv_freq = DefaultInvFreq(c.rope_theta, r);
  for (double& v : f->inv_freq) v /= *c.factor;
  return Status::Ok();
}

// ---- dynamic: _compute_dynamic_ntk_parameters (seq_len = max(L, M)).
Status ValidateDynamic(const RopeConfig& c, int64_t r) {
  Status st = NeedsPositive(c, "factor", *c.factor);
  return st.ok() ? NeedsRotaryAbove2(c, r) : st;
}
// An NTK-rescaled base must stay a usable base; `key` = `value` is the dict key that rescaled it.
Status CheckBase(const RopeConfig& c, const char* key, double value, double base, int64_t seq_len) {
  if (Positive(base)) return Status::Ok();
  return Err(kInvalid, "rope_type ", RopeTypeName(c.rope_type), ": rope_theta = ", c.rope_theta, ", ",
             c.dict_key, ".", key, " = ", value, " give the rescaled base ", base, " at seq_len ", seq_len,
             ": must be finite and > 0");
}

Status ComputeDynamic(const RopeConfig& c, int64_t r, int64_t seq_len, RopeFrequencies* f) {
  double base = c.rope_theta;
  const int64_t m = *c.max_position_embeddings;
  if (seq_len > m) {
    const double s = *c.factor, rd = static_cast<double>(r);
    base *= DetPow(s * static_cast<double>(seq_len) / static_cast<double>(m) - (s - 1.0),
                   rd / (rd - 2.0));
  }
  Status st = CheckBase(c, "factor", *c.factor, base, seq_len);
  if (!st.ok()) return st;
  f->inv_freq = DefaultInvFreq(base, r);
  return Status::Ok();
}

// ---- ntk: static NTK-aware, base' = base * alpha^(r / (r - 2)) (posenc's own type).
Status ValidateNtk(const RopeConfig& c, int64_t r) {
  Status st = NeedsPositive(c, "alpha", *c.alpha);
  return st.ok() ? NeedsRotaryAbove2(c, r) : st;
}
Status ComputeNtk(const RopeConfig& c, int64_t r, int64_t seq_len, RopeFrequencies* f) {
  const double rd = static_cast<double>(r);
  const double base = c.rope_theta * DetPow(*c.alpha, rd / (rd - 2.0));
  Status st = CheckBase(c, "alpha", *c.alpha, base, seq_len);
  if (!st.ok()) return st;
  f->inv_freq = DefaultInvFreq(base, r);
  return Status::Ok();
}

// ---- yarn: _compute_yarn_parameters.
// beta_fast / beta_slow: HF reads `get("beta_fast") or 32`, so 0 also means the default.
double Beta(const std::optional<double>& v, double dflt) { return v && *v != 0.0 ? *v : dflt; }

Status ValidateYarn(const RopeConfig& c, int64_t) {
  Status st = PositiveIfGiven(c, "factor", c.factor);
  if (!st.ok()) return st;
  for (const auto& [name, v] : {std::pair<const char*, const std::optional<double>&>{"beta_fast", c.beta_fast},
                                {"beta_slow", c.beta_slow}}) {
    if (v && !(std::isfinite(*v) && *v >= 0.0)) {
      return Err(kInvalid, c.dict_key, ".", name, " = ", *v, ": must be finite and > 0 (0: the default)");
    }
  }
  for (const auto& [name, v] : {std::pair<const char*, const std::optional<double>&>{"mscale", c.mscale},
                                {"mscale_all_dim", c.mscale_all_dim},
                                {"attention_factor", c.attention_factor}}) {
    if (v && !std::isfinite(*v)) return Err(kInvalid, c.dict_key, ".", name, " = ", *v, ": must be finite");
  }
  return Status::Ok();
}
Status ComputeYarn(const RopeConfig& c, int64_t r, int64_t, RopeFrequencies* f) {
  const double rd = static_cast<double>(r);
  const double m0 = static_cast<double>(OriginalLength(c));
  const double s = YarnFactor(c);
  const double base = c.rope_theta;
  auto corr = [&](double rotations) {  // find_correction_dim
    return rd * DetLog(m0 / (rotations * kTwoPi)) / (2.0 * DetLog(base));
  };
  double low = corr(Beta(c.beta_fast, 32.0)), high = corr(Beta(c.beta_slow, 1.0));
  if (c.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, rd - 1.0);
  if (low == high) high += 0.001;  // linear_ramp_factor: prevent singularity
  f->inv_freq = DefaultInvFreq(base, r);
  for (size_t i = 0; i < f->inv_freq.size(); ++i) {
    const double ramp = std::min(1.0, std::max(0.0, (static_cast<double>(i) - low) / (high - low)));
    const double keep = 1.0 - ramp;  // inv_freq_extrapolation_factor
    f->inv_freq[i] = (f->inv_freq[i] / s) * (1.0 - keep) + f->inv_freq[i] * keep;
  }
  if (c.attention_factor) {
    f->attention_factor = *c.attention_factor;
  } else if (c.mscale && c.mscale_all_dim && *c.mscale != 0.0 && *c.mscale_all_dim != 0.0) {
    f->attention_factor = YarnMscale(s, *c.mscale) / YarnMscale(s, *c.mscale_all_dim);
  } else {
    f->attention_factor = YarnMscale(s, 1.0);
  }
  return Status::Ok();
}

// ---- llama3: _compute_llama3_parameters (old_context_len = the standardised original length).
Status ValidateLlama3(const RopeConfig& c, int64_t) {
  Status st = NeedsPositive(c, "factor", *c.factor);
  if (!st.ok()) return st;
  if (!(st = NeedsPositive(c, "low_freq_factor", *c.low_freq_factor)).ok()) return st;
  // Equal factors (Llama 4) leave no smoothed band.
  if (!(std::isfinite(*c.high_freq_factor) && *c.high_freq_factor >= *c.low_freq_factor)) {
    return Err(kInvalid, c.dict_key, ".high_freq_factor = ", *c.high_freq_factor,
               ": must be finite and >= low_freq_factor = ", *c.low_freq_factor);
  }
  return Status::Ok();
}
Status ComputeLlama3(const RopeConfig& c, int64_t r, int64_t, RopeFrequencies* f) {
  const double m0 = static_cast<double>(OriginalLength(c));
  const double low = *c.low_freq_factor, high = *c.high_freq_factor, factor = *c.factor;
  const double low_wavelen = m0 / low, high_wavelen = m0 / high;
  f->inv_freq = DefaultInvFreq(c.rope_theta, r);
  for (double& v : f->inv_freq) {
    const double wavelen = kTwoPi / v;
    if (wavelen > low_wavelen) {
      v /= factor;
    } else if (!(wavelen < high_wavelen)) {
      const double t = (m0 / wavelen - low) / (high - low);
      v = (1.0 - t) * v / factor + t * v;
    }
  }
  return Status::Ok();
}

// ---- longrope: _compute_longrope_parameters (factor explicit first, else M / M0).
Status ValidateLongRope(const RopeConfig& c, int64_t r) {
  const std::pair<const char*, const std::optional<std::vector<double>>*> lists[] = {
      {"short_factor", &c.short_factor}, {"long_factor", &c.long_factor}};
  for (const auto& [name, list] : lists) {
    const std::vector<double>* v = &**list;
    if (static_cast<int64_t>(v->size()) != r / 2) {
      return Err(kInvalid, c.dict_key, ".", name, " has ", v->size(), " values: must have rotary_dim / 2 = ",
                 r / 2);
    }
    for (size_t i = 0; i < v->size(); ++i) {
      if (!Positive((*v)[i])) return Err(kInvalid, c.dict_key, ".", name, "[", i, "] = ", (*v)[i], ": must be > 0");
    }
  }
  Status st = PositiveIfGiven(c, "factor", c.factor);
  if (!st.ok()) return st;
  if (c.attention_factor && !std::isfinite(*c.attention_factor)) {
    return Err(kInvalid, c.dict_key, ".attention_factor = ", *c.attention_factor, ": must be finite");
  }
  return Status::Ok();
}
Status ComputeLongRope(const RopeConfig& c, int64_t r, int64_t seq_len, RopeFrequencies* f) {
  const int64_t m0 = OriginalLength(c);
  const std::vector<double>& ext = seq_len > m0 ? *c.long_factor : *c.short_factor;
  const double rd = static_cast<double>(r);
  f->inv_freq.resize(static_cast<size_t>(r / 2));
  for (size_t i = 0; i < f->inv_freq.size(); ++i) {
    f->inv_freq[i] = 1.0 / (ext[i] * DetPow(c.rope_theta, 2.0 * static_cast<double>(i) / rd));
  }
  for (size_t i = 0; i < f->inv_freq.size(); ++i) {  // name the list entry behind a bad value
    const double v = f->inv_freq[i];
    if (std::isfinite(v) && v >= 0.0) continue;
    std::ostringstream os;
    os.precision(17);
    os << ", " << c.dict_key << (seq_len > m0 ? ".long_factor[" : ".short_factor[") << i << "] = " << ext[i];
    return BadFrequency(c, os.str(), i, v, seq_len);
  }
  if (c.attention_factor) {
    f->attention_factor = *c.attention_factor;
    return Status::Ok();
  }
  const double s = c.factor ? *c.factor
                            : static_cast<double>(*c.max_position_embeddings) / static_cast<double>(m0);
  f->attention_factor = s <= 1.0 ? 1.0 : std::sqrt(1.0 + DetLog(s) / DetLog(static_cast<double>(m0)));
  return Status::Ok();
}

// ---- proportional: _compute_proportional_rope_parameters (Gemma 4). The exponent runs over the
// full head_dim; pairs from rope_angles = int(partial_rotary_factor * head_dim // 2) on get 0.
int64_t RopeAngles(const RopeConfig& c) {
  return static_cast<int64_t>(std::floor(c.partial_rotary_factor * static_cast<double>(c.head_dim) / 2.0));
}
Status ValidateProportional(const RopeConfig& c, int64_t) { return PositiveIfGiven(c, "factor", c.factor); }
Status ComputeProportional(const RopeConfig& c, int64_t r, int64_t, RopeFrequencies* f) {
  const int64_t rotated = RopeAngles(c);
  const double hd = static_cast<double>(c.head_dim);
  const double factor = c.factor ? *c.factor : 1.0;
  f->inv_freq.assign(static_cast<size_t>(r / 2), 0.0);
  for (int64_t i = 0; i < rotated; ++i) {
    f->inv_freq[i] = DetPow(c.rope_theta, -2.0 * static_cast<double>(i) / hd) / factor;
  }
  return Status::Ok();
}

// The registry: one row per RopeType.
constexpr const char* kDerive = ", and max_position_embeddings is absent to derive it";
constexpr const char* kDeriveScale =
    ", and max_position_embeddings is absent to derive the attention factor";
constexpr const char* kOriginalOrMax = "original_max_position_embeddings / max_position_embeddings";
constexpr RopeTypeEntry kEntries[] = {
    {RopeType::kDefault, "default", nullptr, {}, LengthRule::kNone, false, false,
     ValidateDefault, ComputeDefault},
    {RopeType::kLinear, "linear", nullptr, {{"factor", true, HasFactor, nullptr}},
     LengthRule::kNone, false, false, ValidateLinear, ComputeLinear},
    {RopeType::kDynamic, "dynamic", nullptr,
     {{"factor", true, HasFactor, nullptr}, {"max_position_embeddings", false, HasMaxLength, nullptr}},
     LengthRule::kGrowsBeyondMax, false, false, ValidateDynamic, ComputeDynamic},
    {RopeType::kNtk, "ntk", nullptr, {{"alpha", true, HasAlpha, nullptr}}, LengthRule::kNone,
     false, false, ValidateNtk, ComputeNtk},
    {RopeType::kYarn, "yarn", nullptr,
     {{kOriginalOrMax, false, HasOriginalLength, nullptr}, {"factor", true, HasYarnFactor, kDerive}},
     LengthRule::kNone, false, true, ValidateYarn, ComputeYarn},
    {RopeType::kLlama3, "llama3", nullptr,
     {{"factor", true, HasFactor, nullptr},
      {"original_max_position_embeddings", true, HasOriginalLength, nullptr},
      {"low_freq_factor", true, HasLowFreqFactor, nullptr},
      {"high_freq_factor", true, HasHighFreqFactor, nullptr}},
     LengthRule::kNone, false, true, ValidateLlama3, ComputeLlama3},
    {RopeType::kLongRope, "longrope", "su",
     {{kOriginalOrMax, false, HasOriginalLength, nullptr}, {"short_factor", true, HasShortFactor, nullptr},
      {"long_factor", true, HasLongFactor, nullptr}, {"factor", true, HasLongRopeScale, kDeriveScale}},
     LengthRule::kSwitchesAtOriginal, false, true, ValidateLongRope, ComputeLongRope},
    {RopeType::kProportional, "proportional", nullptr, {}, LengthRule::kNone, true, false,
     ValidateProportional, ComputeProportional},
};

// One row per RopeType, in the enum's order (the C API's posenc_rope_type follows the same values).
constexpr bool RowsFollowTheEnum() {
  int i = 0;
  for (const RopeTypeEntry& e : kEntries) {
    if (static_cast<int>(e.type) != i++) return false;
  }
  return i == static_cast<int>(RopeType::kProportional) + 1;
}
static_assert(RowsFollowTheEnum(), "kEntries needs one row per RopeType, in the enum's order");

// The required keys of a type, in the entry's order: the first absent one fails.
Status CheckRequired(const RopeConfig& c, const RopeTypeEntry& e) {
  for (const RequiredKey& k : e.required) {
    if (k.name == nullptr) break;
    if (k.present(c)) continue;
    const std::string prefix = k.in_dict ? c.dict_key + "." : std::string();
    if (k.why != nullptr) return Err(kInvalid, prefix, k.name, ": missing", k.why);
    return Err(kInvalid, prefix, k.name, ": missing (required by rope_type ", e.name, ")");
  }
  return Status::Ok();
}

// rotary_dim and its message, naming the keys it comes from.
Status RotaryDim(const RopeConfig& c, const RopeTypeEntry& e, int64_t* out) {
  if (e.rotates_whole_head) {  // zero frequencies beyond the rotated pairs
    if (c.head_dim % 2 != 0) {
      return Err(kInvalid, "head_dim = ", c.head_dim, ": rope_type ", e.name, " needs an even head_dim");
    }
    *out = c.head_dim;
    return Status::Ok();
  }
  if (c.rotary_dim) {
    const int64_t r = *c.rotary_dim;
    if (r < 2 || r % 2 != 0 || r > c.head_dim) {
      return Err(kInvalid, "rotary_dim = ", r, ": must be even, >= 2 and <= head_dim = ", c.head_dim);
    }
    *out = r;
    return Status::Ok();
  }
  const int64_t r = static_cast<int64_t>(static_cast<double>(c.head_dim) * c.partial_rotary_factor);
  if (r < 2 || r % 2 != 0 || r > c.head_dim) {
    return Err(kInvalid, "head_dim = ", c.head_dim, " with partial_rotary_factor = ", c.partial_rotary_factor,
               " gives rotary_dim = int(head_dim * partial_rotary_factor) = ", r,
               ": must be even, >= 2 and <= head_dim");
  }
  *out = r;
  return Status::Ok();
}

Status ValidateMRope(const RopeConfig& c, int64_t r) {
  if (!c.mrope.present()) return Status::Ok();
  const std::vector<int64_t>& s = c.mrope.section;
  if (s.size() != 3) {
    return Err(kInvalid, c.dict_key, ".mrope_section has ", s.size(), " values: must have 3 (t, h, w)");
  }
  int64_t sum = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] <= 0 || s[i] > r) {
      return Err(kInvalid, c.dict_key, ".mrope_section[", i, "] = ", s[i], ": must be in [1, rotary_dim]");
    }
    sum += s[i];
  }
  if (sum != r / 2) {
    return Err(kInvalid, c.dict_key, ".mrope_section sums to ", sum, ": must be rotary_dim / 2 = ", r / 2);
  }
  return Status::Ok();
}

// What a config computed must be usable: finite frequencies >= 0 and a finite attention factor.
Status CheckComputed(const RopeConfig& c, int64_t seq_len, const RopeFrequencies& f) {
  for (size_t i = 0; i < f.inv_freq.size(); ++i) {
    const double v = f.inv_freq[i];
    if (!(std::isfinite(v) && v >= 0.0)) return BadFrequency(c, "", i, v, seq_len);
  }
  if (!std::isfinite(f.attention_factor)) {
    return Err(kInvalid, DescribeKeys(c), " gives attention factor ", f.attention_factor,
               ": must be finite");
  }
  return Status::Ok();
}

}  // namespace

const RopeTypeEntry* FindRopeType(RopeType type) {
  for (const RopeTypeEntry& e : kEntries) {
    if (e.type == type) return &e;
  }
  return nullptr;
}

const RopeTypeEntry* FindRopeType(const std::string& name) {
  for (const RopeTypeEntry& e : kEntries) {
    if (name == e.name || (e.alias != nullptr && name == e.alias)) return &e;
  }
  return nullptr;
}

std::string RopeTypeNames() {
  std::string s;
  for (const RopeTypeEntry& e : kEntries) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

std::string RopeTypeAliases() {
  std::string s;
  for (const RopeTypeEntry& e : kEntries) {
    if (e.alias != nullptr) s += (s.empty() ? "" : ", ") + std::string(e.alias);
  }
  return s;
}

LengthRule LengthRuleOf(RopeType type) {
  const RopeTypeEntry* e = FindRopeType(type);
  return e != nullptr ? e->length : LengthRule::kNone;
}

int64_t OriginalLength(const RopeConfig& c) {
  if (c.original_max_position_embeddings) return *c.original_max_position_embeddings;
  return c.max_position_embeddings ? *c.max_position_embeddings : 0;
}

double YarnMscale(double s, double m) { return s <= 1.0 ? 1.0 : 0.1 * m * DetLog(s) + 1.0; }

double YarnFactor(const RopeConfig& c) {
  return c.factor ? *c.factor
                  : static_cast<double>(*c.max_position_embeddings) / static_cast<double>(OriginalLength(c));
}

Status ValidateConfig(const RopeConfig& c, int64_t* rotary_dim_out) {
  const RopeTypeEntry* entry = FindRopeType(c.rope_type);
  if (entry == nullptr) return Err(kInvalid, "rope_type = ", static_cast<int>(c.rope_type), ": not a RopeType");
  if (!Positive(c.rope_theta)) {
    return Err(kInvalid, "rope_theta = ", c.rope_theta, ": must be finite and > 0");
  }
  if (c.head_dim <= 0 || c.head_dim > kMaxHeadDim) {
    return Err(kInvalid, "head_dim = ", c.head_dim, ": must be > 0 and <= ", kMaxHeadDim);
  }
  if (!(c.partial_rotary_factor > 0.0 && c.partial_rotary_factor <= 1.0)) {
    return Err(kInvalid, "partial_rotary_factor = ", c.partial_rotary_factor, ": must be in (0, 1]");
  }
  if (c.pairs != PairLayout::kHalf && c.pairs != PairLayout::kInterleaved) {
    return Err(kInvalid, "pairs = ", static_cast<int>(c.pairs), ": a config's layout must be kHalf or kInterleaved");
  }
  int64_t r = 0;
  Status st = RotaryDim(c, *entry, &r);
  if (!st.ok()) return st;
  for (const auto& [name, v] :
       {std::pair<const char*, const std::optional<int64_t>&>{"max_position_embeddings", c.max_position_embeddings},
        {"original_max_position_embeddings", c.original_max_position_embeddings}}) {
    if (v && *v <= 0) return Err(kInvalid, name, " = ", *v, ": must be > 0");
  }
  if (!(st = ValidateMRope(c, r)).ok()) return st;
  if (!(st = CheckRequired(c, *entry)).ok()) return st;
  if (!(st = entry->validate(c, r)).ok()) return st;
  *rotary_dim_out = r;
  return Status::Ok();
}

}  // namespace freqs

const char* RopeTypeName(RopeType type) {
  const freqs::RopeTypeEntry* e = freqs::FindRopeType(type);
  return e != nullptr ? e->name : "unknown";
}

Status ComputeFrequencies(const RopeConfig& c, int64_t seq_len, RopeFrequencies* out) {
  return core::Guarded("posenc::ComputeFrequencies", [&] {
    if (out == nullptr) return core::Err(freqs::kInvalid, "out is null");
    if (seq_len < 0) return core::Err(freqs::kInvalid, "seq_len = ", seq_len, ": must be >= 0 (0 = unknown)");
    int64_t r = 0;
    Status st = freqs::ValidateConfig(c, &r);
    if (!st.ok()) return st;
    RopeFrequencies f;
    f.rope_type = c.rope_type;
    f.head_dim = c.head_dim;
    f.rotary_dim = r;
    if (!(st = freqs::FindRopeType(c.rope_type)->compute(c, r, seq_len, &f)).ok()) return st;
    if (!(st = freqs::CheckComputed(c, seq_len, f)).ok()) return st;
    *out = std::move(f);
    return Status::Ok();
  });
}

int64_t HfDynamicLength(const RopeConfig& c, int64_t cached_len, int64_t seq_len) {
  if (freqs::LengthRuleOf(c.rope_type) != freqs::LengthRule::kGrowsBeyondMax || !c.max_position_embeddings) {
    return seq_len;
  }
  const int64_t m = *c.max_position_embeddings;  // HF's original_max_seq_len
  int64_t cached = cached_len > 0 ? cached_len : m;  // max_seq_len_cached starts at M
  if (seq_len > cached) cached = seq_len;            // growth: recompute at L
  if (seq_len < m && cached > m) cached = m;         // reset to the original frequencies
  return cached;
}

}  // namespace posenc
