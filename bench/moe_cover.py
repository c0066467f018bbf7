#!/usr/bin/env python3
"""moe_cover.py -- the moe op's default kernels from a sweep (bench/run_moe_sweep_device.sh).

  python3 bench/moe_cover.py [--tol 0.03] [--out templates/mma/op_defaults.lua]
                             [--out-wgmma templates/wgmma/op_defaults.lua] SWEEP.csv[.xz] ...

Reads bench_moe rows (scenario,m,part,kernel,us,graph_us,...): the sweep's rows (graph_us
"-", one per kernel, point and GEMM) and the default choice's (graph_us timed). A point is
(scenario, m, part), its times those of the last file that measured it (a re-sweep replaces
an earlier run rather than mixing with it); per key (the kernel name's act_wfmt_gN) it picks, as
bench/sweep_select.lua does for the dense op:
  1. a kernel covers a point when it runs within --tol of the point's best;
  2. greedy set cover (most uncovered points, then the smaller sum of time over best, then the
     name), three times, each seeded with the one before: over the sm80 kernels whose tile_k
     divides the K padding (MGEN_LAYOUT_K_PAD, runtime/src/formats/layout.h: they run every
     k) and whose tile_n is the layout's n step (MGEN_LAYOUT_DIM, 64: they run every n of the
     shape contract, gpt-oss's 2880 among them) against the best of them, so that every shape
     has a kernel; then over the mma family's kernels against their best, so that the GPUs
     without wgmma (sm_80, sm_89) keep the mma tiles a wgmma tile beats on the swept GPU; then
     over all kernels against the overall best, so a wgmma tile enters only where it gains
     more than tol over the mma cover.
Prints per key what each pick covers, and the default choice's time over the best of the
cover at every point (what the cost model loses by its pick; it needs the set built).
With --out, writes the picks as the mma family's op_defaults.lua (op -> key -> kernel names,
templates/default_set.lua's form), keeping the keys the sweep did not measure as they are in
the file there; the wgmma family's picks (sm90a names) go to --out-wgmma's file the same way
(a cover with wgmma picks and --out but no --out-wgmma is refused: a key's picks are written
whole or not at all).
"""
import argparse
import csv
import lzma
import math
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
# the mma family's names (..._s4_w8_sw...) and the wgmma family's (sm90a, ..._wg2_s8)
NAME = re.compile(r"^mgen_(sm\d+a?)_moe_((?:f16|bf16)_[a-z0-9]+_g[a-z0-9]+)_(\d+)x(\d+)x(\d+)_"
                  r"(?:s\d+_w\d+_|wg\d+_s\d+$)")
FAMILIES = ("mma", "wgmma")


def family(name):
    """The family of a moe kernel name: sm90a code is the wgmma family's."""
    return "wgmma" if NAME.match(name).group(1) == "sm90a" else "mma"


def layout_constants(*names):
    with open(os.path.join(ROOT, "runtime/src/formats/layout.h")) as f:
        text = f.read()
    values = []
    for name in names:
        m = re.search(r"#define " + name + r" (\d+)", text)
        if not m:
            sys.exit(f"moe_cover: no {name} in runtime/src/formats/layout.h")
        values.append(int(m.group(1)))
    return values


def read(paths):
    """sweep[key][(point)][kernel] = us; choice[key][point] = (kernel, us)."""
    sweep = defaultdict(lambda: defaultdict(dict))
    choice = defaultdict(dict)
    seen = {}  # point -> the file its times come from: a later sweep replaces an earlier one's
    for path in paths:
        # the committed sweeps are xz-compressed (bench/results/moe-sweep-*.csv.xz)
        opener = lzma.open if path.endswith(".xz") else open
        with opener(path, "rt", newline="") as f:
            for row in csv.DictReader(f):
                if row.get("part") not in ("gate_up", "down"):
                    continue
                m = NAME.match(row["kernel"])
                if not m:
                    sys.exit(f"moe_cover: {path}: not a moe kernel name: {row['kernel']}")
                us = float(row["us"])
                if not math.isfinite(us) or us <= 0:
                    sys.exit(f"moe_cover: {path}: time {row['us']} of {row['kernel']}")
                point = (row["scenario"], int(row["m"]), row["part"])
                if seen.setdefault(point, path) != path:
                    seen[point] = path
                    sweep[m.group(2)].pop(point, None)
                    choice[m.group(2)].pop(point, None)
                if row["graph_us"] == "-":
                    sweep[m.group(2)][point][row["kernel"]] = us
                else:
                    choice[m.group(2)][point] = (row["kernel"], us)
    return sweep, choice


