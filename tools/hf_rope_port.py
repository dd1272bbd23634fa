#!/usr/bin/python3
"""A float64 port of Hugging Face transformers' RoPE parameter code, for posenc's tests.

Ports, line by line and in double precision (Python floats; HF uses torch tensors), these
transformers 5.24 functions (src/transformers/modeling_rope_utils.py unless noted):
  _compute_default_rope_parameters / each model's compute_default_rope_parameters,
  _compute_linear_scaling_rope_parameters, _compute_dynamic_ntk_parameters,
  _compute_yarn_parameters, _compute_longrope_parameters, _compute_llama3_parameters,
  _compute_proportional_rope_parameters,
  RotaryEmbeddingConfigMixin.convert_rope_params_to_dict / standardize_rope_params,
  PreTrainedConfig.get_text_config,
and the model-specific rules of the config and modeling files of the families posenc supports
(configuration_gemma3.py Gemma3TextConfig.convert_rope_params_to_dict, configuration_olmo3.py,
configuration_gemma4.py, configuration_gpt_neox.py, configuration_gptj.py + modeling_gptj,
ChatGLM's remote modeling_chatglm.RotaryEmbedding, configuration_llama4.py / configuration_smollm3.py
no_rope_layers, configuration_cohere2.py + Cohere2Attention, DeepseekV3Attention's softmax scale,
and each modeling file's rotate_half / interleaved pair layout).

It needs only the Python standard library (no torch, no numpy). Its outputs are posenc's test
data (tests/data/hf_rope_port.json, read by tests/hf_configs_test.cc); it never calls posenc.

Usage (from the repository root):
  python3 tools/hf_rope_port.py tools/configs > tests/data/hf_rope_port.json
  python3 tools/hf_rope_port.py --check ../shared/hf-configs   # the port against HF's own outputs
"""
import json
import math
import pathlib
import sys

VERSION = "transformers 5.24 (ported by hand, float64)"

# ---------------------------------------------------------------------------------------------
# Family facts: (default rope_theta, default partial_rotary_factor, pair layout) per model_type,
# from each configuration_*.py / modeling_*.py. "interleaved" = (x[2i], x[2i+1]) pairs.
FAMILY = {
    "llama": (10000.0, None, "half"),
    "mistral": (10000.0, None, "half"),
    "mixtral": (1000000.0, None, "half"),
    "qwen2": (10000.0, None, "half"),
    "qwen3": (10000.0, None, "half"),
    "qwen2_vl_text": (1000000.0, None, "half"),
    "qwen2_5_vl_text": (1000000.0, None, "half"),
    "qwen3_vl_text": (500000.0, None, "half"),
    "gemma": (10000.0, None, "half"),
    "gemma2": (10000.0, None, "half"),
    "gemma3_text": (1000000.0, None, "half"),
    "gemma4_text": (1000000.0, None, "half"),
    "phi": (10000.0, 0.5, "half"),
    "phi3": (10000.0, None, "half"),
    "phimoe": (1000000.0, None, "half"),
    "gpt_neox": (10000.0, 0.25, "half"),
    "gptj": (10000.0, None, "interleaved"),
    "chatglm": (10000.0, None, "interleaved"),
    "glm": (10000.0, 0.5, "interleaved"),
    "glm4": (10000.0, 0.5, "interleaved"),
    "cohere": (10000.0, None, "interleaved"),
    "cohere2": (10000.0, None, "interleaved"),
    "deepseek_v2": (10000.0, None, "interleaved"),
    "deepseek_v3": (10000.0, None, "interleaved"),
    "kimi_k2": (10000.0, None, "interleaved"),
    "llama4_text": (500000.0, None, "interleaved"),
    "smollm3": (2000000.0, None, "half"),
    "olmo3": (500000.0, None, "half"),
    "gpt_oss": (150000.0, None, "half"),
}
TEXT_OF = {"gemma3": "gemma3_text", "gemma4": "gemma4_text", "llama4": "llama4_text",
           "qwen2_vl": "qwen2_vl_text", "qwen2_5_vl": "qwen2_5_vl_text", "qwen3_vl": "qwen3_vl_text",
           "mistral3": "mistral"}
