// posenc::ShiftRope: a KV-cache shift is ApplyRope with the deltas as positions (posenc/shift.h).
#include "posenc/shift.h"

#include <string>
#include <vector>

#include "lib/core/guard.h"
#include "lib/api/rope_prepare.h"
#include "lib/api/tensor_checks.h"
#include "posenc/rope.h"

namespace posenc {
namespace {

// Message of a RoPE status with the positions named as what they are here.
Status AsShift(const Status& st) {
  if (st.ok()) return st;
  std::string m = st.message();
  for (size_t at = m.find("positions"); at != std::string::npos; at = m.find("positions", at)) {
    m.replace(at, 9, "deltas");
  }
  return Status(st.code(), m);
}

template <class Apply>
Status Shift(const Tensor& k, const Tensor& k_out, const ShiftParams& sp, const Apply& apply) {
  RopeTensors t;
  t.k = k;
  t.k_out = k_out;
  // The views first: the deltas are read for batch x seq tokens.
  Status st = api::CheckRopeTensors(t);
  if (!st.ok()) return st;
  if (sp.freqs.attention_factor != 1.0) {
    return api::Err(StatusCode::kInvalidArgument,
                    "freqs.attention_factor = ", sp.freqs.attention_factor,
                    ": a shift composes rotations and must not scale again (pass 1)");
  }
  const int64_t batch = k.shape[0], seq = k.shape[1];
  RopeParams p;
  p.pairs = sp.pairs == PairLayout::kFromConfig ? PairLayout::kHalf : sp.pairs;
  p.arithmetic = sp.arithmetic;
  p.rotary_dim = sp.rotary_dim;
  p.freqs = sp.freqs;
  p.exec = sp.exec;
  std::vector<int64_t> expanded;  // uniform / per-batch deltas as per-token positions
  switch (sp.kind) {
    case ShiftParams::DeltaKind::kUniform:
      expanded.assign(static_cast<size_t>(batch * seq), sp.delta);
      p.positions = Positions::Ids(static_cast<const int64_t*>(expanded.data()));
      break;
    case ShiftParams::DeltaKind::kPerBatch:
      if (sp.deltas == nullptr) return api::Err(StatusCode::kInvalidArgument, "deltas is null");
      if (!(st = api::CheckAligned(sp.deltas, 8, "deltas")).ok()) return st;
      expanded.resize(static_cast<size_t>(batch * seq));
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t s = 0; s < seq; ++s) expanded[static_cast<size_t>(b * seq + s)] = sp.deltas[b];
      p.positions = Positions::Ids(static_cast<const int64_t*>(expanded.data()));
      break;
    case ShiftParams::DeltaKind::kPerToken:
      if (sp.deltas == nullptr) return api::Err(StatusCode::kInvalidArgument, "deltas is null");
      p.positions = Positions::Ids(sp.deltas);  // snapshotted and overlap-checked by ApplyRope
      break;
    default:
      return api::Err(StatusCode::kInvalidArgument, "kind = ", static_cast<int>(sp.kind),
                      ": not a ShiftParams::DeltaKind");
  }
  return AsShift(apply(t, p));
}

}  // namespace

Status ShiftRope(const Tensor& k, const Tensor& k_out, const ShiftParams& params) {
  return api::Guarded("posenc::ShiftRope", [&] {
    return Shift(k, k_out, params,
                 [](const RopeTensors& t, const RopeParams& p) { return ApplyRope(t, p); });
  });
}

namespace reference {
Status ShiftRope(const Tensor& k, const Tensor& k_out, const ShiftParams& params) {
  return api::Guarded("posenc::reference::ShiftRope", [&] {
    return Shift(k, k_out, params, [](const RopeTensors& t, const RopeParams& p) {
      return reference::ApplyRope(t, p);
    });
  });
}
}  // namespace reference

}  // namespace posenc
