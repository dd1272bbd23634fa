// ApplyRope with a model config: frequencies from the config at the call's sequence length, the
// config's pair layout unless the caller overrides it; and the per-layer entries of posenc/model.h.
#include <new>
#include <string>

#include "lib/api/positions.h"
#include "lib/api/tensor_checks.h"
#include "posenc/freqs.h"
#include "posenc/model.h"
#include "posenc/rope.h"

namespace posenc {
namespace {

// The frequencies of the last (config, L) this thread asked for: a decode loop that calls
// ApplyRope(config) every step computes them once (ComputeFrequencies costs ~100 us). The key is
// the whole config (RopeConfig's operator==, one field list) and L.
Status CachedFrequencies(const RopeConfig& config, int64_t seq_len, const RopeFrequencies** out) {
  struct Memo {
    bool valid = false;
    RopeConfig config;
    int64_t seq_len = 0;
    RopeFrequencies freqs;
  };
  thread_local Memo memo;
  if (!memo.valid || memo.seq_len != seq_len || memo.config != config) {
    RopeFrequencies f;
    Status st = ComputeFrequencies(config, seq_len, &f);
    if (!st.ok()) return st;
    memo.config = config;
    memo.seq_len = seq_len;
    memo.freqs = std::move(f);
    memo.valid = true;
  }
  *out = &memo.freqs;
  return Status::Ok();
}

std::string TypeNames(const ModelRope& m) {
  std::string s;
  for (const RopeLayerType& t : m.layer_types) s += (s.empty() ? "" : ", ") + t.name;
  return s;
}

}  // namespace

Status ApplyRope(const RopeTensors& tensors, const RopeConfig& config, const RopeParams& params) {
  try {
    if (params.source.kind != CosSinSource::Kind::kOnTheFly) {
      return api::Err(StatusCode::kInvalidArgument,
                      "source: ApplyRope with a config computes cos/sin on the fly; for a table, "
                      "build a RopeTable from ComputeFrequencies");
    }
    if (params.seq_len < 0) {
      return api::Err(StatusCode::kInvalidArgument, "seq_len = ", params.seq_len,
                      ": must be >= 0 (0: largest position + 1)");
    }
    // L: explicit, else largest position + 1 as HF derives it from position_ids (dynamic,
    // longrope only).
    int64_t seq_len = params.seq_len;
    const Tensor& shape = tensors.q.present() ? tensors.q : tensors.k;
    const bool length_dependent =
        config.rope_type == RopeType::kDynamic || config.rope_type == RopeType::kLongRope;
    if (seq_len == 0 && length_dependent && shape.present() && shape.shape[0] > 0 && shape.shape[1] > 0) {
      int64_t largest = 0;
      Status st = api::LargestPosition(params.positions, shape.shape[0], shape.shape[1], &largest);
      if (!st.ok()) return st;
      seq_len = largest < 0 ? 0 : largest + 1;
    }
    const RopeFrequencies* cached = nullptr;
    Status st = CachedFrequencies(config, seq_len, &cached);
    if (!st.ok()) return st;
    const RopeFrequencies& f = *cached;
    if (params.rotary_dim != 0 && params.rotary_dim != f.rotary_dim) {
      return api::Err(StatusCode::kInvalidArgument, "rotary_dim = ", params.rotary_dim,
                      ": the config gives rotary_dim = ", f.rotary_dim, " (pass 0)");
    }
    RopeParams p = params;
    p.rotary_dim = f.rotary_dim;
    if (p.pairs == PairLayout::kFromConfig) p.pairs = config.pairs;
    p.freqs.inv_freq = f.inv_freq.data();
    p.freqs.inv_freq_len = static_cast<int64_t>(f.inv_freq.size());
    p.freqs.attention_factor = f.attention_factor;
    return ApplyRope(tensors, p);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInternal, "out of memory");
  }
}

Status LayerRope(const ModelRope& model, const std::string& layer_type, const RopeConfig** out) {
  if (out == nullptr) return api::Err(StatusCode::kInvalidArgument, "out is null");
  for (const RopeLayerType& t : model.layer_types) {
    if (t.name == layer_type) {
      *out = &t.config;
      return Status::Ok();
    }
  }
  return api::Err(StatusCode::kInvalidArgument, "layer_type = \"", layer_type,
                  "\": not a RoPE layer type of this model (", TypeNames(model), ")");
}

Status LayerRope(const ModelRope& model, int64_t layer, const RopeConfig** out) {
  if (out == nullptr) return api::Err(StatusCode::kInvalidArgument, "out is null");
  const int64_t n = static_cast<int64_t>(model.layers.size());
  if (layer < 0 || layer >= n) {
    return api::Err(StatusCode::kInvalidArgument, "layer = ", layer, ": must be in [0, ", n, ")",
                    n == 0 ? " (the config gives no layer count)" : "");
  }
  const int type = model.layers[static_cast<size_t>(layer)];
  if (type == ModelRope::kNoRope) {
    return api::Err(StatusCode::kInvalidArgument, "layer = ", layer,
                    ": has no RoPE (a NoPE layer of this model); skip RoPE for it");
  }
  if (type < 0 || type >= static_cast<int>(model.layer_types.size())) {
    return api::Err(StatusCode::kInvalidArgument, "model.layers[", layer, "] = ", type,
                    ": not an index into model.layer_types");
  }
  *out = &model.layer_types[static_cast<size_t>(type)].config;
  return Status::Ok();
}

Status ApplyRope(const RopeTensors& tensors, const ModelRope& model, const std::string& layer_type,
                 const RopeParams& params) {
  try {
    const RopeConfig* c = nullptr;
    Status st = LayerRope(model, layer_type, &c);
    return st.ok() ? ApplyRope(tensors, *c, params) : st;
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInternal, "out of memory");
  }
}

Status ApplyRope(const RopeTensors& tensors, const ModelRope& model, int64_t layer,
                 const RopeParams& params) {
  try {
    const RopeConfig* c = nullptr;
    Status st = LayerRope(model, layer, &c);
    return st.ok() ? ApplyRope(tensors, *c, params) : st;
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInternal, "out of memory");
  }
}

}  // namespace posenc
