"""Every RotaryEmbedding backend node test of the installed onnx package, through posenc.

The onnx wheel ships the definitions of its backend node tests (onnx.backend.test.case.node,
each case generated with np.random.seed(0)) but, in current releases, not the generated
data/node folders. This file materialises them exactly as onnx's `backend-test-tools
generate-data` does (model.onnx, test_data_set_0/input_*.pb, output_*.pb), or uses the shipped
folders when an onnx release has them, then reads them back from those files and runs posenc.
The copies in ../shared/conformance/onnx (taken from the onnx repository) are a fallback and are
checked to hold the same tensors.

Tolerance (the inputs are float32, caches random in [0, 1)): ONNX's reference computes each
output as fl(fl(c*x1) - fl(s*x2)), <= 1.5 ulp(A) from exact, A = |c x1| + |s x2|.
- arithmetic="f32": posenc evaluates fl(fl(x*c) - fl(y*s)) and fl(fl(y*c) + fl(x*s)) in that
  same float32 arithmetic without FMA: the same bits, required exactly.
- arithmetic="f64" (the default): posenc rounds the double result once (<= 0.5 ulp(A) + 2^-29
  ulp), so the two are within 2 ulp(A).
"""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

from conftest import SHARED, require_shared
from onnx_cases import assert_close, rotation_magnitude, run_posenc

onnx = pytest.importorskip("onnx", reason="needs the onnx package (tools/setup.sh --python)")
from onnx import numpy_helper  # noqa: E402

ROLE = {"input": "x", "X": "x", "cos_cache": "cos", "sin_cache": "sin",
        "position_ids": "position_ids"}


def _shipped_dirs():
    data = pathlib.Path(onnx.__file__).parent / "backend" / "test" / "data" / "node"
    return sorted(p for p in data.glob("test_rotary_embedding*") if (p / "model.onnx").exists())


def _generate(out_dir: pathlib.Path):
    """The installed onnx's RotaryEmbedding node cases, written as generate-data writes them."""
    import warnings

    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # other ops' case definitions warn while they import
        cases = collect_testcases("RotaryEmbedding")
    dirs = []
    for case in cases:
        d = out_dir / case.name
        (d / "test_data_set_0").mkdir(parents=True)
        (d / "model.onnx").write_bytes(case.model.SerializeToString())
        inputs, outputs = case.data_sets[0]
        for kind, arrays, infos in (("input", inputs, case.model.graph.input),
                                    ("output", outputs, case.model.graph.output)):
            for j, (a, info) in enumerate(zip(arrays, infos)):
                tensor = numpy_helper.from_array(a, info.name)
                (d / "test_data_set_0" / f"{kind}_{j}.pb").write_bytes(tensor.SerializeToString())
        dirs.append(d)
    return dirs


def _case_dirs(tmp_root: pathlib.Path):
    return _shipped_dirs() or _generate(tmp_root)


@pytest.fixture(scope="session")
def node_cases(tmp_path_factory):
    dirs = _case_dirs(tmp_path_factory.mktemp("onnx_node"))
    return {d.name: d for d in dirs}


def _load_case(d: pathlib.Path, all_dirs: dict):
    """Tensors by role and the RotaryEmbedding attributes (an _expanded model is the function
    body of its base case: same data, the base model's attributes)."""
    model = onnx.load(str(d / "model.onnx"))
    base = d.name[: -len("_expanded")] if d.name.endswith("_expanded") else d.name
    node_model = model if base == d.name else onnx.load(str(all_dirs[base] / "model.onnx"))
    (node,) = [n for n in node_model.graph.node if n.op_type == "RotaryEmbedding"]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    tensors = {}
    for j, info in enumerate(model.graph.input):
        t = onnx.load_tensor(str(d / "test_data_set_0" / f"input_{j}.pb"))
        tensors[ROLE[info.name]] = numpy_helper.to_array(t)
    expected = numpy_helper.to_array(onnx.load_tensor(str(d / "test_data_set_0" / "output_0.pb")))
    return tensors, attrs, expected


def _check(tensors, attrs, expected):
    x, cos, sin = tensors["x"], tensors["cos"], tensors["sin"]
    pos = tensors.get("position_ids")
    kw = dict(interleaved=attrs.get("interleaved", 0),
              rotary_embedding_dim=attrs.get("rotary_embedding_dim", 0),
              num_heads=attrs.get("num_heads", 0))
    exact_f32 = run_posenc(x, cos, sin, pos, arithmetic="f32", **kw)
    assert np.array_equal(exact_f32, expected)
    a = rotation_magnitude(x, cos, sin, pos, **kw)
    return assert_close(run_posenc(x, cos, sin, pos, **kw), expected, x, a, 2.0)


# The case names are fixed by onnx; collected here so each is its own test.
_NAMES = [
    "test_rotary_embedding", "test_rotary_embedding_3d_input",
    "test_rotary_embedding_interleaved", "test_rotary_embedding_no_position_ids",
    "test_rotary_embedding_no_position_ids_interleaved",
    "test_rotary_embedding_no_position_ids_rotary_dim",
    "test_rotary_embedding_with_interleaved_rotary_dim",
    "test_rotary_embedding_with_rotary_dim",
]
_ALL = _NAMES + [n + "_expanded" for n in _NAMES]


def test_the_package_has_exactly_the_known_cases(node_cases):
    assert sorted(node_cases) == sorted(_ALL), "onnx's RotaryEmbedding cases changed: update _NAMES"


@pytest.mark.parametrize("name", _ALL)
def test_onnx_backend_node_case(node_cases, name):
    if name not in node_cases:
        pytest.fail(f"{name}: not among the installed onnx's cases {sorted(node_cases)}")
    worst = _check(*_load_case(node_cases[name], node_cases))
    print(f"{name}: bitwise with arithmetic f32; f64 within {worst:.3f} ulp(A)")


def _load_shared(d: pathlib.Path):
    tensors = {role: np.load(d / f) for role, f in (
        ("x", "input_0_X.npy"), ("cos", "input_1_cos_cache.npy"),
        ("sin", "input_2_sin_cache.npy"))}
    if (d / "input_3_position_ids.npy").exists():
        tensors["position_ids"] = np.load(d / "input_3_position_ids.npy")
    meta = dict(line.split(None, 1) for line in (d / "meta.txt").read_text().splitlines()
                if line and not line.startswith("tensor"))
    attrs = {"interleaved": int(meta["interleaved"]),
             "rotary_embedding_dim": int(meta["rotary_embedding_dim"]),
             "num_heads": int(meta["num_heads"])}
    return tensors, attrs, np.load(d / "output_0_Y.npy")


@pytest.mark.parametrize("name", _NAMES)
def test_shared_copy_fallback(node_cases, name):
    """The ../shared copy of the case (from the onnx repository): posenc passes it, and it holds
    the same tensors the installed package generates."""
    d = require_shared(f"conformance/onnx/{name}")
    tensors, attrs, expected = _load_shared(d)
    _check(tensors, attrs, expected)
    ours, our_attrs, our_expected = _load_case(node_cases[name], node_cases)
    assert sorted(ours) == sorted(tensors)
    for role in tensors:
        assert np.array_equal(ours[role], tensors[role]), role
    assert np.array_equal(our_expected, expected)
    assert {k: our_attrs.get(k, 0) for k in attrs} == attrs
