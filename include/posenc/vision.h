// posenc/vision.h: 2-D RoPE of vision towers, one rotary angle stream per image axis.
//
// Each patch has a (row, col) position. With head_dim d (d % 4 == 0) the d/2 rotary pairs are
// (x[i], x[i + d/2]) (HF rotate_half; kLlama4: (x[2i], x[2i+1])) and split in two halves of d/4
// pairs:
//   kQwenVL  (Qwen2-VL, Qwen2.5-VL, Qwen3-VL vision towers; HF Qwen2_5_VisionRotaryEmbedding
//            with dim = d/2, rot_pos_emb, apply_rotary_pos_emb_vision):
//            pair i < d/4: angle row * w_i; pair d/4 + i: col * w_i; w_i = theta^(-4i/d)
//   kPixtral (Pixtral, Mistral 3 vision; HF PixtralRotaryEmbedding): with f_j = theta^(-2j/d),
//            pair i < d/4: row * f_{2i} (even frequencies); pair d/4 + i: col * f_{2i+1} (odd)
//   kLlama4  (Llama 4 vision tower; HF Llama4VisionRotaryEmbedding + vision_apply_rotary_emb,
//            complex view of INTERLEAVED pairs (x[2i], x[2i+1])): with w_i = theta^(-4i/d),
//            pair i < d/4: (col + 1) * w_i; pair d/4 + i: (row + 1) * w_i (x = column first).
//            The CLS token, which HF appends after the patches with id -2 and masks to angle 0,
//            is the position (row, col) = (-1, -1): the same formula gives it angle 0, so no
//            special case reaches the kernels (rotation by 0: cos 1, sin 0, so the token's
//            values come back unchanged, up to the sign of a zero (x - y*0 with x = -0) and
//            NaN canonicalisation). Other positions must have row, col >= 0; a mixed (-1, c)
//            is rejected, as HF never makes one.
// This is M-RoPE with two streams, sections [d/4, d/4] and the frequencies above (streams
// (row, col); kLlama4: (col + 1, row + 1), interleaved pairs): ApplyVisionRope runs exactly that
// ApplyRope call (same kernels, bound, bitwise contracts).
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

// kLlama4's (row, col) of the CLS token (see above).
constexpr int64_t kVisionClsPosition = -1;

struct VisionRopeParams {
  VisionRopeKind kind = VisionRopeKind::kQwenVL;
  // Qwen-VL towers: 10000 (fixed in HF); Pixtral, Llama 4: vision_config.rope_theta
  double theta = 10000.0;
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
// multiples of merge); kPixtral row-major (t = 1, merge = 1); kLlama4 row-major followed by the
// CLS token (-1, -1) (t = 1, merge = 1; HF's img_idx: arange(idx * idx) then the CLS slot, with
// h = w = image_size / patch_size). Writes t * h * w pairs [patches, 2] (kLlama4: h * w + 1) to
// *rows_cols; on failure *rows_cols is unchanged.
POSENC_API Status VisionGridPositions(VisionRopeKind kind, int64_t t, int64_t h, int64_t w,
                                      int64_t spatial_merge_size, std::vector<int64_t>* rows_cols);

// Qwen2.5-VL's window order (HF Qwen2_5_VisionTransformerPretrainedModel.get_window_index and
// forward). The tower reorders its patch embeddings, and with them rot_pos_emb, by window_index
// in units of merge x merge patches before the blocks, and restores the order after the merger
// (argsort(window_index)). A runtime that applies RoPE in that order needs the positions in that
// order, the permutation itself for its hidden states, and the window boundaries for its
// windowed-attention layers: all three come from one call so that they cannot disagree.
struct VisionWindowOrder {
  // (row, col) of each patch in window order [t * h * w, 2]: for kQwenVL.
  std::vector<int64_t> rows_cols;
  // HF window_index [t * h * w / merge^2]: slot j of the windowed sequence holds merged unit
  // window_index[j] of rot_pos_emb's (VisionGridPositions(kQwenVL)) order.
  std::vector<int64_t> window_index;
  // HF cu_window_seqlens after torch.unique_consecutive, in patches: starts at 0, strictly
  // increasing, ends at t * h * w; window i is patches [cu[i], cu[i + 1]) of the windowed order.
  std::vector<int64_t> cu_window_seqlens;
};
// One image or video of grid (t, h, w) patches (h, w multiples of spatial_merge_size). Windows
// are vit_merger_window_size = window_size / spatial_merge_size / patch_size merged units on a
// side (floor division as HF; must be >= 1); Qwen2.5-VL: window_size 112, patch_size 14,
// spatial_merge_size 2 (4 x 4 units = 8 x 8 patches). Several grids (HF's grid_thw rows): call
// once per grid and concatenate, adding the earlier grids' unit count to window_index and their
// patch count to cu_window_seqlens (dropping each later grid's leading 0), as HF's loop does.
// On failure *out is unchanged.
POSENC_API Status VisionWindowedGridPositions(int64_t t, int64_t h, int64_t w,
                                              int64_t spatial_merge_size, int64_t window_size,
                                              int64_t patch_size, VisionWindowOrder* out);

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
