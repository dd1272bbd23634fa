// ApplyRope with a model config: frequencies from the config at the call's sequence length.
#include <memory>
#include <new>

#include "lib/api/guard.h"
#include "lib/api/positions.h"
#include "lib/api/rope_prepare.h"
#include "lib/api/tensor_checks.h"
#include "posenc/freqs.h"
#include "posenc/rope.h"

namespace posenc {
namespace {

bool SameConfig(const RopeConfig& a, const RopeConfig& b) {
  return a.rope_type == b.rope_type && a.rope_theta == b.rope_theta && a.head_dim == b.head_dim &&
         a.partial_rotary_factor == b.partial_rotary_factor &&
         a.max_position_embeddings == b.max_position_embeddings &&
         a.original_max_position_embeddings == b.original_max_position_embeddings &&
         a.factor == b.factor && a.alpha == b.alpha && a.beta_fast == b.beta_fast &&
         a.beta_slow == b.beta_slow && a.mscale == b.mscale && a.mscale_all_dim == b.mscale_all_dim &&
         a.attention_factor == b.attention_factor && a.truncate == b.truncate &&
         a.low_freq_factor == b.low_freq_factor && a.high_freq_factor == b.high_freq_factor &&
         a.short_factor == b.short_factor && a.long_factor == b.long_factor;
}

// The frequencies of the last (config, L) this thread asked for: a decode loop that calls
// ApplyRope(config) every step computes them once (ComputeFrequencies costs ~100 us). Shared, not
// lent: a thread waiting inside tbb::parallel_for may run another task that calls ApplyRope with
// another config and moves the memo on, while the first call's kernels still read its values.
Status CachedFrequencies(const RopeConfig& config, int64_t seq_len,
                         std::shared_ptr<const RopeFrequencies>* out) {
  struct Memo {
    RopeConfig config;
    int64_t seq_len = 0;
    std::shared_ptr<const RopeFrequencies> freqs;
  };
  thread_local Memo memo;
  if (memo.freqs == nullptr || memo.seq_len != seq_len || !SameConfig(memo.config, config)) {
    auto f = std::make_shared<RopeFrequencies>();
    Status st = ComputeFrequencies(config, seq_len, f.get());
    if (!st.ok()) return st;
    memo.freqs.reset();  // invalid until the key is fully copied (the copy may throw)
    memo.config = config;
    memo.seq_len = seq_len;
    memo.freqs = std::move(f);
  }
  *out = memo.freqs;
  return Status::Ok();
}

}  // namespace

Status ApplyRope(const RopeTensors& tensors, const RopeConfig& config, const RopeParams& params) {
  return api::Guarded("posenc::ApplyRope(config)", [&] {
    if (params.source.kind != CosSinSource::Kind::kOnTheFly) {
      return api::Err(StatusCode::kInvalidArgument,
                      "source: ApplyRope with a config computes cos/sin on the fly; for a table, "
                      "build a RopeTable from ComputeFrequencies");
    }
    // L = largest position + 1, as HF derives it from position_ids (dynamic, longrope only).
    int64_t seq_len = 0;
    const Tensor& shape = tensors.q.present() ? tensors.q : tensors.k;
    const bool length_dependent =
        config.rope_type == RopeType::kDynamic || config.rope_type == RopeType::kLongRope;
    if (length_dependent) {
      // The positions are read for batch x seq tokens: the views must be valid first.
      Status st = api::CheckRopeTensors(tensors);
      if (!st.ok()) return st;
      int64_t largest = 0;
      st = api::LargestPosition(params.positions, shape.shape[0], shape.shape[1], &largest);
      if (!st.ok()) return st;
      seq_len = largest < 0 ? 0 : largest + 1;
    }
    std::shared_ptr<const RopeFrequencies> cached;  // held until the kernels are done
    Status st = CachedFrequencies(config, seq_len, &cached);
    if (!st.ok()) return st;
    const RopeFrequencies& f = *cached;
    if (params.rotary_dim != 0 && params.rotary_dim != f.rotary_dim) {
      return api::Err(StatusCode::kInvalidArgument, "rotary_dim = ", params.rotary_dim,
                      ": the config gives rotary_dim = ", f.rotary_dim, " (pass 0)");
    }
    RopeParams p = params;
    p.rotary_dim = f.rotary_dim;
    p.freqs.inv_freq = f.inv_freq.data();
    p.freqs.inv_freq_len = static_cast<int64_t>(f.inv_freq.size());
    p.freqs.attention_factor = f.attention_factor;
    return ApplyRope(tensors, p);
  });
}

}  // namespace posenc
