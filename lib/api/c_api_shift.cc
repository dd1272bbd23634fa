// C API: posenc_rope_shift (posenc/shift.h).
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
  return posenc::capi::Guard([&] {
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

}  // extern "C"