def cover(points, allowed, tol, seed):
    """Greedy cover of points (point -> {kernel: us}) by the allowed kernels, seeded."""
    best = {p: min((us for k, us in t.items() if allowed(k)), default=None) for p, t in points.items()}
    best = {p: b for p, b in best.items() if b is not None}
    covers = defaultdict(set)
    ratio = defaultdict(float)
    for p, t in points.items():
        if p not in best:
            continue
        for k, us in t.items():
            if allowed(k) and us <= best[p] * (1 + tol):
                covers[k].add(p)
            if allowed(k):
                ratio[k] += us / best[p]
    picks = list(seed)
    left = set(best) - set().union(*(covers[k] for k in picks)) if picks else set(best)
    while left:
        k = min((k for k in covers if covers[k] & left),
                key=lambda k: (-len(covers[k] & left), ratio[k], k))
        picks.append(k)
        print(f"  {k}: {len(covers[k] & left)} new of {len(covers[k])}", file=sys.stderr)
        left -= covers[k]
    return picks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tol", type=float, default=0.03)
    ap.add_argument("--out")
    ap.add_argument("--out-wgmma")
    ap.add_argument("csv", nargs="+")
    args = ap.parse_args()
    pad, dim = layout_constants("MGEN_LAYOUT_K_PAD", "MGEN_LAYOUT_DIM")
    sweep, choice = read(args.csv)
    if not sweep:
        sys.exit("moe_cover: no sweep rows (graph_us '-') in the input")
    picks = {}
    for key in sorted(sweep):
        points = sweep[key]
        print(f"{key}: {len(points)} points, {len({k for t in points.values() for k in t})} kernels",
              file=sys.stderr)

        def every_shape(k):
            m = NAME.match(k)
            return m.group(1) == "sm80" and pad % int(m.group(5)) == 0 and int(m.group(4)) == dim
        first = cover(points, every_shape, args.tol, [])
        mma = cover(points, lambda k: family(k) == "mma", args.tol, first)
        picks[key] = cover(points, lambda k: True, args.tol, mma)
        chosen = set(picks[key])
        print(f"{key}: default choice over the best of the cover, per point", file=sys.stderr)
        for p in sorted(points):
            b = min((us for k, us in points[p].items() if k in chosen), default=None)
            c = choice[key].get(p)
            if b and c:
                print(f"  {p[0]} m={p[1]} {p[2]}: {c[1] / b:.3f} ({c[0]})", file=sys.stderr)
    for key, names in picks.items():
        print(f"{key}: " + ", ".join(names))
    if args.out:
        split = {f: {key: [n for n in names if family(n) == f] for key, names in picks.items()}
                 for f in FAMILIES}
        if any(split["wgmma"].values()) and not args.out_wgmma:
            sys.exit("moe_cover: the cover picks wgmma kernels: --out-wgmma PATH names their file")
        write(args.out, "mma", split["mma"], args.csv)
        if args.out_wgmma:
            write(args.out_wgmma, "wgmma", split["wgmma"], args.csv)


def write(path, fam, measured, sources):
    """The family's file: the keys the sweep measured get their picks of this family (a key with
    none of them leaves the file), the others stay as they were."""
    picks = {key: names for key, names in measured.items() if names}
    old = {}
    if os.path.exists(path):
        text = open(path).read()
        for key, body in re.findall(r'\["([^"]+)"\] = \{([^}]*)\}', text):
            old[key] = re.findall(r'"([^"]+)"', body)
    keys = sorted((set(old) - set(measured)) | set(picks))
    lines = [
        f"-- templates/{fam}/op_defaults.lua -- the {fam} family's kernels of operations beyond dense",
        "-- (templates/formats.lua M.ops) in the default build: per op and key, the op's kernel names in",
        "-- default_rank order (templates/default_set.lua).",
        "-- Written by bench/moe_cover.py from "
        + ", ".join(re.sub(r"\.xz$", "", os.path.basename(s)) for s in sources) + ":",
        "-- the measured cover of " + ", ".join(sorted(picks)) + ";",
    ]
    kept = sorted(set(old) - set(measured))
    if kept:
        lines.append("-- as they were (hand picked, not measured): " + ", ".join(kept) + ";")
    lines += [
        "-- u4's moe kernels come as u4b8's format twins.",
        "return {",
        "  moe = {",
    ]
    for key in keys:
        names = picks[key] if key in picks else old[key]
        lines.append(f'    ["{key}"] = {{')
        lines += [f'      "{n}",' for n in names]
        lines.append("    },")
    lines += ["  },", "}", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    print(f"moe_cover: wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
