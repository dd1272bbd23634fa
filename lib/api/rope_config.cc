// ApplyRope with a model config: frequencies from the config at the call's sequence length.
#include <new>

#include "lib/api/positions.h"
#include "lib/api/tensor_checks.h"
#include "posenc/freqs.h"
#include "posenc/rope.h"

namespace posenc {

Status ApplyRope(const RopeTensors& tensors, const RopeConfig& config, const RopeParams& params) {
  try {
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
    if (length_dependent && shape.present() && shape.shape[0] > 0 && shape.shape[1] > 0) {
      int64_t largest = 0;
      Status st = api::LargestPosition(params.positions, shape.shape[0], shape.shape[1], &largest);
      if (!st.ok()) return st;
      seq_len = largest < 0 ? 0 : largest + 1;
    }
    RopeFrequencies f;
    Status st = ComputeFrequencies(config, seq_len, &f);
    if (!st.ok()) return st;
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
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInternal, "out of memory");
  }
}

}  // namespace posenc
