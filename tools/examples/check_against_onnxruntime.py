"""Checking a runtime's RoPE against posenc: ONNX Runtime's RotaryEmbedding (opset 23) on a
Llama-3-8B-shaped q, its cos/sin caches built as a runtime builds them, compared with posenc on
the same caches and with posenc's double-precision oracle.

    python tools/examples/check_against_onnxruntime.py      (needs numpy, onnx, onnxruntime)

The differences are printed in ulp of max(|x|, |partner|) per pair, the measure of posenc's
accuracy contract (posenc: < 2 ulp of the exact rotation by the given cos/sin).
"""
import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

import posenc

batch, seq, heads, head_dim, theta = 1, 64, 32, 128, 500000.0
rng = np.random.default_rng(0)
q = rng.standard_normal((batch, heads, seq, head_dim)).astype(np.float32)  # ONNX 4-D: BHSD
positions = np.arange(1000, 1000 + seq, dtype=np.int64)[None, :]

# The caches: float32 roundings of the double cos/sin (posenc's own table holds exactly these).
table = posenc.RopeTable(head_dim, 4096, base=theta)
cos, sin = np.array(table.cos), np.array(table.sin)

node = helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"])
graph = helper.make_graph([node], "rope", [
    helper.make_tensor_value_info("x", TensorProto.FLOAT, list(q.shape)),
    helper.make_tensor_value_info("cos", TensorProto.FLOAT, list(cos.shape)),
    helper.make_tensor_value_info("sin", TensorProto.FLOAT, list(sin.shape)),
    helper.make_tensor_value_info("pos", TensorProto.INT64, list(positions.shape)),
], [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(q.shape))])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
model.ir_version = 10
session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
y_ort = session.run(None, {"x": q, "cos": cos, "sin": sin, "pos": positions})[0]

y_posenc, _ = posenc.apply_rope(q, layout="bhsd", cos=cos, sin=sin, positions=positions)
# The exact rotation by the given caches (the oracle, in double).
y_exact, _ = posenc.reference.apply_rope_f64(q, layout="bhsd", cos=cos, sin=sin,
                                             positions=positions)


def pair_max(x):
    a = np.abs(x.astype(np.float64))
    h = x.shape[-1] // 2
    return np.maximum(a, np.concatenate([a[..., h:], a[..., :h]], axis=-1))


def ulps(a, b, x):
    spacing = np.exp2(np.floor(np.log2(np.maximum(pair_max(x), 2.0 ** -126))) - 23)
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)) / spacing))


print(f"onnxruntime {ort.__version__}, posenc {posenc.__version__} "
      f"({posenc.info()['chosen_target']}), q {q.shape} positions {positions[0, 0]}..")
print(f"onnxruntime vs posenc (same caches): {ulps(y_ort, y_posenc, q):.3f} ulp")
print(f"onnxruntime vs exact:                {ulps(y_ort, y_exact, q):.3f} ulp")
print(f"posenc      vs exact:                {ulps(y_posenc, y_exact, q):.3f} ulp")
