"""posenc: SIMD kernels for positional encodings on the CPU (RoPE, sinusoidal), from Python.

    import numpy as np, posenc
    q = np.random.randn(1, 16, 32, 128).astype(np.float32)   # [batch, seq, heads, head_dim]
    k = np.random.randn(1, 16, 8, 128).astype(np.float32)
    q_rot, k_rot = posenc.apply_rope(q, k, base=500000.0)     # new arrays
    posenc.apply_rope(q, k, out_q=q, out_k=k)                 # in place
    step = posenc.RopeCall(q, k, out_q=q, out_k=k)            # checked once; per decode step:
    step(offset=16)                                           # the positions only

Arrays are numpy arrays of float32, float16 or ml_dtypes.bfloat16 in any strides (views are
used as they are, never copied: q and k slices of one fused QKV array are rotated in place).
Errors raise ValueError (IndexError for a position outside a table or cache) with the library's
message, and leave every output untouched. Kernel calls release the GIL.
"""
from __future__ import annotations

import numpy as np

from posenc import _args
from posenc import _posenc
from posenc._posenc import RopeConfig, info, load_hf_config, parse_hf_config

__all__ = [
    "apply_rope", "RopeCall", "RopeTable", "RopeConfig", "RopeFrequencies", "load_hf_config",
    "parse_hf_config", "frequencies", "sinusoidal", "add_sinusoidal", "info", "set_max_target",
    "reference", "__version__",
]

__version__ = info()["version"]


def apply_rope(q, k=None, *, positions=None, offset=0, base=10000.0, inv_freq=None, config=None,
               layer_type=None, pairs=None, rotary_dim=None, inverse=False,
               attention_factor=1.0, cos=None, sin=None, out_q=None, out_k=None,
               arithmetic="f64", threads=0, layout="bshd", num_heads=None, num_kv_heads=None,
               table=None):
    """Applies RoPE to q and/or k; returns (q_out, k_out), the arrays written (None where absent).

    q, k        [batch, seq, heads, head_dim] (layout="bshd"), [batch, heads, seq, head_dim]
                (layout="bhsd"), or [batch, seq, heads * head_dim] with num_heads (and
                num_kv_heads for k, default num_heads). q and k may have different head counts.
    positions   int32/int64 ids [batch, seq] ([seq] or [1, seq] is shared by every batch); else
                positions are offset + s, offset an int or per-batch ints [batch].
    base        rope_theta; inv_freq: rotary_dim / 2 explicit frequencies (float64) instead.
    config      a RopeConfig (load_hf_config): frequencies, attention factor, rotary_dim and pair
                layout of the model at sequence length max(position) + 1; layer_type one of
                config.layer_types (None when every layer type has the same RoPE).
    pairs       "half" (x[i], x[i + r/2]: HF rotate_half, GPT-NeoX) or "interleaved"
                (x[2i], x[2i+1]: GPT-J, Meta); None (the default): the config's layout with a
                config (config.pairs), else "half". An explicit value overrides the config.
    rotary_dim  rotated channels (even; None = head_dim); the rest pass through.
    inverse     rotate by -theta (undoes RoPE).
    attention_factor  multiplies cos and sin (YaRN mscale, LongRoPE).
    cos, sin    caller caches used as given (float32, float16 or bfloat16): [rows, r/2] read at
                each token's position, or [batch, seq, r/2] one row per token (ONNX
                RotaryEmbedding without position_ids).
    table       a RopeTable (positions must lie in [0, table.max_positions)).
    out_q, out_k  where to write (q / k themselves for in place); default: new arrays like q / k.
    arithmetic  "f64" (rotate in double, < 2 ulp), "f32" (< 3 ulp, faster) or "fma_chain"
                (< 2 ulp with float32 fused multiply-adds on hi / lo rows: near "f32"'s speed on
                CPUs with FMA; a table must be RopeTable(..., arithmetic="fma_chain")); half
                types: f32.
    threads     0: TBB's default arena, 1: serial, n: at most n threads. Results are bitwise the
                same for every setting and SIMD target.
    """
    return _args.rope_call(q, k, positions, offset, base, inv_freq, config, layer_type, pairs,
                           rotary_dim, inverse, attention_factor, cos, sin, table, out_q, out_k,
                           arithmetic, threads, layout, num_heads, num_kv_heads, "kernel")


