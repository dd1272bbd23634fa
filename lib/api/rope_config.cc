// ApplyRope with a model config: frequencies from the config at the call's sequence length, the
// config's pair layout unless the caller overrides it; and the per-layer entries of posenc/model.h.
#include <algorithm>
#include <memory>
#include <new>
#include <string>

#include "lib/core/guard.h"
#include "lib/api/positions.h"
#include "lib/api/rope_prepare.h"
#include "lib/api/tensor_checks.h"
#include "lib/freqs/scaling.h"
#include "posenc/freqs.h"
#include "posenc/model.h"
#include "posenc/rope.h"

namespace posenc {
namespace {

// The frequencies of the last (config, L) this thread asked for: a decode loop that calls
// ApplyRope(config) every step computes them once (ComputeFrequencies costs ~100 us). The key is
// the whole config (RopeConfig's operator==, one field list) and L. Shared, not lent: a thread
// waiting inside tbb::parallel_for may run another task that calls ApplyRope with another config
// and moves the memo on, while the first call's kernels still read its values.
Status CachedFrequencies(const RopeConfig& config, int64_t seq_len,
                         std::shared_ptr<const RopeFrequencies>* out) {
  struct Memo {
    RopeConfig config;
    int64_t seq_len = 0;
    std::shared_ptr<const RopeFrequencies> freqs;
  };
  thread_local Memo memo;
  if (memo.freqs == nullptr || memo.seq_len != seq_len || memo.config != config) {
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

std::string TypeNames(const ModelRope& m) {
  std::string s;
  for (const RopeLayerType& t : m.layer_types) s += (s.empty() ? "" : ", ") + t.name;
  return s;
}

}  // namespace

Status ApplyRope(const RopeTensors& tensors, const RopeConfig& config, const RopeParams& params) {
  return api::Guarded("posenc::ApplyRope(config)", [&] {
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
    const bool length_dependent = freqs::LengthRuleOf(config.rope_type) != freqs::LengthRule::kNone;
    if (seq_len == 0 && length_dependent) {
      // The positions are read for batch x seq tokens: the views must be valid first.
      Status st = api::CheckRopeTensors(tensors);
      if (!st.ok()) return st;
      int64_t largest = 0;
      if (params.positions.kind == Positions::Kind::kStreamIds32 ||
          params.positions.kind == Positions::Kind::kStreamIds64) {
        // M-RoPE: the largest id of any stream (HF: position_ids.max() over [3, batch, seq]).
        api::StreamSnapshot streams;
        st = streams.Take(params.positions, shape.shape[0], shape.shape[1],
                          params.positions.streams);
        if (!st.ok()) return st;
        largest = api::RangeOf(streams.stream(0), shape.shape[0], shape.shape[1]).max;
        for (int64_t j = 1; j < streams.streams(); ++j) {
          largest = std::max(largest,
                             api::RangeOf(streams.stream(j), shape.shape[0], shape.shape[1]).max);
        }
      } else {
        st = api::LargestPosition(params.positions, shape.shape[0], shape.shape[1], &largest);
        if (!st.ok()) return st;
      }
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
    if (p.pairs == PairLayout::kFromConfig) p.pairs = config.pairs;
    p.freqs.inv_freq = f.inv_freq.data();
    p.freqs.inv_freq_len = static_cast<int64_t>(f.inv_freq.size());
    p.freqs.attention_factor = f.attention_factor;
    // The config's M-RoPE sections unless the caller gave its own.
    if (!p.mrope.present() && config.mrope.present()) {
      p.mrope.section = config.mrope.section.data();
      p.mrope.num_sections = static_cast<int64_t>(config.mrope.section.size());
      p.mrope.interleaved = config.mrope.interleaved;
    }
    return ApplyRope(tensors, p);
  });
}

Status LayerRope(const ModelRope& model, const std::string& layer_type, const RopeConfig** out) {
  return api::Guarded("posenc::LayerRope(layer_type)", [&] {
    if (out == nullptr) return api::Err(StatusCode::kInvalidArgument, "out is null");
    for (const RopeLayerType& t : model.layer_types) {
      if (t.name == layer_type) {
        *out = &t.config;
        return Status::Ok();
      }
    }
    return api::Err(StatusCode::kInvalidArgument, "layer_type = \"", layer_type,
                    "\": not a RoPE layer type of this model (", TypeNames(model), ")");
  });
}

Status LayerRope(const ModelRope& model, int64_t layer, const RopeConfig** out) {
  return api::Guarded("posenc::LayerRope(layer)", [&] {
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
  });
}

Status ApplyRope(const RopeTensors& tensors, const ModelRope& model, const std::string& layer_type,
                 const RopeParams& params) {
  return api::Guarded("posenc::ApplyRope(model, layer_type)", [&] {
    const RopeConfig* c = nullptr;
    Status st = LayerRope(model, layer_type, &c);
    return st.ok() ? ApplyRope(tensors, *c, params) : st;
  });
}

Status ApplyRope(const RopeTensors& tensors, const ModelRope& model, int64_t layer,
                 const RopeParams& params) {
  return api::Guarded("posenc::ApplyRope(model, layer)", [&] {
    const RopeConfig* c = nullptr;
    Status st = LayerRope(model, layer, &c);
    return st.ok() ? ApplyRope(tensors, *c, params) : st;
  });
}

}  // namespace posenc