# __init__ defaults of the config classes for keys configs omit (only what RoPE reads).
CLASS_DEFAULTS = {
    "gemma3_text": {"head_dim": 256, "num_attention_heads": 8, "num_key_value_heads": 4,
                    "num_hidden_layers": 26, "hidden_size": 2304, "max_position_embeddings": 131072},
    "gemma4_text": {"head_dim": 256, "global_head_dim": 512, "num_attention_heads": 8,
                    "num_key_value_heads": 4, "num_hidden_layers": 30, "hidden_size": 2304,
                    "max_position_embeddings": 131072},
    "llama4_text": {"head_dim": 128, "num_attention_heads": 40, "num_key_value_heads": 8,
                    "num_hidden_layers": 48, "hidden_size": 5120, "max_position_embeddings": 131072},
    "smollm3": {"num_attention_heads": 16, "num_key_value_heads": 4, "num_hidden_layers": 36,
                "hidden_size": 2048, "max_position_embeddings": 32768},
    "gptj": {"rotary_dim": 64, "n_embd": 4096, "n_head": 16, "n_layer": 28, "n_positions": 2048},
    "chatglm": {"kv_channels": 128, "rope_ratio": 1, "hidden_size": 4096, "num_attention_heads": 32,
                "num_layers": 28, "seq_length": 2048},
    "deepseek_v2": {"qk_rope_head_dim": 64},
    "deepseek_v3": {"qk_rope_head_dim": 64, "num_attention_heads": 128, "num_key_value_heads": 128,
                    "num_hidden_layers": 61, "max_position_embeddings": 4096, "rope_interleave": True},
    "kimi_k2": {"qk_rope_head_dim": 64, "rope_interleave": True},
    "phi3": {"original_max_position_embeddings": 4096},
    "phimoe": {"original_max_position_embeddings": 4096},
}


class Cfg:
    """The text config as HF's config class would hold it (attributes with class defaults)."""

    def __init__(self, d, model_type):
        self.d = dict(CLASS_DEFAULTS.get(model_type, {}))
        self.d.update({k: v for k, v in d.items() if v is not None})
        self.model_type = model_type

    def get(self, key, default=None):
        return self.d.get(key, default)

    def has(self, key):
        return key in self.d


def text_config(doc):
    t = doc.get("text_config") or doc
    mt = t.get("model_type") or doc.get("model_type") or ""
    return t, TEXT_OF.get(mt, mt)


# ---------------------------------------------------------------------------------------------
# Layers: configuration_*.py __post_init__ rules.
def layer_plan(cfg):
    """(per-layer type names, per-layer has-RoPE)."""
    mt = cfg.model_type
    n = cfg.get("num_hidden_layers", cfg.get("n_layer", cfg.get("num_layers")))
    types = cfg.get("layer_types")
    if types is not None:
        n = len(types)
    if n is None:
        return None, None
    rope = [True] * n
    if mt in ("llama4_text", "smollm3"):
        flags = cfg.get("no_rope_layers")
        if mt == "llama4_text" and not flags:  # `no_rope_layers if no_rope_layers else default`
            flags = None
        if flags is None:
            k = cfg.get("no_rope_layer_interval", 4)
            flags = [int((i + 1) % k != 0) for i in range(n)]
        rope = [bool(flags[i]) for i in range(n)]
    if types is None:
        if mt == "gemma3_text":
            k = cfg.get("sliding_window_pattern", cfg.get("_sliding_window_pattern", 6))
            types = ["sliding_attention" if (i + 1) % k else "full_attention" for i in range(n)]
        elif mt == "gemma4_text":
            types = ["sliding_attention" if (i + 1) % 6 else "full_attention" for i in range(n)]
            types[-1] = "full_attention"
        elif mt == "cohere2":
            k = cfg.get("sliding_window_pattern", 4)
            types = ["sliding_attention" if (i + 1) % k else "full_attention" for i in range(n)]
        elif mt == "olmo3":
            types = ["sliding_attention" if (i + 1) % 4 != 0 else "full_attention" for i in range(n)]
        elif mt in ("gemma2", "gpt_oss"):
            types = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n)]
        elif mt == "llama4_text":
            types = ["chunked_attention" if r else "full_attention" for r in rope]
        else:
            types = ["full_attention"] * n
    if mt == "cohere2":  # Cohere2Attention: RoPE only when sliding_window is set
        rope = [t == "sliding_attention" for t in types]
    return types, rope


