#!/usr/bin/env python3
"""Peer rows: ONNX Runtime's RotaryEmbedding kernels (MLAS) on posenc's benchmark shape, timed in
this process next to a same-run memory baseline (and posenc itself when its Python package is
installed), so anyone can check the comparison.

Shape: Llama-3-8B, q 32 heads + k 8 heads, head_dim 128, rope_theta 500000, f32, half pairs,
batch 1, positions 0 .. tokens-1, out of place (ORT writes a new tensor; outputs are bound once
with IOBinding so no call allocates). Each ORT model is one node:
  opset23        RotaryEmbedding (ai.onnx opset 23), x [1, tokens, heads*128], num_heads,
                 position_ids [1, tokens], f32 cos/sin caches [8192, 64]
  com.microsoft  com.microsoft RotaryEmbedding, same caches, position_ids [1] (offset 0)
q and k are two sessions (one node each) run back to back: one "call" is both. posenc rows
(when `import posenc` works): posenc.apply_rope on the same q, k and caches (source "cache"),
and with its default settings (cos/sin computed on the fly, f64 rotation); posenc.RopeCall, the
same call checked once and then called per step, with the caches (f32 arithmetic) and default.
Baselines on the same bytes: numpy copy (np.copyto, read + write) and in-place scale (x *= 1).
Every figure is the median over --rounds rounds (default 3) of the mean over >= --min-time
seconds of calls. ORT runs with intra_op_num_threads = --threads, posenc with threads = --threads.
Every row but the baselines is checked after its timing: the outputs of its last call (the output
buffers are filled with NaN before each row) against `reference` (float64 RoPE from the same f32
caches), max |error| <= TOLERANCE, so a row that computes something else (another layout, other
positions) or writes nothing fails the run (exit 1) instead of being compared; the JSON rows carry
it as max_abs_error.

Usage: . tools/python_env.sh && "$POSENC_VENV/bin/python" tools/bench_onnxruntime.py
           [--tokens 512 4096] [--threads 1] [--rounds 3] [--min-time 0.2] [--json FILE]
Needs numpy, onnx and onnxruntime (python/requirements.txt; tools/setup.sh --python).
"""
import argparse
import json
import platform
import statistics
import sys
import time

import numpy as np

Q_HEADS, K_HEADS, HEAD, THETA, MAX_POS = 32, 8, 128, 500000.0, 8192
# |x| <= 1, so outputs are below sqrt(2): each row's f32 rounding costs < 2^-22 and posenc's
# default computes its own cos / sin (within 2^-24 of the caches'), < 5e-7 in all; a wrong
# layout or wrong positions is off by O(0.1-1).
TOLERANCE = 2.0 ** -20


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def caches():
    inv_freq = THETA ** (-np.arange(0, HEAD, 2, dtype=np.float64) / HEAD)
    angles = np.arange(MAX_POS, dtype=np.float64)[:, None] * inv_freq
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def reference(x, cos, sin):
    """RoPE of x [1, tokens, heads * HEAD] (half pairs, positions 0 .. tokens - 1) in float64 from
    the f32 caches: what every row but the baselines computes, up to its f32 rounding."""
    tokens = x.shape[1]
    v = x.astype(np.float64).reshape(1, tokens, -1, HEAD)
    c = cos[:tokens].astype(np.float64)[None, :, None, :]
    s = sin[:tokens].astype(np.float64)[None, :, None, :]
    x1, x2 = v[..., :HEAD // 2], v[..., HEAD // 2:]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1).reshape(x.shape)


def max_abs_error(outputs, references):
    """Largest |output - reference| over the pairs; NaN (never written, or NaN produced) is inf."""
    err = 0.0
    for out, ref in zip(outputs, references):
        diff = np.abs(out.astype(np.float64) - ref)
        err = max(err, float(np.max(np.where(np.isnan(diff), np.inf, diff))))
    return err


def seconds_per_call(fn, min_time, rounds):
    fn()  # warm-up
    means = []
    for _ in range(rounds):
        reps, start = 0, time.perf_counter()
        while True:
            fn()
            reps += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_time and reps >= 3:
                break
        means.append(elapsed / reps)
    return statistics.median(means)


def ort_session(ort, onnx, microsoft, heads, tokens, threads, cos, sin):
    from onnx import TensorProto, helper
    hidden = heads * HEAD
    pos_shape = [1] if microsoft else [1, tokens]
    names = ["x", "position_ids", "cos", "sin"] if microsoft else ["x", "cos", "sin", "position_ids"]
    shapes = {"x": [1, tokens, hidden], "position_ids": pos_shape, "cos": list(cos.shape),
              "sin": list(sin.shape)}
    inputs = [helper.make_tensor_value_info(
        n, TensorProto.INT64 if n == "position_ids" else TensorProto.FLOAT, shapes[n]) for n in names]
    node = helper.make_node("RotaryEmbedding", names, ["y"], num_heads=heads, interleaved=0,
                            domain="com.microsoft" if microsoft else "")
    graph = helper.make_graph([node], "rope", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shapes["x"])])
    opsets = [helper.make_opsetid("", 23)]
    if microsoft:
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 10
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    positions = (np.zeros(1, np.int64) if microsoft
                 else np.arange(tokens, dtype=np.int64).reshape(1, tokens))
    return session, positions


