// RopeConfig equality over one field list: adding a field to RopeConfig means adding it here, and
// every comparison (the frequency memo of ApplyRope(config), the loader's "one RoPE for all layer
// types" check, the tests) follows.
#include <tuple>

#include "posenc/freqs.h"

namespace posenc {
namespace {

// Every field of RopeConfig but dict_key (which only names keys in messages).
auto Fields(const RopeConfig& c) {
  return std::tie(c.rope_type, c.rope_theta, c.head_dim, c.partial_rotary_factor, c.rotary_dim,
                  c.pairs, c.num_attention_heads, c.num_key_value_heads, c.max_position_embeddings,
                  c.original_max_position_embeddings, c.factor, c.alpha, c.beta_fast, c.beta_slow,
                  c.mscale, c.mscale_all_dim, c.attention_factor, c.truncate, c.low_freq_factor,
                  c.high_freq_factor, c.short_factor, c.long_factor, c.mrope.section,
                  c.mrope.interleaved);
}

}  // namespace

bool operator==(const RopeConfig& a, const RopeConfig& b) { return Fields(a) == Fields(b); }

}  // namespace posenc
