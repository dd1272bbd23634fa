#!/usr/bin/python3
"""Summarises `posenc bench --quick --json` runs: the derived ratios of the performance model.

Usage: tools/bench_summary.py RUN.json [RUN.json ...] [--model llama3-8b]

For each figure (docs/performance.md §2 says what each one divides by what) it prints the value of
every run, their median and their range, next to the target the project holds it to (issue 14's
goals; "-" where a figure only explains another). A figure whose rows a run lacks is "n/a" for that
run. Every ratio divides two rows of one run, never rows of different runs: the VMs the project
measures on move by 20-30 % between runs, while rows of one run share the machine's state.
Exits 0, or 1 when a file cannot be read as JSON, holds no rows of the model, or two rows match
one figure's keys.
"""
import argparse
import json
import statistics
import sys

# The keys a RoPE row of the model is looked up by, and their values unless a figure says otherwise:
# f32, half pairs, one thread, the caller's arena (max_threads 0), in place.
DEFAULTS = {"dtype": "f32", "pairs": "half", "threads": 1, "max_threads": 0,
            "out_of_place": False, "prepared": False}
# Keys older runs lack, and the value a missing one stands for.
MISSING = {"prepared": False}
DEFAULT_SETTINGS = {"source": "on_the_fly", "arithmetic": "f64"}  # RopeParams{} for f32 tensors
TABLE_F32 = {"source": "table", "arithmetic": "f32"}
TABLE_F64 = {"source": "table", "arithmetic": "f64"}
# RotationArithmetic::kFmaChain (kF64's bound with f32 lanes), on the fly and from a table.
CHAIN = (("kFmaChain on the fly", {"source": "on_the_fly", "arithmetic": "fma_chain"}),
         ("table + kFmaChain", {"source": "table", "arithmetic": "fma_chain"}))
# The rotation's arithmetic alone (bench/rotation_floor.h): at 1 and 16 tokens, what no call
# with that arithmetic can beat.
FLOORS = (("kF64", {"source": "floor", "arithmetic": "f64"}),
          ("kF32", {"source": "floor", "arithmetic": "f32"}),
          ("FMA chain", {"source": "floor", "arithmetic": "fma_chain"}))


class Run:
    """The rows of one JSON file, looked up by their keys."""

    def __init__(self, rows, model):
        self.rows = rows
        self.model = model

    def row(self, model=None, **keys):
        want = dict(DEFAULTS, model=model or self.model)
        want.update(keys)
        found = [r for r in self.rows
                 if all(r.get(k, MISSING.get(k)) == v for k, v in want.items())]
        if len(found) > 1:  # a figure must name one row: a second match means a key is missing
            raise ValueError(f"{len(found)} rows match {want}")
        return found[0] if found else None

    def value(self, key, **keys):
        r = self.row(**keys)
        return None if r is None else r[key]


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def scale_times(run, **keys):
    """Time over the in-place scale's time on the same bytes: 100 / % of baseline."""
    return ratio(100.0, run.value("pct_of_baseline", **keys))


def pct(run, **keys):
    return run.value("pct_of_baseline", **keys)


def interleaved_over_half(run, tokens, settings):
    return ratio(run.value("us_per_call", tokens=tokens, pairs="interleaved", **settings),
                 run.value("us_per_call", tokens=tokens, **settings))


def two_threads_speedup(run, tokens, settings, max_threads, baseline=False):
    """One thread's time over two threads' (the arena max_threads names). With baseline, the same
    ratio for the in-place scale each of those two rows timed beside itself: where the machine
    could not run two threads at that moment (a vCPU the host took away) it stays near 1, and the
    rows' own speedup says nothing about posenc."""
    one = dict(tokens=tokens, **settings)
    two = dict(one, threads=2, max_threads=max_threads)
    if baseline:  # GB/s: two threads' over one thread's
        return ratio(run.value("baseline_gbps", **two), run.value("baseline_gbps", **one))
    return ratio(run.value("us_per_call", **one), run.value("us_per_call", **two))


