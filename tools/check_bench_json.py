#!/usr/bin/python3
"""Checks the rows `posenc bench --json FILE` writes: every row carries the documented keys, and
"default": true marks exactly the RoPE rows whose call uses the API's default settings
(ApplyRope with RopeParams{}: on-the-fly cos/sin, kF64 for f32, the model's pair layout,
exec.max_threads = 0; a prepared RopeCall's rows are not).

Usage: tools/check_bench_json.py BENCH.json [--model-pairs llama3-8b=half ...]
Prints "check_bench_json: N rows, D default" and exits 0, or names the first bad row and exits 1.
"""
import argparse
import json
import sys

KEYS = ("model", "tokens", "dtype", "pairs", "source", "arithmetic", "target", "threads",
        "max_threads", "default", "out_of_place", "prepared", "bytes", "gbps", "baseline_gbps",
        "pct_of_baseline", "x_reference", "us_per_call")


def expected_default(row, model_pairs):
    if row["model"] not in model_pairs:  # sinusoidal rows and shapes not given: never default
        return False
    return (row["source"] == "on_the_fly" and row["pairs"] == model_pairs[row["model"]]
            and (row["dtype"] != "f32" or row["arithmetic"] == "f64")
            and row["max_threads"] == 0 and not row["prepared"])


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench_json")
    ap.add_argument("--model-pairs", nargs="*", default=["llama3-8b=half"],
                    help="MODEL=PAIRS: the pair layout each model shape uses itself")
    args = ap.parse_args(argv)
    model_pairs = dict(mp.split("=", 1) for mp in args.model_pairs)
    with open(args.bench_json) as f:
        rows = json.load(f)
    defaults = 0
    for r in rows:
        missing = [k for k in KEYS if k not in r]
        if missing:
            print(f"check_bench_json: row {r} lacks {missing}", file=sys.stderr)
            return 1
        if r["default"] is not expected_default(r, model_pairs):
            print(f"check_bench_json: row {r} has default = {r['default']}", file=sys.stderr)
            return 1
        defaults += r["default"]
    if defaults == 0 or not any(r["default"] and r["tokens"] == 1 for r in rows):
        print("check_bench_json: no default row (or none for a decode step)", file=sys.stderr)
        return 1
    print(f"check_bench_json: {len(rows)} rows, {defaults} default")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