class RopeCall:
    """apply_rope over the same arrays at new positions, its arguments checked once: a decode loop
    calls it once per step, and each step costs about the kernel's time plus one C++ call.

        call = posenc.RopeCall(q, k, base=500000.0, out_q=q, out_k=k)   # in place
        for step in range(n):
            ...                                  # write the step's q and k into q and k
            call(offset=start + step)            # or call(positions=ids)

    The arguments are apply_rope's, without positions / offset (given to each call) and without
    config: a config's frequencies may depend on the sequence length, so take them once with
    posenc.frequencies(config, seq_len) and pass inv_freq=f.inv_freq, attention_factor=
    f.attention_factor, pairs=f.pairs, rotary_dim=f.rotary_dim. Every check apply_rope makes is
    made here and raises here; a call checks only its positions (ValueError, IndexError outside a
    table or cache) and on error writes nothing.

    The RopeCall holds q, k, the outputs and caches for its life (numpy then refuses to resize
    them); their contents may change between calls. Outputs not given are allocated here once,
    and every call writes and returns those same arrays (out_q, out_k). Calls release the GIL;
    two threads calling one RopeCall take turns.
    """

    def __init__(self, q, k=None, *, base=10000.0, inv_freq=None, pairs=None, rotary_dim=None,
                 inverse=False, attention_factor=1.0, cos=None, sin=None, table=None, out_q=None,
                 out_k=None, arithmetic="f64", threads=0, layout="bshd", num_heads=None,
                 num_kv_heads=None):
        (qv, kv, oqv, okv, dt, pairs_c, rotary, inverse, base, inv, attention_factor, _, _, _,
         cos_r, sin_r, cache_dt, per_token, tab, arith, threads, oq, ok_, batch,
         seq) = _args.rope_arguments(q, k, None, 0, base, inv_freq, None, None, pairs,
                                     rotary_dim, inverse, attention_factor, cos, sin, table,
                                     out_q, out_k, arithmetic, threads, layout, num_heads,
                                     num_kv_heads, "kernel")
        self._call = _posenc.PreparedRope(qv, kv, oqv, okv, dt, pairs_c, rotary, inverse, base,
                                          inv, attention_factor, cos_r, sin_r, cache_dt,
                                          per_token, tab, arith, threads)
        self._batch, self._seq, self._per_token = batch, seq, per_token
        self.out_q, self.out_k = oq, ok_

    def __call__(self, positions=None, offset=0):
        """Rotates at positions (int32/int64 [batch, seq], [1, seq] or [seq]) or offset + s
        (offset an int or per-batch ints [batch]); returns (out_q, out_k)."""
        if positions is None and type(offset) is int:
            self._call.apply(None, None, offset)
        else:
            if self._per_token and positions is not None:
                raise ValueError(_args.PER_TOKEN_POSITIONS)
            pos = _args.positions_args(positions, offset, self._batch, self._seq)
            self._call.apply(pos["ids"], pos["batch_offsets"], pos["offset"])
        return self.out_q, self.out_k


def _read_only(a):
    a.flags.writeable = False
    return a


class RopeTable:
    """Precomputed float32 cos/sin rows for positions [0, max_positions), immutable; built with
    the engine of the on-the-fly path, so apply_rope(..., table=t) gives the same bits.
    arithmetic="fma_chain" also stores the rows' lo parts (twice the memory), which calls with
    that arithmetic need; "f64" and "f32" (the default: "f64") store the float32 rows only."""

    def __init__(self, rotary_dim, max_positions, *, base=10000.0, inv_freq=None,
                 attention_factor=1.0, arithmetic="f64"):
        self._table = _posenc.create_table(int(rotary_dim), int(max_positions), float(base),
                                           _args.inv_freq_arg(inv_freq), float(attention_factor),
                                           _args.arithmetic_code(arithmetic))

    rotary_dim = property(lambda self: self._table.rotary_dim)
    max_positions = property(lambda self: self._table.max_positions)
    attention_factor = property(lambda self: self._table.attention_factor)
    inv_freq = property(lambda self: np.array(self._table.inv_freq, dtype=np.float64),
                        doc="the rotary_dim / 2 frequencies (float64)")
    @property
    def cos(self):
        """[max_positions, rotary_dim / 2] float32 (attention factor included), read only."""
        return _read_only(self._table.cos)

    @property
    def sin(self):
        """[max_positions, rotary_dim / 2] float32 (attention factor included), read only."""
        return _read_only(self._table.sin)

    def __repr__(self):
        return (f"posenc.RopeTable(rotary_dim={self.rotary_dim}, "
                f"max_positions={self.max_positions}, attention_factor={self.attention_factor})")