def over_memcpy(run, tokens, settings):
    """Out-of-place GB/s over memcpy's on the same bytes (both count read + written bytes)."""
    return ratio(run.value("gbps", tokens=tokens, out_of_place=True, **settings),
                 run.value("gbps", tokens=tokens, out_of_place=True, source="baseline_memcpy"))


def half_type_speedup(run, dtype, tokens=4096):
    """Elements per second of a 16-bit type over f32 (table + kF32): the same element count."""
    return ratio(run.value("us_per_call", tokens=tokens, **TABLE_F32),
                 run.value("us_per_call", tokens=tokens, dtype=dtype, source="table",
                           arithmetic=""))


def sinusoidal_add(run):
    return pct(run, model="sinusoidal_add:d=768", source="table", pairs="concat_sin_cos",
               arithmetic="")


# (label, unit, target, function of a Run). Unit "x" prints a ratio, "%" a percentage.
FIGURES = [
    ("decode, default: time / in-place scale", "x", "<= 2.5",
     lambda r: scale_times(r, tokens=1, **DEFAULT_SETTINGS)),
    ("decode, table + kF32: time / in-place scale", "x", "<= 1.8",
     lambda r: scale_times(r, tokens=1, **TABLE_F32)),
    # The same steps through a RopeCall made once (posenc/rope.h): the per-call checks it skips.
    ("decode, default, RopeCall::Apply: time / in-place scale", "x", "-",
     lambda r: scale_times(r, tokens=1, prepared=True, **DEFAULT_SETTINGS)),
    ("decode, table + kF32, RopeCall::Apply: time / in-place scale", "x", "-",
     lambda r: scale_times(r, tokens=1, prepared=True, **TABLE_F32)),
] + [
    (f"decode, {name}: time / in-place scale", "x", "-",
     lambda r, k=keys: scale_times(r, tokens=1, **k))
    for name, keys in CHAIN
] + [
    (f"decode, floor: {name} alone: time / in-place scale", "x", "-",
     lambda r, k=keys: scale_times(r, tokens=1, **k))
    for name, keys in FLOORS
] + [
    ("16 tokens, default", "%", ">= 70", lambda r: pct(r, tokens=16, **DEFAULT_SETTINGS)),
    ("16 tokens, table + kF32", "%", ">= 85", lambda r: pct(r, tokens=16, **TABLE_F32)),
    ("512 tokens, default", "%", ">= 70", lambda r: pct(r, tokens=512, **DEFAULT_SETTINGS)),
    ("512 tokens, table + kF32", "%", ">= 85", lambda r: pct(r, tokens=512, **TABLE_F32)),
] + [
    (f"{tokens} tokens, {name}", "%", "-", lambda r, t=tokens, k=keys: pct(r, tokens=t, **k))
    for tokens in (16, 512, 4096)
    for name, keys in CHAIN
] + [
    (f"16 tokens, floor: {name} alone", "%", "-", lambda r, k=keys: pct(r, tokens=16, **k))
    for name, keys in FLOORS
] + [
    ("4096 tokens in place, default", "%", ">= 90",
     lambda r: pct(r, tokens=4096, **DEFAULT_SETTINGS)),
    ("4096 tokens in place, table + kF32", "%", ">= 90",
     lambda r: pct(r, tokens=4096, **TABLE_F32)),
    ("4096 tokens out of place / memcpy, default", "x", ">= 0.85",
     lambda r: over_memcpy(r, 4096, DEFAULT_SETTINGS)),
    ("4096 tokens out of place / memcpy, table + kF32", "x", ">= 0.85",
     lambda r: over_memcpy(r, 4096, TABLE_F32)),
] + [
    (f"interleaved / half time, {name}, {tokens} token{'s' if tokens > 1 else ''}", "x",
     "<= 1.15", lambda r, t=tokens, s=settings: interleaved_over_half(r, t, s))
    for name, settings in (("default", DEFAULT_SETTINGS), ("table + kF32", TABLE_F32))
    for tokens in (1, 512, 4096)
] + [
    # The same ratio of the arithmetic alone (bench/rotation_floor.h): the least it can be.
    (f"interleaved / half time, floor: {name} alone, 1 token", "x", "-",
     lambda r, k=keys: interleaved_over_half(r, 1, k))
    for name, keys in FLOORS[:2]
] + [
    # Each speedup, then the same two rows' in-place scale: whether the run could show one.
    (f"2 threads / 1 ({where}), {name}, {tokens} tokens{suffix}", "x",
     "-" if baseline else ">= 1.7" if tokens == 512 else ">= 1",
     lambda r, t=tokens, s=settings, m=max_threads, b=baseline: two_threads_speedup(r, t, s, m, b))
    for where, max_threads in (("caller's arena", 0), ("max_threads = 2", 2))
    for name, settings in (("default", DEFAULT_SETTINGS), ("table + kF32", TABLE_F32))
    for tokens in (16, 512)
    for baseline, suffix in ((False, ""), (True, ": their in-place scale"))
] + [
    ("bf16 / f32 elements per second, 4096 tokens", "x", ">= 1.7",
     lambda r: half_type_speedup(r, "bf16")),
    ("f16 / f32 elements per second, 4096 tokens", "x", ">= 1.8",
     lambda r: half_type_speedup(r, "f16")),
    ("sinusoidal add from a table", "%", ">= 85", sinusoidal_add),
] + [
    # What the default's computed rows cost: its time over the same arithmetic with a table's rows.
    (f"default / table + kF64 time, {tokens} token{'s' if tokens > 1 else ''}", "x", "-",
     lambda r, t=tokens: ratio(r.value("us_per_call", tokens=t, **DEFAULT_SETTINGS),
                               r.value("us_per_call", tokens=t, **TABLE_F64)))
    for tokens in (1, 16, 512)
] + [
    # What kFmaChain gains over the default's kF64 with the same rows.
    (f"kFmaChain on the fly / default time, {tokens} token{'s' if tokens > 1 else ''}", "x", "-",
     lambda r, t=tokens: ratio(r.value("us_per_call", tokens=t, **CHAIN[0][1]),
                               r.value("us_per_call", tokens=t, **DEFAULT_SETTINGS)))
    for tokens in (1, 16, 512)
]


