"""Argument handling shared by posenc.apply_rope and posenc.reference.apply_rope.

Everything here turns the user's arrays into zero-copy views that the C++ layer reads as
posenc::Tensor: a 4-D logical [batch, seq, heads, head_dim] view (a transpose for BHSD, a reshape
of the last axis for 3-D input), float16/bfloat16 viewed as uint16 bit patterns. Checks that the
library cannot make from a raw pointer (shapes of caches and positions, names of options) are
made here, with messages in the library's style: the argument, its value, what it must be.
"""
from __future__ import annotations

import numpy as np

import ml_dtypes

from posenc import _posenc

BF16 = np.dtype(ml_dtypes.bfloat16)
_DTYPES = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16", BF16: "bf16"}
_PAIRS = {"half": 0, "interleaved": 1, None: 2}  # None: the config's layout, else half
_ARITHMETIC = {"f64": 0, "f32": 1, "fma_chain": 2}


def dtype_name(a: np.ndarray, name: str) -> str:
    try:
        return _DTYPES[a.dtype]
    except KeyError:
        raise ValueError(f"{name}.dtype = {a.dtype}: must be float32, float16 or bfloat16 "
                         "(ml_dtypes.bfloat16)") from None


def raw(a: np.ndarray) -> np.ndarray:
    """The array as the C++ layer takes it: float32 as is, 16-bit types as uint16 bits."""
    return a if a.dtype == np.float32 else a.view(np.uint16)


def choice(value, options: dict, name: str) -> int:
    key = value.lower() if isinstance(value, str) else value
    if key not in options:
        allowed = ", ".join(repr(o) for o in options)
        raise ValueError(f"{name} = {value!r}: must be one of {allowed}")
    return options[key]


def pairs_code(pairs) -> int:
    return choice(pairs, _PAIRS, "pairs")


def arithmetic_code(arithmetic) -> int:
    return choice(arithmetic, _ARITHMETIC, "arithmetic")


def as_array(x, name: str) -> np.ndarray:
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name}: must be a numpy array, not {type(x).__name__}")
    return x


