// C API: posenc_rope_shift and posenc_rope_rerotate (posenc/shift.h).
#include <cstring>
#include <string>

#include "lib/api/c_api_internal.h"
#include "posenc/posenc.h"
#include "posenc/shift.h"

// The C enum is the C++ one, value for value.
static_assert(POSENC_SHIFT_UNIFORM == static_cast<int>(posenc::ShiftParams::DeltaKind::kUniform) &&
                  POSENC_SHIFT_PER_BATCH == static_cast<int>(posenc::ShiftParams::DeltaKind::kPerBatch) &&
                  POSENC_SHIFT_PER_TOKEN == static_cast<int>(posenc::ShiftParams::DeltaKind::kPerToken),
              "posenc_shift_kind must match posenc::ShiftParams::DeltaKind");

using posenc::capi::RawEnum;

// The C enums this file casts to their C++ twins are those twins.
static_assert(POSENC_SHIFT_UNIFORM == static_cast<int>(posenc::ShiftParams::DeltaKind::kUniform) &&
                  POSENC_SHIFT_PER_BATCH ==
                      static_cast<int>(posenc::ShiftParams::DeltaKind::kPerBatch) &&
                  POSENC_SHIFT_PER_TOKEN ==
                      static_cast<int>(posenc::ShiftParams::DeltaKind::kPerToken),
              "posenc_shift_kind must match posenc::ShiftParams::DeltaKind");
static_assert(POSENC_ARITH_F64 == static_cast<int>(posenc::RotationArithmetic::kF64) &&
                  POSENC_ARITH_F32 == static_cast<int>(posenc::RotationArithmetic::kF32),
              "posenc_arithmetic must match posenc::RotationArithmetic");
static_assert(POSENC_F32 == static_cast<int>(posenc::DType::kF32) &&
                  POSENC_BF16 == static_cast<int>(posenc::DType::kBF16) &&
                  POSENC_F16 == static_cast<int>(posenc::DType::kF16),
              "posenc_dtype must match posenc::DType");
static_assert(POSENC_POSITIONS_OFFSET == static_cast<int>(posenc::Positions::Kind::kOffset) &&
                  POSENC_POSITIONS_PER_BATCH ==
                      static_cast<int>(posenc::Positions::Kind::kPerBatchOffsets) &&
                  POSENC_POSITIONS_IDS32 == static_cast<int>(posenc::Positions::Kind::kIds32) &&
                  POSENC_POSITIONS_IDS64 == static_cast<int>(posenc::Positions::Kind::kIds64) &&
                  POSENC_POSITIONS_STREAM_IDS32 ==
                      static_cast<int>(posenc::Positions::Kind::kStreamIds32) &&
                  POSENC_POSITIONS_STREAM_IDS64 ==
                      static_cast<int>(posenc::Positions::Kind::kStreamIds64),
              "posenc_positions_kind must match posenc::Positions::Kind");

namespace {

using posenc::Status;
using posenc::StatusCode;

// One side of posenc_rerotate_params as the frequencies, positions and source of RerotateParams,
// converted by the RoPE parameters' own conversion (so positions kinds and sources are checked
// alike); its messages name "params.<side>." instead of "params.".
Status ToSide(const posenc_rerotate_side& side, const char* name, posenc::Frequencies* freqs,
              posenc::Positions* positions, posenc::CosSinSource* source) {
  posenc_rope_params rp;
  posenc_rope_params_init(&rp);
  rp.base = side.base;
  rp.inv_freq = side.inv_freq;
  rp.inv_freq_len = side.inv_freq_len;
  rp.attention_factor = side.attention_factor;
  std::memcpy(&rp.positions, &side.positions, sizeof rp.positions);
  // Enum fields are copied as bytes: a caller's out-of-range value must reach the checks of
  // ToRopeParams (which read them through int), not be loaded as the enum type (undefined).
  std::memcpy(&rp.source, &side.source, sizeof rp.source);
  rp.table = side.table;
  rp.cache_cos = side.cache_cos;
  rp.cache_sin = side.cache_sin;
  std::memcpy(&rp.cache_dtype, &side.cache_dtype, sizeof rp.cache_dtype);
  rp.cache_rows = side.cache_rows;
  posenc::RopeParams p;
  const Status st = posenc::capi::ToRopeParams(&rp, &p);
  if (!st.ok()) {
    std::string m = st.message();
    if (m.rfind("params.", 0) == 0) m.insert(7, std::string(name) + ".");
    return Status(st.code(), m);
  }
  *freqs = p.freqs;
  *positions = p.positions;
  *source = p.source;
  return Status::Ok();
}

Status ToRerotateParams(const posenc_rerotate_params* p, posenc::RerotateParams* out) {
  if (p == nullptr) return Status(StatusCode::kInvalidArgument, "params is null");
  posenc::RerotateParams r;
  Status st = ToSide(p->from, "from", &r.from_freqs, &r.from_positions, &r.from_source);
  if (!st.ok()) return st;
  if (!(st = ToSide(p->to, "to", &r.to_freqs, &r.to_positions, &r.to_source)).ok()) return st;
  // Enum fields go through int: RerotateRope rejects values that are not enumerators.
  r.pairs = static_cast<posenc::PairLayout>(RawEnum(p->pairs));
  r.arithmetic = static_cast<posenc::RotationArithmetic>(RawEnum(p->arithmetic));
  r.rotary_dim = p->rotary_dim;
  r.exec.max_threads = p->max_threads;
  *out = r;
  return Status::Ok();
}

template <class Rerotate>
posenc_status RerotateCall(const char* what, const posenc_tensor* k, const posenc_tensor* k_out,
                           const posenc_rerotate_params* params, const Rerotate& rerotate) {
  return posenc::capi::Guard(what, [&] {
    if (k == nullptr) return Status(StatusCode::kInvalidArgument, "k is null");
    posenc::RerotateParams rp;
    const Status st = ToRerotateParams(params, &rp);
    if (!st.ok()) return st;
    const posenc::Tensor out = k_out != nullptr ? posenc::capi::ToTensor(k_out) : posenc::Tensor();
    return rerotate(posenc::capi::ToTensor(k), out, rp);
  });
}

void InitSide(posenc_rerotate_side* s) {
  s->base = 10000.0;
  s->attention_factor = 1.0;
  s->positions.kind = POSENC_POSITIONS_OFFSET;
  s->source = POSENC_SOURCE_ON_THE_FLY;
  s->cache_dtype = POSENC_F32;
}

}  // namespace