def ort_call(ort, session, x, positions, cos, sin, y):
    binding = session.io_binding()
    for name, value in (("x", x), ("position_ids", positions), ("cos", cos), ("sin", sin)):
        binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(value))
    binding.bind_ortvalue_output("y", ort.OrtValue.ortvalue_from_numpy(y))
    return lambda: session.run_with_iobinding(binding)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, nargs="+", default=[512, 4096])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--json", help="also write the rows as a JSON list to this file")
    args = ap.parse_args(argv)
    try:
        import onnx
        import onnxruntime as ort
    except ImportError as e:
        print(f"bench_onnxruntime: needs onnx and onnxruntime ({e}); run tools/setup.sh --python "
              "and use $POSENC_VENV/bin/python", file=sys.stderr)
        return 2
    # tools/ (this script's folder) holds the CLI's sources in tools/posenc: not the package.
    sys.path[:] = [p for p in sys.path if p not in ("", sys.path[0])]
    try:
        import posenc
        if not hasattr(posenc, "apply_rope"):
            posenc = None
    except ImportError:
        posenc = None
    cos, sin = caches()
    rows, failures = [], []
    print(f"CPU: {cpu_model()}; onnxruntime {ort.__version__}; threads {args.threads}; "
          f"median of {args.rounds} rounds"
          + ("" if posenc else "; posenc Python package not installed: no posenc rows"))
    print(f"{'tokens':>6} {'row':<32} {'us/call':>10} {'GB/s':>7} {'% scale':>8} {'% copy':>7}")
    rng = np.random.default_rng(7)
    for tokens in args.tokens:
        q = rng.uniform(-1, 1, (1, tokens, Q_HEADS * HEAD)).astype(np.float32)
        k = rng.uniform(-1, 1, (1, tokens, K_HEADS * HEAD)).astype(np.float32)
        yq, yk = np.empty_like(q), np.empty_like(k)
        nbytes = 2.0 * (q.nbytes + k.nbytes)  # read + write

        def scale():
            np.multiply(q, np.float32(1), out=q)
            np.multiply(k, np.float32(1), out=k)

        def copy():
            np.copyto(yq, q)
            np.copyto(yk, k)

        t_scale = seconds_per_call(scale, args.min_time, args.rounds)
        t_copy = seconds_per_call(copy, args.min_time, args.rounds)
        cases = [("numpy in-place scale (baseline)", scale, "baseline_scale"),
                 ("numpy copy (baseline)", copy, "baseline_memcpy")]
        for microsoft in (False, True):
            calls = []
            for x, y, heads in ((q, yq, Q_HEADS), (k, yk, K_HEADS)):
                session, positions = ort_session(ort, onnx, microsoft, heads, tokens, args.threads,
                                                 cos, sin)
                calls.append(ort_call(ort, session, x, positions, cos, sin, y))
            name = "onnxruntime " + ("com.microsoft" if microsoft else "opset23")
            cases.append((name, lambda c=calls: (c[0](), c[1]()), "cache"))
        if posenc is not None:
            kw = dict(num_heads=Q_HEADS, num_kv_heads=K_HEADS, out_q=yq, out_k=yk,
                      threads=args.threads)
            cases.append(("posenc cache (f64)", lambda: posenc.apply_rope(
                q, k, cos=cos, sin=sin, **kw), "cache"))
            cases.append(("posenc cache (f32 arithmetic)", lambda: posenc.apply_rope(
                q, k, cos=cos, sin=sin, arithmetic="f32", **kw), "cache"))
            cases.append(("posenc default (on the fly, f64)", lambda: posenc.apply_rope(
                q, k, base=THETA, **kw), "on_the_fly"))
            if hasattr(posenc, "RopeCall"):  # checked once, then called (decode loops)
                call_cache = posenc.RopeCall(q, k, cos=cos, sin=sin, arithmetic="f32", **kw)
                call_default = posenc.RopeCall(q, k, base=THETA, **kw)
                cases.append(("posenc RopeCall cache (f32 ar.)", lambda: call_cache(offset=0),
                              "cache"))
                cases.append(("posenc RopeCall default", lambda: call_default(offset=0),
                              "on_the_fly"))
        refs = (reference(q, cos, sin), reference(k, cos, sin))
        for name, fn, source in cases:
            baseline = source.startswith("baseline")
            if not baseline:
                yq.fill(np.nan)
                yk.fill(np.nan)
            t = (t_scale if source == "baseline_scale" else t_copy if source == "baseline_memcpy"
                 else seconds_per_call(fn, args.min_time, args.rounds))
            gbps = nbytes / t / 1e9
            row = {"tokens": tokens, "row": name, "source": source, "threads": args.threads,
                   "us_per_call": t * 1e6, "gbps": gbps, "pct_of_scale": 100 * t_scale / t,
                   "pct_of_memcpy": 100 * t_copy / t, "bytes": nbytes}
            if not baseline:
                row["max_abs_error"] = max_abs_error((yq, yk), refs)
                if not row["max_abs_error"] <= TOLERANCE:
                    failures.append(f"{tokens} tokens, {name}: max |error| "
                                    f"{row['max_abs_error']:.3g} > {TOLERANCE:.3g} against the "
                                    "float64 reference")
            rows.append(row)
            print(f"{tokens:>6} {name:<32} {t * 1e6:>10.2f} {gbps:>7.2f} {row['pct_of_scale']:>7.1f}% "
                  f"{row['pct_of_memcpy']:>6.1f}%")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_model(), "onnxruntime": ort.__version__, "rows": rows}, f, indent=1)
    for failure in failures:
        print(f"bench_onnxruntime: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
