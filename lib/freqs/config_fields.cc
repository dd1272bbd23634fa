// RopeConfig equality over one field list: adding a field to RopeConfig means adding it here, and
// every comparison (the frequency memo of ApplyRope(config), the loader's "one RoPE for all layer
// types" check, the tests) follows.
#include <string>
#include <tuple>
#include <type_traits>

#include "posenc/freqs.h"

namespace posenc {
namespace {

// Every field of RopeConfig but dict_key (which only names keys in messages). The structured
// bindings name every field of RopeConfig and MRopeSpec, in declaration order: a field added to
// either struct without being added here fails to compile ("N names provided" for N + 1 members).
auto Fields(const RopeConfig& c) {
  const auto& [rope_type, rope_theta, head_dim, partial_rotary_factor, rotary_dim, pairs,
               num_attention_heads, num_key_value_heads, max_position_embeddings,
               original_max_position_embeddings, factor, alpha, beta_fast, beta_slow, mscale,
               mscale_all_dim, attention_factor, truncate, low_freq_factor, high_freq_factor,
               short_factor, long_factor, mrope, dict_key] = c;
  const auto& [section, interleaved] = mrope;
  // The one field left out is the last, the message-only dict_key.
  static_assert(std::is_same_v<std::remove_cv_t<decltype(dict_key)>, std::string>,
                "RopeConfig's last field is dict_key");
  (void)dict_key;
  return std::tie(rope_type, rope_theta, head_dim, partial_rotary_factor, rotary_dim, pairs,
                  num_attention_heads, num_key_value_heads, max_position_embeddings,
                  original_max_position_embeddings, factor, alpha, beta_fast, beta_slow, mscale,
                  mscale_all_dim, attention_factor, truncate, low_freq_factor, high_freq_factor,
                  short_factor, long_factor, section, interleaved);
}

}  // namespace

bool operator==(const RopeConfig& a, const RopeConfig& b) { return Fields(a) == Fields(b); }

}  // namespace posenc