extern "C" {

void posenc_shift_params_init(posenc_shift_params* p) {
  if (p == nullptr) return;
  std::memset(p, 0, sizeof(*p));
  p->kind = POSENC_SHIFT_UNIFORM;
  p->pairs = POSENC_PAIRS_HALF;
  p->arithmetic = POSENC_ARITH_F64;
  p->base = 10000.0;
}

posenc_status posenc_rope_shift(const posenc_tensor* k, const posenc_tensor* k_out,
                                const posenc_shift_params* params) {
  return posenc::capi::Guard(__func__, [&] {
    using posenc::Status;
    using posenc::StatusCode;
    if (k == nullptr) return Status(StatusCode::kInvalidArgument, "k is null");
    if (params == nullptr) return Status(StatusCode::kInvalidArgument, "params is null");
    const int kind = RawEnum(params->kind);
    if (kind < POSENC_SHIFT_UNIFORM || kind > POSENC_SHIFT_PER_TOKEN) {
      return Status(StatusCode::kInvalidArgument,
                    "params.kind = " + std::to_string(kind) + ": not a posenc_shift_kind");
    }
    posenc::ShiftParams sp;
    sp.kind = static_cast<posenc::ShiftParams::DeltaKind>(kind);
    sp.delta = params->delta;
    sp.deltas = params->deltas;
    sp.pairs = static_cast<posenc::PairLayout>(RawEnum(params->pairs));
    sp.arithmetic = static_cast<posenc::RotationArithmetic>(RawEnum(params->arithmetic));
    sp.rotary_dim = params->rotary_dim;
    sp.freqs.base = params->base;
    sp.freqs.inv_freq = params->inv_freq;
    sp.freqs.inv_freq_len = params->inv_freq_len;
    sp.exec.max_threads = params->max_threads;
    const posenc::Tensor out = k_out != nullptr ? posenc::capi::ToTensor(k_out) : posenc::Tensor();
    return posenc::ShiftRope(posenc::capi::ToTensor(k), out, sp);
  });
}

void posenc_rerotate_params_init(posenc_rerotate_params* p) {
  if (p == nullptr) return;
  std::memset(p, 0, sizeof(*p));
  p->pairs = POSENC_PAIRS_HALF;
  p->arithmetic = POSENC_ARITH_F64;
  InitSide(&p->from);
  InitSide(&p->to);
}

posenc_status posenc_rope_rerotate(const posenc_tensor* k, const posenc_tensor* k_out,
                                   const posenc_rerotate_params* params) {
  return RerotateCall(__func__, k, k_out, params,
                      [](const posenc::Tensor& kv, const posenc::Tensor& out,
                         const posenc::RerotateParams& rp) { return posenc::RerotateRope(kv, out, rp); });
}

posenc_status posenc_rope_rerotate_reference(const posenc_tensor* k, const posenc_tensor* k_out,
                                             const posenc_rerotate_params* params) {
  return RerotateCall(__func__, k, k_out, params,
                      [](const posenc::Tensor& kv, const posenc::Tensor& out,
                         const posenc::RerotateParams& rp) {
                        return posenc::reference::RerotateRope(kv, out, rp);
                      });
}

}  // extern "C"
