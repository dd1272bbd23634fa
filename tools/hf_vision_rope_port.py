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
    Qwen2_5_VisionTransformerPretrainedModel.get_window_index (window_index, cu_window_seqlens)
      and forward (rotary_pos_emb reordered by window_index in units of spatial_merge_unit
      patches; cu_window_seqlens through torch.unique_consecutive)
  src/transformers/models/llama4/modeling_llama4.py
    Llama4VisionRotaryEmbedding.__init__ (img_idx = arange(idx * idx) + the CLS slot with id
      ID_CLS_TOKEN = -2; x = img_idx % idx, y = img_idx // idx; rope_freq over freq_dim =
      head_dim // 2; (x + 1) and (y + 1) times rope_freq, repeat_interleave(2), cat, [..., ::2];
      masked_fill(img_idx < 0, 0); freqs_ci = cos + i sin)
    vision_apply_rotary_emb (view_as_complex(reshape(..., -1, 2)): interleaved pairs, complex
      multiplication by freqs_ci)
Python's % and // on negative ints floor like torch.remainder and torch.floor_divide, so the CLS
slot's (x, y) are HF's (they are masked to angle 0 either way).

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


def qwen_window_index(t, h, w, merge, window_size, patch_size):
    """get_window_index for one grid_thw row: (window_index, cu_window_seqlens), the latter
    already through torch.unique_consecutive as forward applies it."""
    unit = merge * merge                                   # spatial_merge_unit
    win = window_size // merge // patch_size               # vit_merger_window_size
    gh, gw = h // merge, w // merge                        # llm_grid_h, llm_grid_w
    index = [[[(f * gh + y) * gw + x for x in range(gw)] for y in range(gh)] for f in range(t)]
    pad_h = win - gh % win
    pad_w = win - gw % win
    nwh = (gh + pad_h) // win
    nww = (gw + pad_w) // win
    padded = [[[index[f][y][x] if (y < gh and x < gw) else -100  # F.pad(..., -100)
                for x in range(gw + pad_w)] for y in range(gh + pad_h)] for f in range(t)]
    window_index, seqlens = [], []
    for f in range(t):                                     # permute(0, 1, 3, 2, 4): frame,
        for wy in range(nwh):                              # window row, window col, then the
            for wx in range(nww):                          # window's rows and columns
                cell = [padded[f][wy * win + iy][wx * win + ix]
                        for iy in range(win) for ix in range(win)]
                seqlens.append(sum(1 for v in cell if v != -100))
                window_index.extend(v for v in cell if v != -100)
    cu = [0]
    for n in seqlens:                                      # seqlens.cumsum(0) * unit
        cu.append(cu[-1] + n * unit)
    unique = [cu[0]]
    for v in cu[1:]:                                       # torch.unique_consecutive
        if v != unique[-1]:
            unique.append(v)
    return window_index, unique