class RopeFrequencies:
    """What a config yields at one sequence length (posenc.frequencies)."""

    def __init__(self, rope_type, head_dim, rotary_dim, inv_freq, attention_factor, pairs):
        self.rope_type = rope_type
        self.pairs = pairs  # the layer type's pair layout: "half" or "interleaved"
        self.head_dim = head_dim
        self.rotary_dim = rotary_dim
        self.inv_freq = np.array(inv_freq, dtype=np.float64)
        self.attention_factor = attention_factor

    def __repr__(self):
        return (f"posenc.RopeFrequencies(rope_type={self.rope_type!r}, head_dim={self.head_dim}, "
                f"rotary_dim={self.rotary_dim}, pairs={self.pairs!r}, attention_factor={self.attention_factor!r}, "
                f"inv_freq=<{len(self.inv_freq)} float64>)")


def frequencies(config, seq_len=0, layer_type=None):
    """RopeFrequencies of config for sequences of length seq_len (0 = unknown: dynamic keeps the
    base, longrope uses short_factor); layer_type one of config.layer_types (None when every
    layer type has the same RoPE)."""
    return RopeFrequencies(*_posenc.frequencies(config, int(seq_len), layer_type))


_LAYOUTS = {"interleaved": 0, "concat_sin_cos": 1, "concat_cos_sin": 2}
_SPACINGS = {"paper": 0, "t2t": 1, "tensor2tensor": 1}


def _sinusoidal_common(convention, spacing, base, position_offset, threads):
    return dict(layout=_args.choice(convention, _LAYOUTS, "convention"),
                spacing=_args.choice(spacing, _SPACINGS, "spacing"), base=float(base),
                position_offset=int(position_offset), threads=int(threads))


def sinusoidal(d_model, count=None, *, positions=None, offset=0, convention="interleaved",
               spacing="paper", base=10000.0, position_offset=0, dtype=np.float32, threads=0):
    """Sinusoidal position encodings PE: [count, d_model] for positions offset .. offset+count-1,
    or positions.shape + [d_model] for int32/int64 positions (1-D or [batch, seq]).

    convention: "interleaved" (PE[2i] = sin, PE[2i+1] = cos; the paper), "concat_sin_cos"
    (tensor2tensor, fairseq) or "concat_cos_sin"; spacing: "paper" (base^(-2i/d)) or "t2t"
    (base^(-i/(d/2 - 1))); position_offset is added to every position (fairseq: padding_idx + 1).
    """
    dt = np.dtype(dtype)
    name = _args.dtype_name(np.empty(0, dt), "dtype")
    if positions is not None:
        if count is not None:
            raise ValueError("count and positions: give one of them")
        p = np.asarray(positions)
        shape = p.shape
        p2 = p.reshape(1, -1) if p.ndim == 1 else p
        if p2.ndim != 2:
            raise ValueError(f"positions.shape = {shape}: must be [n] or [batch, seq]")
        batch, seq = p2.shape
    else:
        if count is None:
            raise ValueError("count or positions: give one of them")
        batch, seq, p2, shape = 1, int(count), None, (int(count),)
    out = np.empty((batch, seq, int(d_model)), dt)
    _posenc.write_sinusoidal(_args.raw(out), name,
                             **_sinusoidal_common(convention, spacing, base, position_offset,
                                                  threads),
                             **_args.positions_args(p2, offset, batch, seq))
    return out.reshape(tuple(shape) + (int(d_model),))


def add_sinusoidal(x, *, positions=None, offset=0, x_scale=1.0, out=None,
                   convention="interleaved", spacing="paper", base=10000.0, position_offset=0,
                   threads=0):
    """out = x * x_scale + PE(position) for x [batch, seq, d_model] or [seq, d_model] (any
    strides, d_model contiguous); out=x for in place. Positions as for apply_rope. Returns out."""
    x = _args.as_array(x, "x")
    name = _args.dtype_name(x, "x")
    out = _args.output(out, x, "out", "x")
    if x.ndim not in (2, 3):
        raise ValueError(f"x.ndim = {x.ndim}: must be 3 ([batch, seq, d_model]) or 2")
    xv, ov = (x[None], out[None]) if x.ndim == 2 else (x, out)
    batch, seq, _ = xv.shape
    _posenc.add_sinusoidal(_args.raw(xv), _args.raw(ov), name, x_scale=float(x_scale),
                           **_sinusoidal_common(convention, spacing, base, position_offset,
                                                threads),
                           **_args.positions_args(positions, offset, batch, seq))
    return out


def set_max_target(name):
    """Caps SIMD dispatch at `name` ("AVX2", "SSE4", "SCALAR", ...; "" removes the cap) for the
    whole process; an unknown name raises ValueError."""
    _posenc.set_max_target(str(name))


from posenc import reference  # noqa: E402  (needs apply_rope's helpers above)
