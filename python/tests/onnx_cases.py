"""ONNX RotaryEmbedding: building single-node models, running them through posenc, and the
tolerance both ONNX test files use.

Semantics (ONNX opset 23 and com.microsoft, both as posenc caller caches):
  opset 23:       4-D x is [batch, heads, seq, head] (posenc layout "bhsd"); 3-D x is
                  [batch, seq, heads * head] with num_heads. With position_ids [batch, seq] the
                  caches are [max_pos, r/2] read by position; without, [batch, seq, r/2] per token.
  com.microsoft:  inputs (x, position_ids, cos, sin); 4-D x is [batch, heads, seq, head]; 3-D x
                  [batch, seq, hidden] (num_heads needed for partial rotary); position_ids is
                  [batch, seq] or one element, the offset of position 0.
"""
from __future__ import annotations

import numpy as np

import posenc
from conftest import ulp


def run_posenc(x, cos, sin, position_ids=None, *, interleaved=0, rotary_embedding_dim=0,
               num_heads=0, microsoft=False, arithmetic="f64"):
    """y of an ONNX RotaryEmbedding node, computed by posenc (caches used as given)."""
    kw = dict(cos=cos, sin=sin, pairs="interleaved" if interleaved else "half",
              rotary_dim=rotary_embedding_dim or None, arithmetic=arithmetic)
    if x.ndim == 3:
        if not num_heads:  # com.microsoft full rotary: head size = 2 * cos.shape[1]
            num_heads = x.shape[2] // (2 * cos.shape[1])
        kw["num_heads"] = num_heads
    else:
        kw["layout"] = "bhsd"
    if position_ids is not None:
        if microsoft and position_ids.size == 1:
            kw["offset"] = int(position_ids.reshape(-1)[0])
        else:
            kw["positions"] = position_ids
    y, _ = posenc.apply_rope(x, **kw)
    return y


def rotation_magnitude(x, cos, sin, position_ids, *, interleaved, rotary_embedding_dim,
                       num_heads, microsoft=False):
    """A = |c * x1| + |s * x2| per output element (float64, x's shape; -1 marks pass-through
    channels): every rounding of either side of an output is bounded by a multiple of ulp(A)."""
    x4 = x.reshape(x.shape[0], x.shape[1], num_heads or x.shape[2] // (2 * cos.shape[-1]), -1) \
        if x.ndim == 3 else x.transpose(0, 2, 1, 3)  # [b, s, h, d]
    b, s, _, d = x4.shape
    r = rotary_embedding_dim or d
    xr = np.abs(x4[..., :r].astype(np.float64))
    if position_ids is None:
        c, sn = cos, sin
    elif microsoft and position_ids.size == 1:
        rows = int(position_ids.reshape(-1)[0]) + np.arange(s)
        c, sn = cos[rows][None].repeat(b, 0), sin[rows][None].repeat(b, 0)
    else:
        c, sn = cos[position_ids], sin[position_ids]
    c = np.abs(c.astype(np.float64))[:, :, None, :]
    sn = np.abs(sn.astype(np.float64))[:, :, None, :]
    if interleaved:
        x1, x2 = xr[..., 0::2], xr[..., 1::2]
        a = np.stack([c * x1 + sn * x2, sn * x1 + c * x2], -1).reshape(xr.shape)
    else:
        x1, x2 = xr[..., : r // 2], xr[..., r // 2:]
        a = np.concatenate([c * x1 + sn * x2, sn * x1 + c * x2], -1)
    full = np.full(x4.shape, -1.0)
    full[..., :r] = a
    return full.reshape(x.shape) if x.ndim == 3 else full.transpose(0, 2, 1, 3)


def assert_close(got, want, x, a, k_ulp: float, extra_ulp32: float = 0.0):
    """|got - want| <= k_ulp * ulp(A') + extra_ulp32 * ulp_f32(A') per rotated element, with
    A' = A * (1 + 2^-10) (a rounded sum may reach the next binade); pass-through elements equal
    x bit for bit."""
    dtype = got.dtype
    rotated = a >= 0
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got[~rotated].view(np.uint8), x[~rotated].view(np.uint8))
    assert np.array_equal(want[~rotated].view(np.uint8), x[~rotated].view(np.uint8))
    a2 = a[rotated] * (1 + 2.0 ** -10)
    tol = k_ulp * ulp(a2, dtype) + extra_ulp32 * ulp(a2, np.float32)
    err = np.abs(got[rotated].astype(np.float64) - want[rotated].astype(np.float64))
    worst = float(np.max(err / ulp(a2, dtype))) if err.size else 0.0
    assert (err <= tol).all(), f"worst {worst:.3f} ulp(A) of {dtype}, allowed {k_ulp}"
    return worst
