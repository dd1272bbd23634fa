// Hugging Face config.json -> VisionRopeConfig (posenc/vision.h): the RoPE of a multimodal
// model's vision tower. Every error names the key with its path and the value found.
//
// Each family reads its vision config class's fields with that class's __init__ defaults
// (transformers 5.x configuration_*.py):
//   qwen2_vl    Qwen2VLVisionConfig      head_dim = embed_dim / num_heads    (1280, 16)
//   qwen2_5_vl  Qwen2_5_VLVisionConfig   head_dim = hidden_size / num_heads  (3584, 16),
//               window_size 112 (get_window_index)
//   qwen3_vl    Qwen3VLVisionConfig      head_dim = hidden_size / num_heads  (1152, 16)
//   (all three: patch_size 14 / 14 / 16, spatial_merge_size 2, theta 10000: the vision rotary
//    embedding's own default, not a config key)
//   pixtral     PixtralVisionConfig      head_dim = hidden_size / num_attention_heads (1024, 16;
//               a `head_dim` key is overwritten by HF, so ignored here), image_size 1024,
//               patch_size 16, theta = rope_parameters.rope_theta, else rope_theta, else 10000
//   llama4      Llama4VisionConfig       head_dim = hidden_size / num_attention_heads (768, 16),
//               image_size 448, patch_size 14, theta = rope_theta (10000)
// The vision config is `vision_config` of the model's config (mistral3 and llava hold a pixtral
// one), or the document itself when its model_type is a vision model's (pixtral,
// llama4_vision_model).
#include <cmath>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lib/core/guard.h"
#include "lib/core/status_util.h"
#include "lib/freqs/json_fields.h"
#include "posenc/vision.h"