def logical_view(x: np.ndarray, name: str, layout: str, num_heads) -> np.ndarray:
    """A zero-copy [batch, seq, heads, head_dim] view of x.

    4-D x is [batch, seq, heads, head_dim] (layout "bshd") or [batch, heads, seq, head_dim]
    ("bhsd"); 3-D x is [batch, seq, heads * head_dim] and needs num_heads. This runs four times
    per apply_rope call, so the common cases come first.
    """
    ndim = x.ndim
    if ndim == 4:
        if layout == "bshd":
            return x
        lay = choice(layout, {"bshd": "bshd", "bhsd": "bhsd"}, "layout")
        return x if lay == "bshd" else x.transpose(0, 2, 1, 3)
    if ndim == 3:
        if num_heads is None:
            raise ValueError(f"{name}.shape = {x.shape}: 3-D input [batch, seq, heads * head_dim] "
                             "needs num_heads")
        batch, seq, hidden = x.shape
        if num_heads <= 0 or hidden % num_heads != 0:
            raise ValueError(f"num_heads = {num_heads}: must be > 0 and divide "
                             f"{name}.shape[2] = {hidden}")
        # Splitting one axis in two is always a view (any stride), never a copy.
        return x.reshape(batch, seq, num_heads, hidden // num_heads)
    raise ValueError(f"{name}.ndim = {x.ndim}: must be 4 ([batch, seq, heads, head_dim], or "
                     "[batch, heads, seq, head_dim] with layout='bhsd') or 3 "
                     "([batch, seq, heads * head_dim] with num_heads)")


def output(out, x: np.ndarray, name: str, x_name: str) -> np.ndarray:
    """The array to write: out (checked against x's shape and dtype) or a new one like x."""
    if out is None:
        return np.empty(x.shape, x.dtype)
    out = as_array(out, name)
    if out.shape != x.shape:
        raise ValueError(f"{name}.shape = {out.shape}: must equal {x_name}.shape = {x.shape}")
    if out.dtype != x.dtype:
        raise ValueError(f"{name}.dtype = {out.dtype}: must equal {x_name}.dtype = {x.dtype}")
    if not out.flags.writeable:
        raise ValueError(f"{name}: is read only")
    return out


def positions_args(positions, offset, batch: int, seq: int) -> dict:
    """ids / batch_offsets / offset for the C++ layer from positions= and offset=."""
    if positions is not None:
        if np.ndim(offset) != 0 or offset != 0:
            raise ValueError("positions and offset: give one of them")
        p = np.asarray(positions)
        if p.dtype not in (np.int32, np.int64):
            raise ValueError(f"positions.dtype = {p.dtype}: must be int32 or int64")
        if p.ndim == 1:
            p = p[None, :]
        if p.ndim != 2 or p.shape[1] != seq or p.shape[0] not in (1, batch):
            raise ValueError(f"positions.shape = {np.shape(positions)}: must be "
                             f"[batch, seq] = [{batch}, {seq}] (or [1, {seq}] or [{seq}])")
        return {"ids": np.ascontiguousarray(np.broadcast_to(p, (batch, seq))),
                "batch_offsets": None, "offset": 0}
    if np.ndim(offset) == 0:
        return {"ids": None, "batch_offsets": None, "offset": int(offset)}
    o = np.asarray(offset)
    if o.ndim != 1 or o.shape[0] != batch or not np.issubdtype(o.dtype, np.integer):
        raise ValueError(f"offset: per-batch offsets must be integers of shape [batch] = "
                         f"[{batch}], not {o.dtype} {o.shape}")
    return {"ids": None, "batch_offsets": np.ascontiguousarray(o, dtype=np.int64), "offset": 0}


def inv_freq_arg(inv_freq):
    if inv_freq is None:
        return None
    f = np.ascontiguousarray(inv_freq, dtype=np.float64)
    if f.ndim != 1:
        raise ValueError(f"inv_freq.shape = {f.shape}: must be 1-D (rotary_dim / 2 values)")
    return f


def cache_args(cos, sin, half: int, batch: int, seq: int) -> dict:
    """cos / sin caches: [rows, r/2] read by position or [batch, seq, r/2] per token."""
    if cos is None and sin is None:
        return {"cos": None, "sin": None, "cache_dtype": "f32", "cache_per_token": False}
    if (type(cos) is np.ndarray and type(sin) is np.ndarray and cos.ndim == 2
            and cos.shape == sin.shape and cos.dtype == sin.dtype and cos.shape[1] == half
            and cos.dtype == np.float32 and cos.flags.c_contiguous and sin.flags.c_contiguous):
        # The common case (float32 tables read by position) without copies or conversions.
        return {"cos": cos, "sin": sin, "cache_dtype": "f32", "cache_per_token": False}
    if cos is None or sin is None:
        raise ValueError("cos and sin: give both or neither")
    cos, sin = np.ascontiguousarray(cos), np.ascontiguousarray(sin)
    dt = dtype_name(cos, "cos")
    if sin.dtype != cos.dtype or sin.shape != cos.shape:
        raise ValueError(f"sin ({sin.dtype} {sin.shape}): must have cos's dtype and shape "
                         f"({cos.dtype} {cos.shape})")
    if cos.ndim == 2:
        per_token = False
        want = f"[rows, {half}]"
        ok = cos.shape[1] == half
    elif cos.ndim == 3:
        per_token = True
        want = f"[batch, seq, rotary_dim / 2] = [{batch}, {seq}, {half}]"
        ok = cos.shape == (batch, seq, half)
    else:
        per_token, want, ok = False, f"[rows, {half}] or [batch, seq, {half}]", False
    if not ok:
        raise ValueError(f"cos.shape = {cos.shape}: must be {want} (rotary_dim / 2 = {half} "
                         "values per row)")
    return {"cos": raw(cos), "sin": raw(sin), "cache_dtype": dt, "cache_per_token": per_token}


def table_arg(table):
    if table is None:
        return None
    inner = getattr(table, "_table", None)
    if inner is None:
        raise TypeError(f"table: must be a posenc.RopeTable, not {type(table).__name__}")
    return inner


def rope_call(q, k, positions, offset, base, inv_freq, config, layer_type, pairs, rotary_dim,
              inverse, attention_factor, cos, sin, table, out_q, out_k, arithmetic, threads,
              layout, num_heads, num_kv_heads, mode):
    """Validates and converts apply_rope's arguments, calls the C++ layer and returns the
    user-shaped outputs (out_q, out_k).

    Arguments are positional, in apply_rope's order, and the C++ call is positional: at decode
    sizes the kernel takes well under a microsecond, so this function's own cost is what a Python
    caller sees (tools/bench_onnxruntime.py at 1 token)."""
    (qv, kv, oqv, okv, dt, pairs_c, rotary, inverse, base, inv, attention_factor, ids,
     batch_offsets, offset, cos_r, sin_r, cache_dt, per_token, tab, arith, threads, oq, ok_, _,
     _) = rope_arguments(q, k, positions, offset, base, inv_freq, config, layer_type, pairs,
                         rotary_dim, inverse, attention_factor, cos, sin, table, out_q, out_k,
                         arithmetic, threads, layout, num_heads, num_kv_heads, mode)
    _posenc.rope(qv, kv, oqv, okv, dt, mode, pairs_c, rotary, inverse, base, inv,
                 attention_factor, ids, batch_offsets, int(offset), cos_r, sin_r, cache_dt,
                 per_token, tab, config, layer_type, arith, threads)
    if mode == "reference_f64":
        # Back to the user's layout (the C++ layer wrote logical [batch, seq, heads, head_dim]).
        oq = None if q is None else _user_layout(oq, q, layout)
        ok_ = None if k is None else _user_layout(ok_, k, layout)
    return oq, ok_


def rope_arguments(q, k, positions, offset, base, inv_freq, config, layer_type, pairs, rotary_dim,
                   inverse, attention_factor, cos, sin, table, out_q, out_k, arithmetic, threads,
                   layout, num_heads, num_kv_heads, mode):
    """apply_rope's arguments checked and converted for the C++ layer, as one tuple: the logical
    views (qv, kv, oqv, okv), dtype, pairs, rotary_dim, inverse, base, inv_freq, attention factor,
    ids, batch_offsets, offset, cos, sin, cache dtype, per-token flag, table, arithmetic, threads,
    then the user-shaped outputs (oq, ok) and the views' batch and seq. The checks and their order
    are those of the helpers above."""
    if q is None and k is None:
        raise ValueError("q and k: at least one must be given")
    if q is not None and not isinstance(q, np.ndarray):
        as_array(q, "q")
    if k is not None and not isinstance(k, np.ndarray):
        as_array(k, "k")
    first = q if q is not None else k
    dt = _DTYPES.get(first.dtype)
    if dt is None:
        dtype_name(first, "q" if q is not None else "k")
    if q is not None and k is not None and k.dtype != q.dtype:
        raise ValueError(f"k.dtype = {k.dtype}: must equal q.dtype = {q.dtype}")
    if num_kv_heads is None:
        num_kv_heads = num_heads
    qv = None if q is None else logical_view(q, "q", layout, num_heads)
    kv = None if k is None else logical_view(k, "k", layout, num_kv_heads)
    batch, seq, _, head_dim = (qv if qv is not None else kv).shape
    if mode == "reference_f64":
        oq = None if q is None else np.empty(qv.shape, np.float64)
        ok_ = None if k is None else np.empty(kv.shape, np.float64)
        oqv, okv = oq, ok_
    else:
        oq = None if q is None else output(out_q, q, "out_q", "q")
        ok_ = None if k is None else output(out_k, k, "out_k", "k")
        oqv = None if q is None else logical_view(oq, "out_q", layout, num_heads)
        okv = None if k is None else logical_view(ok_, "out_k", layout, num_kv_heads)
    if config is not None and (inv_freq is not None or cos is not None or table is not None):
        raise ValueError("config: frequencies come from the config; do not also give inv_freq, "
                         "cos/sin or table")
    if table is not None and cos is not None:
        raise ValueError("table and cos/sin: give one source of cos/sin")
    if layer_type is not None and config is None:
        raise ValueError(f"layer_type = {layer_type!r}: needs config")
    if dt != "f32":  # 16-bit types travel as uint16 bit patterns (raw)
        qv, kv = raw(qv) if qv is not None else None, raw(kv) if kv is not None else None
        if mode != "reference_f64":
            oqv = raw(oqv) if oqv is not None else None
            okv = raw(okv) if okv is not None else None
    # The conversions in the order of the helpers' checks; the common values without a call.
    pairs_c = _PAIRS.get(pairs, -1) if pairs is None or type(pairs) is str else -1
    if pairs_c < 0:
        pairs_c = pairs_code(pairs)
    rotary, inverse, base = int(rotary_dim or 0), bool(inverse), float(base)
    inv = None if inv_freq is None else inv_freq_arg(inv_freq)
    attention_factor = float(attention_factor)
    tab = None if table is None else table_arg(table)
    arith = _ARITHMETIC.get(arithmetic, -1) if type(arithmetic) is str else -1
    if arith < 0:
        arith = arithmetic_code(arithmetic)
    threads = int(threads)
    if positions is None and type(offset) is int:  # the common case of positions_args
        ids, batch_offsets = None, None
    else:
        pos = positions_args(positions, offset, batch, seq)
        ids, batch_offsets, offset = pos["ids"], pos["batch_offsets"], pos["offset"]
    if cos is None and sin is None:
        cos_r, sin_r, cache_dt, per_token = None, None, "f32", False
    else:
        c = cache_args(cos, sin, (head_dim if not rotary_dim else int(rotary_dim)) // 2, batch,
                       seq)
        cos_r, sin_r, cache_dt, per_token = c["cos"], c["sin"], c["cache_dtype"], \
            c["cache_per_token"]
        if per_token and positions is not None:
            raise ValueError(PER_TOKEN_POSITIONS)
    return (qv, kv, oqv, okv, dt, pairs_c, rotary, inverse, base, inv, attention_factor, ids,
            batch_offsets, offset, cos_r, sin_r, cache_dt, per_token, tab, arith, threads, oq,
            ok_, batch, seq)


PER_TOKEN_POSITIONS = ("positions: unused with per-token caches [batch, seq, rotary_dim / 2]; "
                       "give 2-D caches [rows, rotary_dim / 2] to read them by position")


def _user_layout(a64: np.ndarray, like: np.ndarray, layout: str) -> np.ndarray:
    if like.ndim == 3:
        return a64.reshape(like.shape)
    return a64 if layout.lower() == "bshd" else a64.transpose(0, 2, 1, 3)
