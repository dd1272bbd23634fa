#!/usr/bin/python3
"""Roofline picture of posenc benchmark rows: achieved GB/s against working-set size.

Usage: tools/roofline.py BENCH.json OUT.png [--threads N] [--model NAME] [--dtype T]

BENCH.json is what `posenc bench --json FILE` writes. One solid line per (target, arithmetic,
source) for the kernel, one dotted line per arithmetic for the rotation floors (source "floor":
the arithmetic alone, not posenc; bench/rotation_floor.h), and the in-place bandwidth baseline
measured in the same run as a dashed black line (the memory roofline at each size). Uses Debian's
python3-matplotlib.
"""
import argparse
import collections
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench_json")
    ap.add_argument("out_png")
    ap.add_argument("--threads", type=int, default=1, help="rows with this thread count")
    ap.add_argument("--model", default="llama3-8b", help="rows of this model shape")
    ap.add_argument("--dtype", default="f32", help="rows of this dtype (f32, bf16, f16)")
    ap.add_argument("--pairs", default="half", help="rows of this pair layout (half, interleaved)")
    args = ap.parse_args(argv)
    with open(args.bench_json) as f:
        rows = [r for r in json.load(f)
                if r.get("threads") == args.threads and r.get("model") == args.model
                and r.get("dtype") == args.dtype and r.get("max_threads", 0) == 0
                and not r.get("prepared", False)  # RopeCall rows: the same bytes as ApplyRope's
                and (not r.get("out_of_place", False) or r["source"].startswith("baseline"))
                and (r.get("pairs") == args.pairs or r["source"].startswith("baseline"))]
    if not rows:
        print(f"roofline: no rows with threads={args.threads}, model={args.model}, "
              f"dtype={args.dtype}, pairs={args.pairs} in {args.bench_json}", file=sys.stderr)
        return 2
    lines = collections.defaultdict(list)
    floors = collections.defaultdict(list)
    baseline = {}
    for r in rows:
        if r["source"].startswith("baseline"):
            continue
        key = f'{r["target"]} {r["arithmetic"]} {r["source"]}'
        (floors if r["source"] == "floor" else lines)[key].append((r["bytes"], r["gbps"]))
        baseline[r["bytes"]] = max(baseline.get(r["bytes"], 0.0), r["baseline_gbps"])
    fig, ax = plt.subplots(figsize=(8, 5))
    for key, points in sorted(lines.items()):
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=key)
    for key, points in sorted(floors.items()):
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], ":", marker=".",
                label=key + " (arithmetic alone)")
    b = sorted(baseline.items())
    ax.plot([p[0] for p in b], [p[1] for p in b], "k--", marker="s",
            label="in-place bandwidth baseline (same run)")
    ax.set_xscale("log")
    ax.set_xlabel("working set (bytes read + written per call)")
    ax.set_ylabel("GB/s")
    ax.set_title(f"posenc RoPE ({args.model}, {args.dtype}) vs memory bandwidth, "
                 f"{args.threads} thread(s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(args.out_png, dpi=110)
    print(f"roofline: wrote {args.out_png} ({len(lines)} kernel lines, {len(floors)} floor lines, "
          f"{len(b)} baseline points)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