def fmt(v, unit):
    if v is None:
        return "n/a"
    return f"{v:.1f}" if unit == "%" else f"{v:.2f}"


def summarise(runs):
    """Yields (label, unit, target, values per run, median or None, (min, max) or None)."""
    for label, unit, target, fn in FIGURES:
        values = [fn(r) for r in runs]
        present = [v for v in values if v is not None]
        median = statistics.median(present) if present else None
        spread = (min(present), max(present)) if present else None
        yield label, unit, target, values, median, spread


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="JSON files written by posenc bench --json")
    ap.add_argument("--model", default="llama3-8b", help="the model shape of the RoPE rows")
    args = ap.parse_args(argv)
    runs = []
    for path in args.runs:
        try:
            with open(path) as f:
                rows = json.load(f)
        except (OSError, ValueError) as e:
            print(f"bench_summary: {path}: {e}", file=sys.stderr)
            return 1
        if not any(r.get("model") == args.model for r in rows):
            print(f"bench_summary: {path} holds no {args.model} rows", file=sys.stderr)
            return 1
        runs.append(Run(rows, args.model))
    targets = sorted({r["target"] for run in runs for r in run.rows if r.get("target")})
    print(f"bench_summary: {len(runs)} run(s), {args.model}, target {'/'.join(targets)}")
    width = max(len(f[0]) for f in FIGURES)
    print(f"{'figure':<{width}}  {'median':>7} {'range':>13}  {'target':>9}  per run")
    try:
        figures = list(summarise(runs))
    except ValueError as e:
        print(f"bench_summary: {e}", file=sys.stderr)
        return 1
    for label, unit, target, values, median, spread in figures:
        rng = "" if spread is None else f"{fmt(spread[0], unit)}-{fmt(spread[1], unit)}"
        goal = target if target == "-" else target + (" %" if unit == "%" else " x")
        print(f"{label:<{width}}  {fmt(median, unit):>7} {rng:>13}  {goal:>9}  "
              + " ".join(fmt(v, unit) for v in values))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
