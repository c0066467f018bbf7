"""anchor_rounds.py --mgen CSV[,CSV...] --anchor CSV[,CSV...] [--ms M,...] [--bar X] -- an
anchor's time over marlin-gen's, from rounds that ran the two one after the other in one call
(bench/run_anchor_rounds_device.sh): round i pairs the i-th bench_gemm CSV with the i-th anchor
CSV (the anchors' format: system,act,fmt,M,K,N,us,cublas_us, e.g. CUTLASS's cutlass_mixed.csv).

Why rounds: on an H100 a launch of 0.5-6 ms at M >= 1024 runs at whatever clock the 700 W cap
leaves (1.07-1.98 GHz, bench/notes/v69.md), so one pass of each program can put a point 10-15%
either way; the same point's ratio in one round is the measurement, its median over the rounds
the figure.

Per point (act, fmt, M, K, N): in each round the fastest marlin-gen row (one row per point
without --all-kernels) and the anchor's row, ratio = anchor us / marlin-gen us (> 1: marlin-gen
is faster); the point's figure is the median over the rounds that have it in both. Printed: per
act, format and M the geometric mean of the point figures (with the point count), the same per
round (the spread is the noise), and the points furthest below 1.

  --ms M,...   only these M (e.g. #51's 512,1024,2048,4096)
  --system S   the anchor CSV's rows of system S (needed where a CSV holds several, as all.csv)
  --bar X      exit 1 where an M's geomean is below X (e.g. 1.05), naming each such M

Exit 0, 1 (--bar missed), 2 (a CSV that cannot be read, a column missing, rounds of unequal
count, no point in common). Standard library only; reads .csv or .csv.xz."""
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from readme_figures import BadInput, gmean, read_csv, require_columns  # noqa: E402  (beside this file)

ACTS = {"f16": "f16", "fp16": "f16", "bf16": "bf16"}  # the anchors spell FP16 fp16


def need(path, rows, cols):
    if not rows:
        raise BadInput("%s: no rows" % path)
    require_columns(path, rows, cols)


def time_of(path, row, col):
    try:
        x = float(row[col])
        m, k, n = int(row["M"]), int(row["K"]), int(row["N"])
    except (TypeError, ValueError):
        raise BadInput("%s:%d: %s, M, K or N is not a number" % (path, row["_line"], col))
    if not (x > 0 and m > 0 and k > 0 and n > 0):
        raise BadInput("%s:%d: %s, M, K or N is not positive" % (path, row["_line"], col))
    act = ACTS.get(row["act"])
    if act is None:
        raise BadInput("%s:%d: act %r is none of f16, fp16, bf16" % (path, row["_line"], row["act"]))
    return (act, row["fmt"], m, k, n), x


def mgen_points(path, ms):
    rows = read_csv(path)
    need(path, rows, ("act", "fmt", "M", "K", "N", "mgen_us"))
    best = {}
    for r in rows:
        key, us = time_of(path, r, "mgen_us")
        if ms and key[2] not in ms:
            continue
        best[key] = min(us, best.get(key, us))  # --all-kernels: the fastest kernel
    return best


def anchor_points(path, ms, system):
    rows = read_csv(path)
    need(path, rows, ("system", "act", "fmt", "M", "K", "N", "us"))
    systems = sorted({r["system"] for r in rows})
    if system is None and len(systems) > 1:
        raise BadInput("%s: rows of %s: name one with --system" % (path, ", ".join(systems)))
    out = {}
    for r in rows:
        if system is not None and r["system"] != system:
            continue
        key, us = time_of(path, r, "us")
        if ms and key[2] not in ms:
            continue
        if key in out:
            raise BadInput("%s:%d: a second row of point %s" % (path, r["_line"], key))
        out[key] = us
    if not out:
        raise BadInput("%s: no row of system %s" % (path, system))
    return out


def parse(argv):
    opts = {"mgen": None, "anchor": None, "ms": None, "system": None, "bar": None}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a not in ("--mgen", "--anchor", "--ms", "--system", "--bar"):
            raise BadInput("unknown argument %s" % a)
        if i + 1 >= len(argv):
            raise BadInput("%s needs a value" % a)
        v = argv[i + 1]
        i += 2
        if a in ("--mgen", "--anchor"):
            opts[a[2:]] = [p for p in v.split(",") if p]
        elif a == "--ms":
            try:
                opts["ms"] = {int(x) for x in v.split(",")}
            except ValueError:
                raise BadInput("--ms %s: not a list of integers" % v)
        elif a == "--system":
            opts["system"] = v
        else:
            try:
                opts["bar"] = float(v)
            except ValueError:
                raise BadInput("--bar %s: not a number" % v)
            if not opts["bar"] > 0:
                raise BadInput("--bar %s: not positive" % v)
    if not opts["mgen"] or not opts["anchor"]:
        raise BadInput("usage: anchor_rounds.py --mgen CSV[,CSV...] --anchor CSV[,CSV...] "
                       "[--ms M,...] [--system S] [--bar X]")
    if len(opts["mgen"]) != len(opts["anchor"]):
        raise BadInput("%d marlin-gen CSVs but %d anchor CSVs: one of each per round"
                       % (len(opts["mgen"]), len(opts["anchor"])))
    return opts


def main(argv):
    o = parse(argv)
    per_point = defaultdict(list)   # point -> [ratio per round that has it]
    per_round = []                  # [{point: ratio}]
    for mp, ap in zip(o["mgen"], o["anchor"]):
        mg, an = mgen_points(mp, o["ms"]), anchor_points(ap, o["ms"], o["system"])
        ratios = {k: an[k] / mg[k] for k in mg if k in an}
        per_round.append(ratios)
        for k, r in ratios.items():
            per_point[k].append(r)
    if not per_point:
        raise BadInput("no point is in both a marlin-gen and an anchor CSV of the same round")
    figure = {k: statistics.median(v) for k, v in per_point.items()}
    groups = defaultdict(list)
    for k in figure:
        groups[k[:3]].append(k)
    n = len(per_round)
    print("anchor time / marlin-gen time (> 1: marlin-gen faster), median of %d round%s per "
          "point, geomean over shapes" % (n, "" if n == 1 else "s"))
    print("| act | format | M | geomean (points) | per round |")
    print("|---|---|---:|---:|---|")
    below = []
    for g in sorted(groups):
        keys = groups[g]
        gm = gmean([figure[k] for k in keys])
        rounds = []
        for r in per_round:
            have = [r[k] for k in keys if k in r]
            rounds.append("%.3f" % gmean(have) if have else "-")
        print("| %s | %s | %d | %.3f (%d) | %s |" % (g[0], g[1], g[2], gm, len(keys), " ".join(rounds)))
        if o["bar"] is not None and gm < o["bar"]:
            below.append("%s %s M %d: %.3f" % (g[0], g[1], g[2], gm))
    worst = sorted(figure, key=lambda k: figure[k])[:5]
    print("furthest below: " + "; ".join(
        "%s %s M %d (K %d, N %d) %.3f (%s)" % (k[0], k[1], k[2], k[3], k[4], figure[k],
                                              " ".join("%.3f" % x for x in per_point[k]))
        for k in worst))
    if below:
        print("below the bar %.3f: %s" % (o["bar"], "; ".join(below)))
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BadInput as e:
        sys.stderr.write("anchor_rounds.py: %s\n" % e)
        sys.exit(2)
