// Internal: the rope type registry. One entry per RopeType: its config-file name(s), the keys it
// requires, how it depends on the sequence length, the check of the keys it reads and the
// computation of its frequencies. Config validation, ComputeFrequencies, RopeTypeName, the
// loader's name lookup and key precedence, ApplyRope(config)'s length rule and the C API's enum
// check all read this one table: adding a rope type is one enum value and one entry.
#ifndef POSENC_LIB_FREQS_SCALING_H_
#define POSENC_LIB_FREQS_SCALING_H_

#include <cstdint>
#include <string>

#include "posenc/freqs.h"

namespace posenc {
namespace freqs {

// A key a rope type cannot do without. ValidateConfig checks every entry's required keys in one
// place, before the entry's validate, with one message: "<dict_key>.<name>: missing (required by
// rope_type T)" (no dict_key prefix for a top-level key; `why` replaces the parenthesis).
struct RequiredKey {
  const char* name;  // as the message names it (nullptr: unused)
  bool in_dict;      // a key of the rope dict (named with dict_key) or of the config's top level
  bool (*present)(const RopeConfig& config);
  const char* why;   // nullptr: " (required by rope_type T)"
};

// How a type's frequencies depend on the sequence length L.
enum class LengthRule {
  kNone,                // the same for every L
  kGrowsBeyondMax,      // dynamic: recomputed for L > max_position_embeddings (HfDynamicLength)
  kSwitchesAtOriginal,  // longrope: one set for L <= M0, the other beyond
};

struct RopeTypeEntry {
  RopeType type;
  const char* name;   // the HF rope_type string
  const char* alias;  // another config-file name of the type (HF's legacy "su"), or nullptr
  RequiredKey required[5];  // in the order checked; ends at the first entry without a name
  LengthRule length;
  // rotary_dim = head_dim whatever partial_rotary_factor says (which then picks the pairs that
  // get a nonzero frequency); needs an even head_dim.
  bool rotates_whole_head;
  // standardize_rope_params: a top-level original_max_position_embeddings wins over the dict's,
  // and max_position_embeddings stands in when neither gives one.
  bool standardized_original;
  // Checks the values of the keys this type reads (the common keys and the required keys' presence
  // are checked before); r = rotary_dim.
  Status (*validate)(const RopeConfig& config, int64_t r);
  // inv_freq (r / 2 values) and attention factor for sequence length L (0 = unknown); fails
  // only when an intermediate (an NTK-rescaled base) or a result leaves the usable range.
  Status (*compute)(const RopeConfig& config, int64_t r, int64_t seq_len, RopeFrequencies* out);
};

// The entry of a type (nullptr for a value outside the enum), of an HF name (nullptr if unknown).
const RopeTypeEntry* FindRopeType(RopeType type);
const RopeTypeEntry* FindRopeType(const std::string& name);
// "default, linear, ..." and "su" (the aliases), for messages.
std::string RopeTypeNames();
std::string RopeTypeAliases();
// The length rule of a type (kNone for a value outside the enum, which validation rejects).
LengthRule LengthRuleOf(RopeType type);

// Checks the common keys and then the type's; on success sets *rotary_dim.
Status ValidateConfig(const RopeConfig& config, int64_t* rotary_dim);

// M0: original_max_position_embeddings, else max_position_embeddings (0 when neither).
int64_t OriginalLength(const RopeConfig& config);

// YaRN's attention scaling g(s, m) = 0.1 m ln s + 1 for s > 1, else 1
// (modeling_rope_utils._compute_yarn_parameters.get_mscale; DeepSeek's yarn_get_mscale).
double YarnMscale(double s, double m);

// The scaling factor YaRN uses: factor, else max_position_embeddings / M0.
double YarnFactor(const RopeConfig& config);

}  // namespace freqs
}  // namespace posenc

#endif  // POSENC_LIB_FREQS_SCALING_H_
