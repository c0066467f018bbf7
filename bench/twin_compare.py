"""twin_compare.py CSV [--base FMT] [--twin FMT] [--time COL] [--bar X] -- one weight format's
time over its twin's, from one bench_gemm CSV (both formats timed in the same run): #48's bar is
u4 (zero points) at u4b8's speed, within 3% by time in every M bucket.

For each point (act, group, M, K, N) the fastest row of each format (one row per point without
--all-kernels; the best kernel with it), then per (act, group, M bucket) the geometric mean of
twin / base time over the points both formats have: > 1 means the twin is slower. Groups pair by
the CSV's fmt suffix (u4_g128 with u4b8_g128, u4_gc with u4b8_gc); buckets are the README's
(1-16, 32-128, 256, 512-4096). Prints a Markdown table and, below it, the kernel tiles whose
points are slowest (the twin's kernel name without its activation and format, geomean per
tile), which is where to look first.

  --base FMT   the reference format (default u4b8)     --twin FMT  the other (default u4)
  --time COL   mgen_us (default, CUDA events) or mgen_graph_us (graph replay; rows without a
               replay are left out)
  --bar X      exit 1 where a bucket's geomean is above X (e.g. 1.03), naming each such bucket

Exit 0, 1 (--bar missed), 2 (a CSV that cannot be read, a column missing, no point in common).
Standard library only; reads .csv or .csv.xz through readme_figures.py's reader."""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from readme_figures import BadInput, gmean, read_csv, require_columns  # noqa: E402  (beside this file)

BUCKETS = [("1-16", 1, 16), ("32-128", 32, 128), ("256", 256, 256), ("512-4096", 512, 4096)]


def bucket_of(m):
    for name, lo, hi in BUCKETS:
        if lo <= m <= hi:
            return name
    return None


def best_times(path, rows, col):
    """{(act, fmt, M, K, N): (time, kernel)}: the fastest row of each point."""
    best = {}
    require_columns(path, rows, ("act", "fmt", "kernel", "M", "K", "N", col))
    for r in rows:
        v = r.get(col)
        if col != "mgen_us" and v == "":
            continue  # (a replay column left empty where that M was not replayed)
        try:
            t, m = float(v), int(r["M"])
        except (TypeError, ValueError, KeyError):
            raise BadInput("%s:%d: %s or M is not a number" % (path, r["_line"], col))
        if col != "mgen_us" and t == -1:
            continue  # (bench_gemm writes -1 where it did not replay that M)
        if not t > 0:
            raise BadInput("%s:%d: %s is %s, not a time" % (path, r["_line"], col, v))
        key = (r["act"], r["fmt"], m, r["K"], r["N"])
        if key not in best or t < best[key][0]:
            best[key] = (t, r["kernel"])
    return best


def tile_of(kernel):
    """mgen_sm90a_bf16_u4_g128_128x128x64_wg2_s6 -> sm90a 128x128x64_wg2_s6 (act, format and
    group are the table's rows already)."""
    parts = kernel.split("_")
    return parts[1] + " " + "_".join(parts[5:]) if len(parts) > 5 and parts[0] == "mgen" else kernel


def compare(path, base, twin, col):
    best = best_times(path, read_csv(path), col)
    ratios = defaultdict(list)  # (act, group, bucket) -> [twin / base]
    tiles = defaultdict(list)   # (act, tile) -> [twin / base]
    for (act, fmt, m, k, n), (t, kernel) in best.items():
        if not fmt.startswith(twin + "_"):
            continue
        group = fmt[len(twin) + 1:]
        b = best.get((act, base + "_" + group, m, k, n))
        bucket = bucket_of(m)
        if b is None or bucket is None:
            continue
        ratios[(act, group, bucket)].append(t / b[0])
        tiles[(act, tile_of(kernel))].append(t / b[0])
    if not ratios:
        raise BadInput("%s: no point has both %s and %s rows" % (path, base, twin))
    return ratios, tiles


def main(argv):
    args = {"--base": "u4b8", "--twin": "u4", "--time": "mgen_us", "--bar": None}
    paths = []
    i = 0
    while i < len(argv):
        if argv[i] in args:
            if i + 1 == len(argv):
                print("twin_compare.py: %s needs a value" % argv[i], file=sys.stderr)
                return 2
            args[argv[i]] = argv[i + 1]
            i += 2
        elif argv[i].startswith("-"):
            print("twin_compare.py: unknown option %s" % argv[i], file=sys.stderr)
            return 2
        else:
            paths.append(argv[i])
            i += 1
    bar = None
    if args["--bar"] is not None:
        try:
            bar = float(args["--bar"])
        except ValueError:
            bar = -1.0
        if not bar > 0:
            print("twin_compare.py: --bar takes a positive number", file=sys.stderr)
            return 2
    if len(paths) != 1:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    base, twin, col = args["--base"], args["--twin"], args["--time"]
    try:
        ratios, tiles = compare(paths[0], base, twin, col)
    except BadInput as e:
        print("twin_compare.py: %s" % e, file=sys.stderr)
        return 2
    print("%s / %s time (%s), geomean per M bucket (points)\n" % (twin, base, col))
    print("| act | group | " + " | ".join(b[0] for b in BUCKETS) + " |")
    print("|---|---|" + "---:|" * len(BUCKETS))
    missed = []
    for act, group in sorted({(a, g) for a, g, _ in ratios}):
        cells = []
        for name, _, _ in BUCKETS:
            xs = ratios.get((act, group, name))
            if not xs:
                cells.append("-")
                continue
            g = gmean(xs)
            cells.append("%.3f (%d)" % (g, len(xs)))
            if bar is not None and g > bar:
                missed.append("%s %s M %s: %.3f" % (act, group, name, g))
        print("| %s | %s | %s |" % (act, group, " | ".join(cells)))
    print("\nslowest tiles (%s's kernel, geomean over its points):" % twin)
    worst = sorted(((gmean(v), len(v), act, tile) for (act, tile), v in tiles.items()),
                   reverse=True)[:6]
    for g, n, act, tile in worst:
        print("  %s %s: %.3f (%d point%s)" % (act, tile, g, n, "" if n == 1 else "s"))
    if missed:
        print("\nabove the bar %.3f: %s" % (bar, "; ".join(missed)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