namespace posenc {
namespace {

using core::Err;
using freqs::json;
constexpr auto kInvalid = StatusCode::kInvalidArgument;

// One vision config class: where its fields live and its defaults.
struct VisionFamily {
  const char* model_type;     // the top-level model_type naming it
  bool nested;                // fields under `vision_config` (else the document itself)
  VisionRopeKind kind;
  const char* width_key;      // embed_dim or hidden_size
  int64_t width_default;
  const char* heads_key;      // num_heads or num_attention_heads
  int64_t heads_default;
  int64_t patch_default;
  int64_t merge_default;      // spatial_merge_size (1: none)
  int64_t window_default;     // window_size (0: none)
  int64_t image_default;      // image_size (0: none)
  bool theta_from_config;     // rope_parameters.rope_theta / rope_theta; else fixed 10000
  const char* vision_model_type;  // required vision_config.model_type, or nullptr: any
};

constexpr VisionFamily kFamilies[] = {
    {"qwen2_vl", true, VisionRopeKind::kQwenVL, "embed_dim", 1280, "num_heads", 16, 14, 2, 0, 0, false, nullptr},
    {"qwen2_5_vl", true, VisionRopeKind::kQwenVL, "hidden_size", 3584, "num_heads", 16, 14, 2, 112, 0, false,
     nullptr},
    {"qwen3_vl", true, VisionRopeKind::kQwenVL, "hidden_size", 1152, "num_heads", 16, 16, 2, 0, 0, false, nullptr},
    {"qwen3_vl_moe", true, VisionRopeKind::kQwenVL, "hidden_size", 1152, "num_heads", 16, 16, 2, 0, 0, false,
     nullptr},
    {"pixtral", false, VisionRopeKind::kPixtral, "hidden_size", 1024, "num_attention_heads", 16, 16, 1, 0, 1024,
     true, nullptr},
    {"mistral3", true, VisionRopeKind::kPixtral, "hidden_size", 1024, "num_attention_heads", 16, 16, 1, 0, 1024,
     true, "pixtral"},
    {"llava", true, VisionRopeKind::kPixtral, "hidden_size", 1024, "num_attention_heads", 16, 16, 1, 0, 1024, true,
     "pixtral"},
    {"llama4", true, VisionRopeKind::kLlama4, "hidden_size", 768, "num_attention_heads", 16, 14, 1, 0, 448, true,
     nullptr},
    {"llama4_vision_model", false, VisionRopeKind::kLlama4, "hidden_size", 768, "num_attention_heads", 16, 14, 1,
     0, 448, true, nullptr},
};

std::string FamilyList() {
  std::string s;
  for (const VisionFamily& f : kFamilies) s += (s.empty() ? "" : ", ") + std::string(f.model_type);
  return s;
}

// obj[key] as an integer >= `min` (exact, fits int64), or `fallback` when absent.
Status ReadInt(const json& obj, const char* key, const std::string& path, int64_t fallback, int64_t min,
               int64_t* out) {
  std::optional<int64_t> v;
  Status st = freqs::GetInt(obj, key, path, &v);
  if (!st.ok()) return st;
  *out = v.value_or(fallback);
  if (*out < min) return Err(kInvalid, path, key, " = ", *out, ": must be >= ", min);
  return Status::Ok();
}

Status ReadTheta(const json& v, const std::string& path, double* theta) {
  std::optional<double> t;
  const json* params = nullptr;
  Status st = freqs::GetObject(v, "rope_parameters", path, &params);
  if (st.ok() && params != nullptr) st = freqs::GetNumber(*params, "rope_theta", path + "rope_parameters.", &t);
  if (st.ok() && !t) st = freqs::GetNumber(v, "rope_theta", path, &t);
  if (!st.ok()) return st;
  *theta = t.value_or(10000.0);
  if (!std::isfinite(*theta) || !(*theta > 0.0)) {
    return Err(kInvalid, path, "rope_theta = ", *theta, ": must be finite and > 0");
  }
  return Status::Ok();
}

Status ParseVisionDocument(const json& doc, VisionRopeConfig* out) {
  if (!doc.is_object()) return Err(kInvalid, "config: not a JSON object");
  std::optional<std::string> model_type;
  Status st = freqs::GetString(doc, "model_type", "", &model_type);
  if (!st.ok()) return st;
  if (!model_type) return Err(kInvalid, "model_type: missing (needed to know the vision tower: ", FamilyList(), ")");
  const VisionFamily* family = nullptr;
  for (const VisionFamily& f : kFamilies) {
    if (*model_type == f.model_type) family = &f;
  }
  if (family == nullptr) {
    return Err(kInvalid, "model_type = \"", *model_type, "\": no vision-tower RoPE known for it (known: ",
               FamilyList(), ")");
  }
  const json* vision = &doc;
  std::string path;
  if (family->nested) {
    if (!(st = freqs::GetObject(doc, "vision_config", "", &vision)).ok()) return st;
    if (vision == nullptr) return Err(kInvalid, "vision_config: missing (model_type \"", *model_type, "\")");
    path = "vision_config.";
  }
  if (family->vision_model_type != nullptr) {
    std::optional<std::string> vt;
    if (!(st = freqs::GetString(*vision, "model_type", path, &vt)).ok()) return st;
    if (vt.value_or("") != family->vision_model_type) {
      return Err(kInvalid, path, "model_type = \"", vt.value_or(""), "\": model_type \"", *model_type,
                 "\" has vision-tower RoPE only with a \"", family->vision_model_type, "\" vision config");
    }
  }
  VisionRopeConfig c;
  c.kind = family->kind;
  int64_t width = 0;
  if (!(st = ReadInt(*vision, family->width_key, path, family->width_default, 1, &width)).ok()) return st;
  if (!(st = ReadInt(*vision, family->heads_key, path, family->heads_default, 1, &c.num_heads)).ok()) return st;
  if (width % c.num_heads != 0) {
    return Err(kInvalid, path, family->width_key, " = ", width, ": not a multiple of ", family->heads_key, " = ",
               c.num_heads);
  }
  c.head_dim = width / c.num_heads;
  if (c.head_dim % 4 != 0) {
    return Err(kInvalid, path, family->width_key, " / ", family->heads_key, " = ", c.head_dim,
               ": the head dim must be a multiple of 4 (two halves of head_dim / 4 rotary pairs)");
  }
  if (!(st = ReadInt(*vision, "patch_size", path, family->patch_default, 1, &c.patch_size)).ok()) return st;
  c.spatial_merge_size = family->merge_default;
  if (family->merge_default > 1 &&
      !(st = ReadInt(*vision, "spatial_merge_size", path, family->merge_default, 1, &c.spatial_merge_size)).ok()) {
    return st;
  }
  c.window_size = family->window_default;
  if (family->window_default > 0 &&
      !(st = ReadInt(*vision, "window_size", path, family->window_default, 1, &c.window_size)).ok()) {
    return st;
  }
  c.image_size = family->image_default;
  if (family->image_default > 0 &&
      !(st = ReadInt(*vision, "image_size", path, family->image_default, 1, &c.image_size)).ok()) {
    return st;
  }
  c.theta = 10000.0;
  if (family->theta_from_config && !(st = ReadTheta(*vision, path, &c.theta)).ok()) return st;
  *out = c;
  return Status::Ok();
}

}  // namespace

Status ParseHfVisionConfig(const std::string& json_text, VisionRopeConfig* out) {
  return core::Guarded("posenc::ParseHfVisionConfig", [&] {
    if (out == nullptr) return Err(kInvalid, "out is null");
    return freqs::ParseJsonText(json_text, [&](const json& doc) { return ParseVisionDocument(doc, out); });
  });
}

Status LoadHfVisionConfig(const std::string& path, VisionRopeConfig* out) {
  return core::Guarded("posenc::LoadHfVisionConfig", [&] {
    if (out == nullptr) return Err(kInvalid, "out is null");
    std::string text;
    Status st = freqs::ReadConfigFile(path, &text);
    if (!st.ok()) return st;
    st = ParseHfVisionConfig(text, out);
    if (!st.ok()) return Status(st.code(), path + ": " + st.message());
    return st;
  });
}

}  // namespace posenc
