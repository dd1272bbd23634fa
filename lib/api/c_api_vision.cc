// C API: posenc_vision_rope_apply (posenc/vision.h).
#include <cstring>
#include <string>

#include "lib/api/c_api_internal.h"
#include "posenc/posenc.h"
#include "posenc/vision.h"

// The C enum is the C++ one, value for value.
static_assert(POSENC_VISION_QWEN_VL == static_cast<int>(posenc::VisionRopeKind::kQwenVL) &&
                  POSENC_VISION_PIXTRAL == static_cast<int>(posenc::VisionRopeKind::kPixtral),
              "posenc_vision_kind must match posenc::VisionRopeKind");

using posenc::capi::RawEnum;

extern "C" {

void posenc_vision_params_init(posenc_vision_params* p) {
  if (p == nullptr) return;
  std::memset(p, 0, sizeof(*p));
  p->kind = POSENC_VISION_QWEN_VL;
  p->theta = 10000.0;
  p->arithmetic = POSENC_ARITH_F64;
}

posenc_status posenc_vision_rope_apply(const posenc_tensor* q, const posenc_tensor* q_out,
                                       const posenc_tensor* k, const posenc_tensor* k_out,
                                       const posenc_vision_params* params) {
  return posenc::capi::Guard([&] {
    using posenc::Status;
    using posenc::StatusCode;
    if (params == nullptr) return Status(StatusCode::kInvalidArgument, "params is null");
    const int kind = RawEnum(params->kind);
    if (kind != POSENC_VISION_QWEN_VL && kind != POSENC_VISION_PIXTRAL) {
      return Status(StatusCode::kInvalidArgument,
                    "params.kind = " + std::to_string(kind) + ": not a posenc_vision_kind");
    }
    posenc::RopeTensors t;
    if (q != nullptr) t.q = posenc::capi::ToTensor(q);
    if (q_out != nullptr) t.q_out = posenc::capi::ToTensor(q_out);
    if (k != nullptr) t.k = posenc::capi::ToTensor(k);
    if (k_out != nullptr) t.k_out = posenc::capi::ToTensor(k_out);
    posenc::VisionRopeParams vp;
    vp.kind = static_cast<posenc::VisionRopeKind>(kind);
    vp.theta = params->theta;
    vp.rows_cols64 = params->rows_cols64;
    vp.rows_cols32 = params->rows_cols32;
    vp.arithmetic = static_cast<posenc::RotationArithmetic>(RawEnum(params->arithmetic));
    vp.inverse = params->inverse != 0;
    vp.exec.max_threads = params->max_threads;
    return posenc::ApplyVisionRope(t, vp);
  });
}

}  // extern "C"
