"""posenc against onnx.reference.ReferenceEvaluator and onnxruntime on random cases: the opset-23
RotaryEmbedding and the com.microsoft RotaryEmbedding contrib op; both pair layouts, partial
rotary, position_ids (ids, none = per-token caches, a single offset for com.microsoft), 3-D and
4-D input, float32 and float16. Caches are the float32 (float16) roundings of the double cos/sin
of p * base^(-2i/r), as a runtime builds them; posenc uses them as given.

Tolerances, A = |c x1| + |s x2| of the element (every rounding below is <= 0.5 ulp(A)):
- float32, onnx.reference: fl(fl(c x1) - fl(s x2)), <= 1.5 ulp(A) from exact. posenc f32
  arithmetic is that same expression (no FMA): bitwise. posenc f64 rounds the double result once
  (<= 0.5 ulp(A)): within 2 ulp(A).
- float32, onnxruntime: its kernel's own order (FMA or not) is <= 1.5 ulp(A) from exact: within
  2 ulp(A) of posenc f64, 3 ulp(A) of posenc f32.
- float16, onnx.reference: numpy float16 rounds each product and the sum to float16, <= 1.5
  float16 ulp(A); posenc computes in float32 (products of float16 values are exact there, the
  sum rounded once) and rounds once to float16, <= 0.5 float16 ulp(A) + 1 float32 ulp(A): within
  2 float16 ulp(A) + 2 float32 ulp(A).
- float16, onnxruntime: it converts to float32, rotates and rounds once: exact products, one f32
  rounding of the sum, one RNE to float16, as posenc: bitwise.
"""
from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest

from onnx_cases import assert_close, rotation_magnitude, run_posenc

onnx = pytest.importorskip("onnx", reason="needs the onnx package (tools/setup.sh --python)")
ort = pytest.importorskip("onnxruntime",
                          reason="needs the onnxruntime package (tools/setup.sh --python)")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

ELEM = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16}


def make_model(microsoft, feeds, attrs, dtype):
    names = ["x", "position_ids", "cos", "sin"] if microsoft else \
        ["x", "cos", "sin"] + (["position_ids"] if "position_ids" in feeds else [])
    inputs = [helper.make_tensor_value_info(
        n, TensorProto.INT64 if n == "position_ids" else ELEM[np.dtype(dtype)],
        list(feeds[n].shape)) for n in names]
    node = helper.make_node("RotaryEmbedding", names, ["y"],
                            domain="com.microsoft" if microsoft else "", **attrs)
    graph = helper.make_graph([node], "rope", inputs, [
        helper.make_tensor_value_info("y", ELEM[np.dtype(dtype)], list(feeds["x"].shape))])
    opsets = [helper.make_opsetid("", 23)]
    if microsoft:
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 10
    return model


def random_case(rng, *, dtype, interleaved, partial, positions, rank, microsoft):
    batch, heads, seq, head = 2, 3, 5, 20
    r = 12 if partial else head
    max_pos = 64
    inv_freq = 10000.0 ** (-np.arange(0, r, 2) / r)
    x4 = rng.standard_normal((batch, heads, seq, head)).astype(dtype)  # [b, h, s, d]
    x = x4 if rank == 4 else np.ascontiguousarray(x4.transpose(0, 2, 1, 3)).reshape(
        batch, seq, heads * head)
    attrs = {"interleaved": int(interleaved)}
    if partial:
        attrs["rotary_embedding_dim"] = r
    if rank == 3 or (microsoft and partial):
        attrs["num_heads"] = heads
    feeds = {"x": x}
    if positions == "ids":
        feeds["position_ids"] = rng.integers(0, max_pos, (batch, seq)).astype(np.int64)
        rows = np.arange(max_pos)
    elif positions == "offset":
        feeds["position_ids"] = np.array([17], np.int64)
        rows = np.arange(max_pos)
    else:  # per-token caches [batch, seq, r/2]
        rows = rng.integers(0, max_pos, (batch, seq))
    angles = rows[..., None] * inv_freq
    feeds["cos"], feeds["sin"] = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    return feeds, attrs


def _posenc_and_magnitude(feeds, attrs, microsoft, arithmetic="f64"):
    kw = dict(interleaved=attrs["interleaved"],
              rotary_embedding_dim=attrs.get("rotary_embedding_dim", 0),
              num_heads=attrs.get("num_heads", 0), microsoft=microsoft)
    args = (feeds["x"], feeds["cos"], feeds["sin"], feeds.get("position_ids"))
    return run_posenc(*args, arithmetic=arithmetic, **kw), rotation_magnitude(*args, **kw)


OPSET23 = list(itertools.product([np.float32, np.float16], [0, 1], [False, True],
                                 ["ids", "none"], [4, 3]))
MICROSOFT = list(itertools.product([np.float32, np.float16], [0, 1], [False, True],
                                   ["ids", "offset"], [4, 3]))


def _id(c):
    dtype, inter, partial, pos, rank = c
    return (f"{np.dtype(dtype).name}-{'interleaved' if inter else 'half'}-"
            f"{'partial' if partial else 'full'}-pos_{pos}-{rank}d")


@pytest.mark.parametrize("case", OPSET23, ids=[_id(c) for c in OPSET23])
def test_opset23_against_onnx_reference_and_onnxruntime(case):
    dtype, interleaved, partial, positions, rank = case
    rng = np.random.default_rng(zlib.crc32(_id(case).encode()))
    feeds, attrs = random_case(rng, dtype=dtype, interleaved=interleaved, partial=partial,
                               positions=positions, rank=rank, microsoft=False)
    model = make_model(False, feeds, attrs, dtype)
    onnx.checker.check_model(model)
    y_ref = ReferenceEvaluator(model).run(None, feeds)[0]
    y_ort = ort.InferenceSession(model.SerializeToString(),
                                 providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    y, a = _posenc_and_magnitude(feeds, attrs, False)
    x = feeds["x"]
    if dtype == np.float32:
        y32, _ = _posenc_and_magnitude(feeds, attrs, False, arithmetic="f32")
        assert np.array_equal(y32, y_ref)
        assert_close(y, y_ref, x, a, 2.0)
        assert_close(y, y_ort, x, a, 2.0)
        assert_close(y32, y_ort, x, a, 3.0)
    else:
        assert_close(y, y_ref, x, a, 2.0, extra_ulp32=2.0)
        assert np.array_equal(y, y_ort)


@pytest.mark.parametrize("case", MICROSOFT, ids=[_id(c) for c in MICROSOFT])
def test_com_microsoft_against_onnxruntime(case):
    dtype, interleaved, partial, positions, rank = case
    rng = np.random.default_rng(zlib.crc32(("ms-" + _id(case)).encode()))
    feeds, attrs = random_case(rng, dtype=dtype, interleaved=interleaved, partial=partial,
                               positions=positions, rank=rank, microsoft=True)
    model = make_model(True, feeds, attrs, dtype)
    y_ort = ort.InferenceSession(model.SerializeToString(),
                                 providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    y, a = _posenc_and_magnitude(feeds, attrs, True)
    if dtype == np.float32:
        assert_close(y, y_ort, feeds["x"], a, 2.0)
        y32, _ = _posenc_and_magnitude(feeds, attrs, True, arithmetic="f32")
        assert_close(y32, y_ort, feeds["x"], a, 3.0)
    else:
        assert np.array_equal(y, y_ort)

