// posenc/vision.h: 2-D RoPE of vision towers, one rotary angle stream per image axis.
//
// Each patch has a (row, col) position. With head_dim d (d % 4 == 0) the d/2 rotary pairs are
// (x[i], x[i + d/2]) (HF rotate_half) and split in two halves of d/4 pairs:
//   kQwenVL  (Qwen2-VL, Qwen2.5-VL, Qwen3-VL vision towers; HF Qwen2_5_VisionRotaryEmbedding
//            with dim = d/2, rot_pos_emb, apply_rotary_pos_emb_vision):
//            pair i < d/4: angle row * w_i; pair d/4 + i: col * w_i; w_i = theta^(-4i/d)
//   kPixtral (Pixtral, Mistral 3 vision; HF PixtralRotaryEmbedding): with f_j = theta^(-2j/d),
//            pair i < d/4: row * f_{2i} (even frequencies); pair d/4 + i: col * f_{2i+1} (odd)
// This is M-RoPE with two streams (row, col), sections [d/4, d/4] and the frequencies above:
// ApplyVisionRope runs exactly that ApplyRope call (same kernels, bound, bitwise contracts).
#ifndef POSENC_VISION_H_
#define POSENC_VISION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "posenc/export.h"
#include "posenc/rope.h"
#include "posenc/status.h"

namespace posenc {

enum class VisionRopeKind { kQwenVL = 0, kPixtral = 1, kLlama4 = 2 };

struct VisionRopeParams {
  VisionRopeKind kind = VisionRopeKind::kQwenVL;
  double theta = 10000.0;  // Qwen-VL towers: 10000 (fixed in HF); Pixtral: vision rope_theta
  // (row, col) of every patch: [batch, patches, 2], patches = the tensors' seq axis; exactly one
  // of the two is set. Copied once at the start of the call.
  const int64_t* rows_cols64 = nullptr;
  const int32_t* rows_cols32 = nullptr;
  RotationArithmetic arithmetic = RotationArithmetic::kF64;
  bool inverse = false;
  Execution exec;
};

// q and/or k [batch, patches, heads, head_dim] as RopeTensors (same rules as ApplyRope).
POSENC_API Status ApplyVisionRope(const RopeTensors& tensors, const VisionRopeParams& params);

// The d/2 per-pair frequencies of `kind` for head_dim d (d % 4 == 0, theta finite and > 0).
POSENC_API Status VisionRopeFrequencies(VisionRopeKind kind, int64_t head_dim, double theta,
                                        std::vector<double>* inv_freq);

// (row, col) per patch for an image or video of grid (t, h, w) patches in the order the HF
// vision tower sees them: kQwenVL rot_pos_emb's spatial-merge order (merge x merge blocks,
// row-major inside a block, blocks row-major, repeated for each of the t frames; h and w
// multiples of merge); kPixtral row-major (t = 1, merge = 1). Writes t * h * w pairs
// [patches, 2] to *rows_cols.
POSENC_API Status VisionGridPositions(VisionRopeKind kind, int64_t t, int64_t h, int64_t w,
                                      int64_t spatial_merge_size, std::vector<int64_t>* rows_cols);

// What a multimodal model's config.json says about its vision tower's RoPE (LoadHfVisionConfig).
struct VisionRopeConfig {
  VisionRopeKind kind = VisionRopeKind::kQwenVL;
  double theta = 10000.0;          // VisionRopeParams::theta
  int64_t head_dim = 0;            // the tower's attention head dim (= the tensors' head_dim)
  int64_t num_heads = 0;           // its attention heads
  int64_t patch_size = 0;          // pixels per patch side
  int64_t spatial_merge_size = 1;  // Qwen-VL: merge x merge patches per LLM token (1: none)
  int64_t window_size = 0;         // Qwen2.5-VL window attention, pixels (0: none)
  int64_t image_size = 0;          // Pixtral: largest image side; Llama 4: the image side (0: none)
};
// The vision tower of a Hugging Face config.json: model_type qwen2_vl, qwen2_5_vl, qwen3_vl,
// qwen3_vl_moe (vision_config; theta 10000, fixed by HF), mistral3 / llava with a pixtral
// vision_config, pixtral, llama4 (vision_config) or llama4_vision_model. Absent keys take the HF
// config class's defaults. Errors name the key (with its path) and the value; *out is unchanged.
POSENC_API Status ParseHfVisionConfig(const std::string& json_text, VisionRopeConfig* out);
POSENC_API Status LoadHfVisionConfig(const std::string& path, VisionRopeConfig* out);

namespace reference {
// The same in double (reference::ApplyRope of the equivalent M-RoPE call).
POSENC_API Status ApplyVisionRope(const RopeTensors& tensors, const VisionRopeParams& params);
}  // namespace reference

}  // namespace posenc

#endif  // POSENC_VISION_H_