# ---------------------------------------------------------------------------------------------
# rope parameters per layer type: convert_rope_params_to_dict + standardize_rope_params.
def rope_parameters(cfg, names):
    """{layer type: standardised rope dict} for every RoPE layer type name."""
    mt = cfg.model_type
    scaling = cfg.get("rope_scaling")
    params = scaling or cfg.get("rope_parameters")  # `rope_scaling or self.rope_parameters`
    top_theta = cfg.get("rope_theta", cfg.get("rotary_emb_base"))
    default_theta = FAMILY.get(mt, (10000.0, None, "half"))[0]
    out = {}
    if mt in ("gemma3_text", "olmo3", "gemma4_text"):
        if params and all(k in ("sliding_attention", "full_attention") for k in params):
            per = {k: dict(v) for k, v in params.items()}
        elif mt == "gemma4_text":
            per = {"sliding_attention": {"rope_type": "default"},
                   "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25}}
        else:
            per = {"sliding_attention": {"rope_type": "default"}, "full_attention": {"rope_type": "default"}}
            if params:
                per["full_attention"].update(params)
        if mt == "gemma3_text":
            per["full_attention"].setdefault("rope_theta", top_theta if top_theta is not None else 1e6)
            per["sliding_attention"].setdefault("rope_theta", cfg.get("rope_local_base_freq", 1e4))
        elif mt == "olmo3":
            popped = top_theta if top_theta is not None else default_theta
            per["full_attention"].setdefault("rope_theta", popped)
            per["sliding_attention"].setdefault("rope_theta", default_theta)  # rope_theta was popped
        else:
            per["full_attention"].setdefault("rope_theta", 1e6)
            per["sliding_attention"].setdefault("rope_theta", 1e4)
        for k in per:
            per[k].setdefault("rope_type", per[k].get("type", "default"))
            if per[k]["rope_type"] in ("llama3", "yarn", "longrope"):
                per[k].setdefault("original_max_position_embeddings", cfg.get("max_position_embeddings"))
        return {n: per[n] for n in names}
    if params and set(params) <= set(names) and all(isinstance(v, dict) for v in params.values()):
        for n in names:  # Case 2: one dict per layer type
            d = dict(params[n])
            d.setdefault("rope_type", d.get("type", "default"))
            d.setdefault("rope_theta", top_theta if top_theta is not None else default_theta)
            if d["rope_type"] in ("llama3", "yarn", "longrope"):
                d.setdefault("original_max_position_embeddings", cfg.get("max_position_embeddings"))
            out[n] = d
        return out
    d = dict(params or {})  # Case 1: one dict for all
    d.setdefault("rope_type", d.get("type", "default"))
    if mt == "gptj":
        d["rope_theta"] = 10000.0  # modeling_gptj.create_sinusoidal_positions
    elif mt == "chatglm":
        d["rope_theta"] = 10000.0 * cfg.get("rope_ratio", 1)
    else:
        d.setdefault("rope_theta", top_theta if top_theta is not None else default_theta)
    if d["rope_type"] in ("llama3", "yarn", "longrope"):
        if cfg.has("original_max_position_embeddings"):
            d["original_max_position_embeddings"] = cfg.get("original_max_position_embeddings")
        else:
            d.setdefault("original_max_position_embeddings", cfg.get("max_position_embeddings"))
    return {n: d for n in names}


def head_dims(cfg, layer_type, d):
    """(head_dim, rotary_dim) the modeling code uses for this layer type."""
    mt = cfg.model_type
    if mt == "gptj":
        head = cfg.get("n_embd") // cfg.get("n_head")
        return head, cfg.get("rotary_dim") or head
    if mt == "chatglm":
        head = cfg.get("kv_channels") or cfg.get("hidden_size") // cfg.get("num_attention_heads")
        return head, head // 2
    if mt in ("deepseek_v2", "deepseek_v3", "kimi_k2"):
        head = cfg.get("qk_rope_head_dim")
    elif mt == "gemma4_text" and layer_type == "full_attention":
        head = cfg.get("global_head_dim")
    else:
        head = cfg.get("head_dim") or cfg.get("hidden_size") // cfg.get("num_attention_heads")
    partial = d.get("partial_rotary_factor")
    if partial is None:
        partial = cfg.get("partial_rotary_factor", cfg.get("rotary_pct"))
    if partial is None:
        partial = FAMILY.get(mt, (0, None, 0))[1] or 1.0
    d["partial_rotary_factor"] = partial
    if d["rope_type"] == "proportional":
        return head, head
    return head, int(head * partial)


# ---------------------------------------------------------------------------------------------
# ROPE_INIT_FUNCTIONS in float64.
def arange_over(dim, base):
    return [base ** (i / dim) for i in range(0, dim, 2)]


def rope_default(d, dim, cfg, seq_len):
    return [1.0 / p for p in arange_over(dim, d["rope_theta"])], 1.0


def rope_linear(d, dim, cfg, seq_len):
    inv, a = rope_default(d, dim, cfg, seq_len)
    return [v / d["factor"] for v in inv], a


def rope_dynamic(d, dim, cfg, seq_len):
    m = cfg.get("max_position_embeddings")
    seq_len = m if seq_len is None else max(seq_len, m)
    factor = d["factor"]
    base = d["rope_theta"] * ((factor * seq_len / m) - (factor - 1)) ** (dim / (dim - 2))
    return [1.0 / p for p in arange_over(dim, base)], 1.0


def rope_yarn(d, dim, cfg, seq_len):
    base = d["rope_theta"]
    factor = d.get("factor")
    orig = d["original_max_position_embeddings"]
    if factor is None:
        factor = cfg.get("max_position_embeddings") / orig

    def get_mscale(scale, mscale=1):
        if scale <= 1:
            return 1.0
        return 0.1 * mscale * math.log(scale) + 1.0

    attention_factor = d.get("attention_factor")
    mscale, mscale_all_dim = d.get("mscale"), d.get("mscale_all_dim")
    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))
        else:
            attention_factor = get_mscale(factor)
    beta_fast = d.get("beta_fast") or 32
    beta_slow = d.get("beta_slow") or 1

    def find_correction_dim(num_rotations):
        return (dim * math.log(orig / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = find_correction_dim(beta_fast), find_correction_dim(beta_slow)
    if d.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    pos = arange_over(dim, base)
    out = []
    for i, p in enumerate(pos):
        ramp = min(max((i - low) / (high - low), 0.0), 1.0)
        extra = 1 - ramp
        out.append((1.0 / (factor * p)) * (1 - extra) + (1.0 / p) * extra)
    return out, attention_factor


def rope_longrope(d, dim, cfg, seq_len):
    base = d["rope_theta"]
    orig = d["original_max_position_embeddings"]
    factor = d.get("factor")
    if factor is None:
        factor = cfg.get("max_position_embeddings") / orig
    attention_factor = d.get("attention_factor")
    if attention_factor is None:
        attention_factor = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(orig))
    ext = d["long_factor"] if seq_len and seq_len > orig else d["short_factor"]
    return [1.0 / (e * p) for e, p in zip(ext, arange_over(dim, base))], attention_factor


def rope_llama3(d, dim, cfg, seq_len):
    inv, a = rope_default(d, dim, cfg, seq_len)
    factor, low, high = d["factor"], d["low_freq_factor"], d["high_freq_factor"]
    old = d["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / low, old / high
    out = []
    for v in inv:
        wavelen = 2 * math.pi / v
        llama = v / factor if wavelen > low_wavelen else v
        medium = not (wavelen < high_wavelen) and not (wavelen > low_wavelen)
        if medium:  # torch.where evaluates both sides; only the selected one matters here
            smooth = (old / wavelen - low) / (high - low)
            llama = (1 - smooth) * llama / factor + smooth * llama
        out.append(llama)
    return out, a


def rope_proportional(d, head_dim, cfg, seq_len):
    base = d["rope_theta"]
    factor = d.get("factor", 1.0)
    rope_angles = int(d.get("partial_rotary_factor", 1.0) * head_dim // 2)
    rotated = [1.0 / (base ** (i / head_dim)) for i in range(0, 2 * rope_angles, 2)]
    inv = rotated + [0.0] * (head_dim // 2 - rope_angles)
    return [v / factor for v in inv], 1.0


ROPE = {"default": rope_default, "mrope": rope_default, "linear": rope_linear,
        "dynamic": rope_dynamic, "yarn": rope_yarn, "longrope": rope_longrope, "su": rope_longrope,
        "llama3": rope_llama3, "proportional": rope_proportional}


def pairs_of(cfg):
    mt = cfg.model_type
    if mt in ("deepseek_v3", "kimi_k2"):
        return "interleaved" if cfg.get("rope_interleave", True) else "half"
    return FAMILY.get(mt, (0, None, "half"))[2]


def describe(doc, at_lengths=None):
    """The model's RoPE as HF computes it: layers, layer types, frequencies per length (by
    default 1, 4096, M0, M0 + 1, 2 M0, M, M + 1)."""
    t, mt = text_config(doc)
    cfg = Cfg(t, mt)
    types, rope = layer_plan(cfg)
    if types is None:
        names = ["full_attention"]
    else:
        names = []
        for ty, r in zip(types, rope):
            if r and ty not in names:
                names.append(ty)
    params = rope_parameters(cfg, names)
    out = {"model_type": mt, "layer_types": [], "softmax_scale_factor": 1.0,
           "layers": [] if types is None else [names.index(ty) if r else -1 for ty, r in zip(types, rope)]}
    for n in names:
        d = dict(params[n])
        head, rot = head_dims(cfg, n, d)
        m = cfg.get("max_position_embeddings", cfg.get("n_positions", cfg.get("seq_length")))
        cfg.d["max_position_embeddings"] = m
        orig = d.get("original_max_position_embeddings") or m
        lengths = at_lengths
        if lengths is None:  # the switch lengths where the frequencies depend on L
            top = max(orig or 1, m or 1)
            lengths = sorted({1, top + 1})
            if d["rope_type"] in ("dynamic", "longrope", "su"):
                lengths = sorted({1, 4096, orig, orig + 1, 2 * orig} | ({m, m + 1, 2 * m} if m else set()))
        entry = {"name": n, "rope_type": {"mrope": "default", "su": "longrope"}.get(d["rope_type"], d["rope_type"]),
                 "pairs": pairs_of(cfg), "head_dim": head, "rotary_dim": rot,
                 "mrope_section": d.get("mrope_section", []), "mrope_interleaved": bool(d.get("mrope_interleaved", False)),
                 "lengths": {}}
        fn = ROPE[d["rope_type"]]
        for L in lengths:
            inv, a = fn(d, head if d["rope_type"] == "proportional" else rot, cfg, L)
            entry["lengths"][str(L)] = {"inv_freq": inv, "attention_factor": a}
        out["layer_types"].append(entry)
    if mt in ("deepseek_v2", "deepseek_v3", "kimi_k2"):  # DeepseekV3Attention.__init__
        d = params[names[0]]
        if d.get("rope_type", "default") != "default" and d.get("mscale_all_dim", 0):
            f = d["factor"]
            ms = 0.1 * d["mscale_all_dim"] * math.log(f) + 1.0 if f > 1 else 1.0
            out["softmax_scale_factor"] = ms * ms
    return out


def check(folder):
    """The port against HF's own float64 outputs (.ref.json): max relative inv_freq deviation."""
    worst = 0.0
    bad = 0
    for ref_path in sorted(pathlib.Path(folder).glob("*.ref.json")):
        ref = json.loads(ref_path.read_text())
        if "lengths" not in ref:
            continue
        cfg_path = ref_path.with_name(ref_path.name.replace(".ref.json", ".json"))
        got = describe(json.loads(cfg_path.read_text()), [int(L) for L in ref["lengths"]])
        by_name = {e["name"]: e for e in got["layer_types"]}
        for L, v in ref["lengths"].items():
            for lt, r in v["f64"].items():
                e = by_name[lt] if lt in by_name else got["layer_types"][0]
                mine = e["lengths"][L]
                for a, b in zip(mine["inv_freq"], r["inv_freq"]):
                    rel = abs(a - b) / b if b else abs(a - b)
                    worst = max(worst, rel)
                    bad += rel > 1e-12
                bad += len(mine["inv_freq"]) != len(r["inv_freq"])
                bad += mine["attention_factor"] != r["attention_factor"]
        print(f"{ref_path.name}: checked")
    print(f"port vs HF float64: worst relative inv_freq deviation {worst:.3g}, {bad} mismatches")
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "--check":
        return check(argv[2])
    folder = pathlib.Path(argv[1] if len(argv) > 1 else "tools/configs")
    result = {"generator": "tools/hf_rope_port.py " + str(folder), "follows": VERSION, "configs": {}}
    for path in sorted(folder.glob("*.json")):
        result["configs"][path.name] = describe(json.loads(path.read_text()))
    json.dump(result, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
