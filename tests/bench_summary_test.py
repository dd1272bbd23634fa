#!/usr/bin/python3
"""Tests tools/bench_summary.py: each figure divides the rows it names, medians and ranges span the
runs, a missing row is n/a, an ambiguous one an error; then a real `posenc bench --quick --json`
run (tests/data/bench_quick_zen4.json, Zen 4 VM, 2026-12-05), its expected figures worked out by
hand from the file's numbers.

Usage: tests/bench_summary_test.py SOURCE_DIR. Prints "bench_summary_test: N checks passed".
"""
import importlib.util
import io
import json
import os
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout

CHECKS = 0


def check(cond, what):
    global CHECKS
    if not cond:
        raise AssertionError(what)
    CHECKS += 1


def close(a, b, what, tol=1e-9):
    check(a is not None and abs(a - b) <= tol * max(1.0, abs(b)), f"{what}: {a} != {b}")


def load_tool(source_dir):
    spec = importlib.util.spec_from_file_location(
        "bench_summary", os.path.join(source_dir, "tools", "bench_summary.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def row(tokens, source, arithmetic="f64", us=1.0, pct=50.0, gbps=10.0, **keys):
    r = {"model": "llama3-8b", "tokens": tokens, "dtype": "f32", "pairs": "half",
         "source": source, "arithmetic": arithmetic, "target": "AVX2", "threads": 1,
         "max_threads": 0, "out_of_place": False, "us_per_call": us, "pct_of_baseline": pct,
         "gbps": gbps, "baseline_gbps": 100.0}
    r.update(keys)
    return r


def figure(tool, runs, label):
    for lab, _, _, values, median, spread in tool.summarise(runs):
        if lab == label:
            return values, median, spread
    raise AssertionError(f"no figure {label!r}")


def synthetic(tool):
    rows = [
        row(1, "on_the_fly", pct=25.0),  # time 4x the scale's
        row(1, "table", "f32", pct=62.5),  # 1.6x
        # The same steps through a RopeCall: their own figures, never taken for ApplyRope's rows.
        row(1, "on_the_fly", pct=40.0, prepared=True),  # 2.5x
        row(1, "table", "f32", pct=80.0, prepared=True),  # 1.25x
        # The arithmetic alone (bench/rotation_floor.h): own figures, never a call's.
        row(1, "floor", "f64", pct=20.0),  # 5x
        row(1, "floor", "f32", pct=80.0, us=2.0),  # 1.25x
        row(1, "floor", "f32", us=2.5, pairs="interleaved"),
        row(16, "floor", "fma_chain", pct=90.0),
        row(512, "on_the_fly", us=10.0),
        row(512, "on_the_fly", us=12.0, pairs="interleaved"),
        row(512, "on_the_fly", us=4.0, threads=2),  # the caller's 2-thread arena
        # The scale beside the table + kF32 rows of one and two threads (max_threads = 2).
        row(512, "table", "f32"),  # its in-place scale at 100 GB/s (row's default)
        row(512, "table", "f32", threads=2, max_threads=2, baseline_gbps=180.0),
        row(512, "table", "f64", us=8.0),
        row(4096, "table", "f32", us=30.0),
        row(4096, "table", "", us=10.0, dtype="bf16"),
        row(4096, "on_the_fly", gbps=20.0, out_of_place=True),
        row(4096, "baseline_memcpy", "", gbps=25.0, out_of_place=True),
        row(4096, "table", "", pct=91.0, model="sinusoidal_add:d=768", pairs="concat_sin_cos"),
    ]
    run = tool.Run(rows, "llama3-8b")
    close(figure(tool, [run], "decode, default: time / in-place scale")[1], 4.0, "decode default")
    close(figure(tool, [run], "decode, table + kF32: time / in-place scale")[1], 1.6,
          "decode table")
    close(figure(tool, [run], "decode, default, RopeCall::Apply: time / in-place scale")[1], 2.5,
          "decode default, prepared")
    close(figure(tool, [run], "decode, table + kF32, RopeCall::Apply: time / in-place scale")[1],
          1.25, "decode table, prepared")
    close(figure(tool, [run], "decode, floor: kF64 alone: time / in-place scale")[1], 5.0,
          "decode kF64 floor")
    close(figure(tool, [run], "decode, floor: kF32 alone: time / in-place scale")[1], 1.25,
          "decode kF32 floor")
    close(figure(tool, [run], "16 tokens, floor: FMA chain alone")[1], 90.0,
          "16 tokens chain floor")
    close(figure(tool, [run], "interleaved / half time, floor: kF32 alone, 1 token")[1], 1.25,
          "interleaved floor")
    values, _, _ = figure(tool, [run], "16 tokens, floor: kF64 alone")
    check(values == [None], "missing floor row is n/a")
    close(figure(tool, [run], "interleaved / half time, default, 512 tokens")[1], 1.2,
          "interleaved")
    close(figure(tool, [run], "2 threads / 1 (caller's arena), default, 512 tokens")[1], 2.5,
          "threads")
    close(figure(tool, [run],
                 "2 threads / 1 (max_threads = 2), table + kF32, 512 tokens: their in-place scale")[1],
          1.8, "threads' baseline")
    values, _, _ = figure(tool, [run],
                          "2 threads / 1 (caller's arena), table + kF32, 512 tokens: their in-place scale")
    check(values == [None], "missing threads' baseline is n/a")
    close(figure(tool, [run], "4096 tokens out of place / memcpy, default")[1], 0.8, "memcpy")
    close(figure(tool, [run], "bf16 / f32 elements per second, 4096 tokens")[1], 3.0, "bf16")
    close(figure(tool, [run], "sinusoidal add from a table")[1], 91.0, "sinusoidal add")
    close(figure(tool, [run], "default / table + kF64 time, 512 tokens")[1], 1.25, "rows' cost")
    # Rows the run lacks: no value, no median.
    values, median, spread = figure(tool, [run],
                                    "2 threads / 1 (max_threads = 2), default, 512 tokens")
    check(values == [None] and median is None and spread is None, "missing row is n/a")
    values, _, _ = figure(tool, [run], "f16 / f32 elements per second, 4096 tokens")
    check(values == [None], "missing f16 row is n/a")

    # Three runs: the median and range of the values present; a run without the rows is skipped.
    def run_with(pct):
        return tool.Run([row(16, "on_the_fly", pct=pct)], "llama3-8b")
    runs = [run_with(30.0), run_with(10.0), tool.Run([], "llama3-8b"), run_with(11.0)]
    values, median, spread = figure(tool, runs, "16 tokens, default")
    check(values == [30.0, 10.0, None, 11.0], f"values per run: {values}")
    close(median, 11.0, "median")  # not the mean, 17
    check(spread == (10.0, 30.0), f"range: {spread}")

    # Two rows matching one figure's keys: an error, not a silent pick.
    dup = tool.Run([row(16, "on_the_fly"), row(16, "on_the_fly", us=2.0)], "llama3-8b")
    try:
        figure(tool, [dup], "16 tokens, default")
        check(False, "ambiguous rows were accepted")
    except ValueError:
        check(True, "ambiguous rows rejected")


def real_run(tool, source_dir):
    path = os.path.join(source_dir, "tests", "data", "bench_quick_zen4.json")
    with open(path) as f:
        run = tool.Run(json.load(f), "llama3-8b")
    # The numbers below are the file's own (us_per_call, pct_of_baseline, gbps), divided by hand.
    close(figure(tool, [run], "decode, default: time / in-place scale")[1], 100 / 27.8462, "decode")
    close(figure(tool, [run], "512 tokens, default")[1], 34.1517, "512 default")
    close(figure(tool, [run], "interleaved / half time, default, 512 tokens")[1],
          579.659 / 448.402, "interleaved 512")
    close(figure(tool, [run], "interleaved / half time, default, 1 token")[1],
          1.23751 / 1.02695, "interleaved decode")
    close(figure(tool, [run], "bf16 / f32 elements per second, 4096 tokens")[1], 5130.1 / 1717.86,
          "bf16 4096")
    close(figure(tool, [run], "f16 / f32 elements per second, 4096 tokens")[1], 5130.1 / 1937.12,
          "f16 4096")
    close(figure(tool, [run],
                 "2 threads / 1 (caller's arena), table + kF32, 512 tokens: their in-place scale")[1],
          220.99 / 138.184, "threads' baseline 512")
    # Every figure is present in a quick run: the suite and the tool agree on the rows' keys. The
    # file predates the RopeCall rows (2026-12-07), and its rows lack the "prepared" key: they
    # count as ApplyRope rows (the tool's MISSING), which the figures above rely on. It also
    # predates the floor rows (2026-12-07, bench/rotation_floor.h) and the kFmaChain rows
    # (2026-12-07).
    newer = {"decode, default, RopeCall::Apply: time / in-place scale",
             "decode, table + kF32, RopeCall::Apply: time / in-place scale"}
    newer |= {lab for lab, _, _, _ in tool.FIGURES if "floor: " in lab or "kFmaChain" in lab}
    missing = [lab for lab, _, _, values, _, _ in tool.summarise([run])
               if values == [None] and lab not in newer]
    check(not missing, f"figures without rows in a quick run: {missing}")

    # The command line: exit 0 and one line per figure; a file without the model's rows: exit 1.
    out = io.StringIO()
    with redirect_stdout(out):
        rc = tool.main([path, path])
    lines = out.getvalue().splitlines()
    check(rc == 0 and lines[0] == "bench_summary: 2 run(s), llama3-8b, target AVX3", lines[:1])
    check(len(lines) == 2 + len(tool.FIGURES), f"{len(lines)} lines")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump([row(1, "on_the_fly", model="other")], f)
    try:
        err = io.StringIO()
        with redirect_stdout(io.StringIO()), redirect_stderr(err):
            rc = tool.main([f.name])
        check(rc == 1 and "holds no llama3-8b rows" in err.getvalue(), "no rows: exit 1")
    finally:
        os.unlink(f.name)
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        rc = tool.main([path, f.name])  # deleted above
    check(rc == 1 and f.name in err.getvalue(), "unreadable file: exit 1")


def main(argv):
    tool = load_tool(argv[0])
    synthetic(tool)
    real_run(tool, argv[0])
    print(f"bench_summary_test: {CHECKS} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
