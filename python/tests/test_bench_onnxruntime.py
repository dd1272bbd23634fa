"""tools/bench_onnxruntime.py, the ONNX Runtime peer rows (docs/performance.md section 2): it runs
as a user runs it, every row but the baselines computes the RoPE it is compared on (the script's
own float64 check, max_abs_error in the JSON), and the check itself catches a wrong rotation."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO

pytest.importorskip("onnx", reason="needs the onnx package (tools/setup.sh --python)")
pytest.importorskip("onnxruntime", reason="needs the onnxruntime package (tools/setup.sh --python)")
import posenc  # noqa: E402

SCRIPT = REPO / "tools" / "bench_onnxruntime.py"


def load_script():
    spec = importlib.util.spec_from_file_location("bench_onnxruntime", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # definitions only: main() is not run
    return module


def test_peer_rows_run_and_compute_rope(tmp_path):
    out = tmp_path / "rows.json"
    # 7 and 33 tokens: positions up to 32 rotate every pair (position 0 alone would not).
    run = subprocess.run([sys.executable, str(SCRIPT), "--tokens", "7", "33", "--rounds", "1",
                          "--min-time", "0", "--json", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    data = json.loads(out.read_text())
    assert data["cpu"] and data["onnxruntime"]
    rows = data["rows"]
    keys = {"tokens", "row", "source", "threads", "us_per_call", "gbps", "pct_of_scale",
            "pct_of_memcpy", "bytes"}
    for tokens in (7, 33):
        names = {r["row"] for r in rows if r["tokens"] == tokens}
        assert {"numpy in-place scale (baseline)", "numpy copy (baseline)", "onnxruntime opset23",
                "onnxruntime com.microsoft", "posenc cache (f64)", "posenc cache (f32 arithmetic)",
                "posenc default (on the fly, f64)", "posenc RopeCall cache (f32 ar.)",
                "posenc RopeCall default"} <= names, names
    mod = load_script()
    for r in rows:
        assert keys <= r.keys(), r
        assert r["us_per_call"] > 0 and r["gbps"] > 0
        if r["source"].startswith("baseline"):
            assert "max_abs_error" not in r
        else:
            assert 0 <= r["max_abs_error"] <= mod.TOLERANCE, r


def test_reference_is_posenc_rope_from_the_same_caches(rng):
    mod = load_script()
    cos, sin = mod.caches()
    tokens = 9
    q = rng.uniform(-1, 1, (1, tokens, mod.Q_HEADS * mod.HEAD)).astype(np.float32)
    k = rng.uniform(-1, 1, (1, tokens, mod.K_HEADS * mod.HEAD)).astype(np.float32)
    got_q, got_k = np.empty_like(q), np.empty_like(k)
    posenc.apply_rope(q, k, cos=cos, sin=sin, num_heads=mod.Q_HEADS, num_kv_heads=mod.K_HEADS,
                      out_q=got_q, out_k=got_k)
    refs = (mod.reference(q, cos, sin), mod.reference(k, cos, sin))
    assert mod.max_abs_error((got_q, got_k), refs) <= mod.TOLERANCE


def test_check_catches_a_wrong_rotation_and_unwritten_outputs(rng):
    mod = load_script()
    cos, sin = mod.caches()
    q = rng.uniform(-1, 1, (1, 5, 2 * mod.HEAD)).astype(np.float32)
    ref = mod.reference(q, cos, sin)
    assert mod.max_abs_error((ref.astype(np.float32),), (ref,)) <= mod.TOLERANCE
    # Interleaved pairs instead of half pairs, the inverse rotation, positions off by one.
    wrong_layout = ref.reshape(1, 5, 2, 2, mod.HEAD // 2).swapaxes(-1, -2).reshape(q.shape)
    inverse = mod.reference(q, cos, -sin)
    shifted = mod.reference(q, cos[1:], sin[1:])
    for wrong in (wrong_layout, inverse, shifted):
        assert mod.max_abs_error((wrong.astype(np.float32),), (ref,)) > mod.TOLERANCE
    unwritten = np.full_like(q, np.nan)
    assert mod.max_abs_error((unwritten,), (ref,)) == np.inf
