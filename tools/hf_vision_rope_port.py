#!/usr/bin/python3
"""A float64 port of Hugging Face transformers' 2-D vision RoPE, for posenc's tests.

Ports, by hand and in double precision (Python floats; HF uses float32 torch tensors), these
transformers 5.24 functions:
  src/transformers/models/qwen2_5_vl/modeling_qwen2_5_vl.py
    Qwen2_5_VisionRotaryEmbedding.__init__ / forward  (inv_freq over dim = head_dim // 2)
    Qwen2_5_VisionTransformerPretrainedModel.rot_pos_emb (h/w ids per patch in spatial-merge
      order: blocks of spatial_merge_size x spatial_merge_size patches, row-major inside a block,
      blocks row-major; repeated for each of the t frames)
    Qwen2_5_VLVisionAttention.forward: emb = cat(rotary_pos_emb, rotary_pos_emb); cos, sin
    apply_rotary_pos_emb_vision (rotate_half pairs)       -- Qwen2-VL and Qwen3-VL share these
  src/transformers/models/pixtral/modeling_pixtral.py
    PixtralRotaryEmbedding.__init__ / forward (frequency grid: h on even, w on odd frequency
      indices; inv_freq = cat(grid, grid); rows indexed by position_ids)
    position_ids_in_meshgrid (id = h * max_width + w, row-major patches)
    apply_rotary_pos_emb (rotate_half pairs)
The window reordering of Qwen2.5-VL's vision tower (get_window_index) is not ported: posenc takes
(row, col) per patch in whatever order the caller's hidden states are.

It needs only the Python standard library and never calls posenc. Its output is posenc's test
data (tests/data/hf_vision_rope_port.json, read by tests/vision_rope_test.cc):
  python3 tools/hf_vision_rope_port.py > tests/data/hf_vision_rope_port.json
"""
import json
import math

VERSION = "transformers 5.24 (ported by hand, float64)"


def qwen_vision_inv_freq(head_dim, theta):
    dim = head_dim // 2  # Qwen2_5_VisionRotaryEmbedding(head_dim // 2)
    return [1.0 / (theta ** (j / dim)) for j in range(0, dim, 2)]


def qwen_rot_pos_ids(t, h, w, merge):
    """(h, w) id of each patch in the order rot_pos_emb produces them."""
    ids = []
    for bh in range(h // merge):
        for bw in range(w // merge):
            for ih in range(merge):
                for iw in range(merge):
                    ids.append((bh * merge + ih, bw * merge + iw))
    return ids * t


def qwen_cos_sin(ids, head_dim, theta):
    inv = qwen_vision_inv_freq(head_dim, theta)
    cos, sin = [], []
    for (r, c) in ids:
        freqs = [r * f for f in inv] + [c * f for f in inv]  # rotary_pos_emb_full[pos_ids].flatten(1)
        emb = freqs + freqs                                    # cat(rotary_pos_emb, rotary_pos_emb)
        cos.append([math.cos(a) for a in emb])
        sin.append([math.sin(a) for a in emb])
    return cos, sin


def pixtral_cos_sin(ids, head_dim, theta, max_side):
    freqs = [1.0 / (theta ** (j / head_dim)) for j in range(0, head_dim, 2)]
    even, odd = freqs[0::2], freqs[1::2]
    cos, sin = [], []
    for (r, c) in ids:
        pid = r * max_side + c                       # position_ids_in_meshgrid
        row, col = divmod(pid, max_side)             # inv_freq[pid]: the grid cell (row, col)
        grid = [row * f for f in even] + [col * f for f in odd]
        emb = grid + grid                            # cat((inv_freq, inv_freq), dim=-1)
        cos.append([math.cos(a) for a in emb])
        sin.append([math.sin(a) for a in emb])
    return cos, sin


def main():
    out = {"version": VERSION, "cases": []}
    # Qwen2.5-VL-7B vision tower: hidden 1280, 16 heads -> head_dim 80; spatial_merge_size 2.
    for (t, h, w) in [(1, 4, 6), (2, 2, 4)]:
        ids = qwen_rot_pos_ids(t, h, w, 2)
        cos, sin = qwen_cos_sin(ids, 80, 10000.0)
        out["cases"].append({"model": "qwen2_5_vl_vision", "function": "Qwen2_5_VisionRotaryEmbedding",
                             "head_dim": 80, "theta": 10000.0, "grid_thw": [t, h, w],
                             "spatial_merge_size": 2, "rows_cols": ids, "cos": cos, "sin": sin})
    # Pixtral-12B vision: head_dim 64, rope_theta 10000, image_size 1024, patch_size 16 -> 64.
    ids = [(r, c) for r in range(3) for c in range(5)] + [(63, 0), (0, 63), (40, 17)]
    cos, sin = pixtral_cos_sin(ids, 64, 10000.0, 64)
    out["cases"].append({"model": "pixtral", "function": "PixtralRotaryEmbedding", "head_dim": 64,
                         "theta": 10000.0, "max_patches_per_side": 64, "rows_cols": ids,
                         "cos": cos, "sin": sin})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
