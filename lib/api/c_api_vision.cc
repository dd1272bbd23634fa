// C API: posenc_vision_rope_apply (posenc/vision.h).
#include <cstring>
#include <string>
#include <vector>

#include "lib/api/c_api_internal.h"
#include "posenc/posenc.h"
#include "posenc/vision.h"

// The C enum is the C++ one, value for value.
static_assert(POSENC_VISION_QWEN_VL == static_cast<int>(posenc::VisionRopeKind::kQwenVL) &&
                  POSENC_VISION_PIXTRAL == static_cast<int>(posenc::VisionRopeKind::kPixtral),
              "posenc_vision_kind must match posenc::VisionRopeKind");

using posenc::capi::RawEnum;

static_assert(static_cast<int>(posenc::VisionRopeKind::kQwenVL) == POSENC_VISION_QWEN_VL &&
                  static_cast<int>(posenc::VisionRopeKind::kPixtral) == POSENC_VISION_PIXTRAL &&
                  static_cast<int>(posenc::VisionRopeKind::kLlama4) == POSENC_VISION_LLAMA4,
              "posenc_vision_kind mirrors posenc::VisionRopeKind");

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
  return posenc::capi::Guard(__func__, [&] {
    using posenc::Status;
    using posenc::StatusCode;
    if (params == nullptr) return Status(StatusCode::kInvalidArgument, "params is null");
    const int kind = RawEnum(params->kind);
    if (kind != POSENC_VISION_QWEN_VL && kind != POSENC_VISION_PIXTRAL &&
        kind != POSENC_VISION_LLAMA4) {
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

posenc_status posenc_vision_grid_positions(posenc_vision_kind kind, int64_t t, int64_t h, int64_t w,
                                           int64_t spatial_merge_size, int64_t* rows_cols,
                                           int64_t capacity_pairs, int64_t* num_patches) {
  return posenc::capi::Guard(__func__, [&] {
    using posenc::Status;
    using posenc::StatusCode;
    if (num_patches == nullptr) return Status(StatusCode::kInvalidArgument, "num_patches is null");
    std::vector<int64_t> rc;
    // An out-of-range kind is named by VisionGridPositions ("kind = 7: ...").
    const auto k = static_cast<posenc::VisionRopeKind>(RawEnum(kind));
    Status st = posenc::VisionGridPositions(k, t, h, w, spatial_merge_size, &rc);
    if (!st.ok()) return st;
    const int64_t n = static_cast<int64_t>(rc.size() / 2);
    if (rows_cols != nullptr && capacity_pairs < n) {
      return Status(StatusCode::kInvalidArgument, "capacity_pairs = " +
                                                      std::to_string(capacity_pairs) +
                                                      ": needs " + std::to_string(n) + " pairs");
    }
    if (rows_cols != nullptr) std::memcpy(rows_cols, rc.data(), rc.size() * sizeof(int64_t));
    *num_patches = n;
    return Status::Ok();
  });
}

posenc_status posenc_vision_window_order(int64_t t, int64_t h, int64_t w,
                                         int64_t spatial_merge_size, int64_t window_size,
                                         int64_t patch_size,
                                         int64_t* rows_cols, int64_t* window_index,
                                         int64_t* cu_window_seqlens, int64_t cu_capacity,
                                         int64_t* num_windows) {
  return posenc::capi::Guard(__func__, [&] {
    using posenc::Status;
    using posenc::StatusCode;
    if (num_windows == nullptr) return Status(StatusCode::kInvalidArgument, "num_windows is null");
    posenc::VisionWindowOrder o;
    Status st = posenc::VisionWindowedGridPositions(t, h, w, spatial_merge_size, window_size,
                                                    patch_size, &o);
    if (!st.ok()) return st;
    const int64_t cu = static_cast<int64_t>(o.cu_window_seqlens.size());
    if (cu_window_seqlens != nullptr && cu_capacity < cu) {
      return Status(StatusCode::kInvalidArgument, "cu_capacity = " + std::to_string(cu_capacity) +
                                                      ": needs num_windows + 1 = " +
                                                      std::to_string(cu));
    }
    if (rows_cols != nullptr) {
      std::memcpy(rows_cols, o.rows_cols.data(), o.rows_cols.size() * sizeof(int64_t));
    }
    if (window_index != nullptr) {
      std::memcpy(window_index, o.window_index.data(), o.window_index.size() * sizeof(int64_t));
    }
    if (cu_window_seqlens != nullptr) {
      std::memcpy(cu_window_seqlens, o.cu_window_seqlens.data(),
                  o.cu_window_seqlens.size() * sizeof(int64_t));
    }
    *num_windows = cu - 1;
    return Status::Ok();
  });
}

}  // extern "C"

namespace {

posenc_status VisionConfig(const char* what, const char* text, const char* name,
                           posenc::Status (*read)(const std::string&, posenc::VisionRopeConfig*),
                           posenc_vision_config* out) {
  return posenc::capi::Guard(what, [&] {
    using posenc::Status;
    using posenc::StatusCode;
    if (text == nullptr) return Status(StatusCode::kInvalidArgument, std::string(name) + " is null");
    if (out == nullptr) return Status(StatusCode::kInvalidArgument, "out is null");
    posenc::VisionRopeConfig c;
    Status st = read(text, &c);
    if (!st.ok()) return st;
    out->kind = static_cast<posenc_vision_kind>(static_cast<int>(c.kind));
    out->theta = c.theta;
    out->head_dim = c.head_dim;
    out->num_heads = c.num_heads;
    out->patch_size = c.patch_size;
    out->spatial_merge_size = c.spatial_merge_size;
    out->window_size = c.window_size;
    out->image_size = c.image_size;
    return Status::Ok();
  });
}

}  // namespace

extern "C" {

posenc_status posenc_vision_config_load(const char* path, posenc_vision_config* out) {
  return VisionConfig(__func__, path, "path", posenc::LoadHfVisionConfig, out);
}

posenc_status posenc_vision_config_parse(const char* json_text, posenc_vision_config* out) {
  return VisionConfig(__func__, json_text, "json_text", posenc::ParseHfVisionConfig, out);
}

}  // extern "C"