def qwen_windowed_ids(t, h, w, merge, window_size, patch_size):
    """rot_pos_emb's (h, w) ids reordered as forward reorders rotary_pos_emb."""
    ids = qwen_rot_pos_ids(t, h, w, merge)
    unit = merge * merge
    window_index, cu = qwen_window_index(t, h, w, merge, window_size, patch_size)
    units = [ids[u * unit:(u + 1) * unit] for u in range(len(ids) // unit)]  # reshape(-1, unit)
    return [p for u in window_index for p in units[u]], window_index, cu  # [window_index]


def llama4_freqs(image_size, patch_size, hidden_size, num_heads, theta):
    """Llama4VisionRotaryEmbedding.__init__: (img_idx, freqs [idx * idx + 1][head_dim // 2])."""
    idx = image_size // patch_size
    img_idx = list(range(idx * idx)) + [0]                 # cat([img_idx, img_idx[:1]])
    img_idx[-1] = -2                                       # ID_CLS_TOKEN
    freq_dim = hidden_size // num_heads // 2
    rope_freq = [1.0 / (theta ** (j / freq_dim)) for j in range(0, freq_dim, 2)][: freq_dim // 2]
    out = []
    for i in img_idx:
        fx, fy = i % idx, i // idx                         # frequencies_x, frequencies_y
        freqs_x = [v for f in rope_freq for v in ((fx + 1) * f, (fx + 1) * f)]  # repeat_interleave
        freqs_y = [v for f in rope_freq for v in ((fy + 1) * f, (fy + 1) * f)]
        freqs = (freqs_x + freqs_y)[::2]                   # cat(..., -1)[..., ::2]
        if i < 0:
            freqs = [0.0] * len(freqs)                     # masked_fill(img_idx < 0, 0)
        out.append(freqs)
    return img_idx, out


def llama4_apply(x, freqs):
    """vision_apply_rotary_emb for one token and head: x [head_dim], freqs [head_dim // 2]."""
    out = []
    for i, a in enumerate(freqs):
        z = complex(x[2 * i], x[2 * i + 1]) * complex(math.cos(a), math.sin(a))
        out.extend([z.real, z.imag])                       # view_as_real(...).flatten
    return out


def llama4_input(token, head_dim):
    """A deterministic head whose values f32 holds exactly (multiples of 1/16 in [-3.2, 3.2])."""
    return [(((token * 131 + k * 37) % 101) - 50) / 16.0 for k in range(head_dim)]


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
    # Qwen2.5-VL vision tower in window order (window_size 112, patch_size 14, merge 2 -> windows
    # of 4 x 4 merged units): a grid whose unit sides are multiples of 4 (HF pads a full empty
    # window row and column, dropped by unique_consecutive), one with partial windows, and a
    # smaller window (56: 2 x 2 units), the last with HF's cos/sin in window order.
    for (t, h, w, ws, with_cos) in [(2, 8, 16, 112, False), (1, 10, 18, 112, False),
                                    (1, 6, 10, 56, False), (1, 4, 6, 56, True)]:
        ids, window_index, cu = qwen_windowed_ids(t, h, w, 2, ws, 14)
        case = {"model": "qwen2_5_vl_vision_windowed",
                "function": "get_window_index + Qwen2_5_VisionRotaryEmbedding", "head_dim": 80,
                "theta": 10000.0, "grid_thw": [t, h, w], "spatial_merge_size": 2,
                "window_size": ws, "patch_size": 14, "rows_cols": ids,
                "window_index": window_index, "cu_window_seqlens": cu}
        if with_cos:
            case["cos"], case["sin"] = qwen_cos_sin(ids, 80, 10000.0)
        out["cases"].append(case)
    # Llama 4 vision (Llama-4-Scout/Maverick vision_config: image_size 336, patch_size 14,
    # hidden_size 1408, 16 heads -> head_dim 88, rope_theta 10000): every token of a 112-pixel
    # image (8 x 8 patches + CLS), and some tokens of the full 24 x 24 grid, those also with
    # vision_apply_rotary_emb of a fixed head.
    for (image_size, tokens) in [(112, None), (336, [0, 1, 23, 24, 25, 300, 551, 575, 576])]:
        img_idx, freqs = llama4_freqs(image_size, 14, 1408, 16, 10000.0)
        if tokens is None:
            tokens = list(range(len(img_idx)))
        sel = [freqs[i] for i in tokens]
        out["cases"].append({
            "model": "llama4_vision", "function": "Llama4VisionRotaryEmbedding",
            "image_size": image_size, "patch_size": 14, "hidden_size": 1408,
            "num_attention_heads": 16, "head_dim": 88, "theta": 10000.0,
            "tokens": tokens, "img_idx": [img_idx[i] for i in tokens],
            "cos": [[math.cos(a) for a in f] for f in sel],
            "sin": [[math.sin(a) for a in f] for f in sel]})
        if image_size == 336:  # vision_apply_rotary_emb itself on the selected tokens
            out["cases"][-1]["x"] = [llama4_input(i, 88) for i in tokens]
            out["cases"][-1]["out"] = [llama4_apply(llama4_input(i, 88), f)
                                       for i, f in zip(tokens, sel)]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
