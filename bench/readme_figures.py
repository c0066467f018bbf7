#!/usr/bin/env python3
"""readme_figures.py -- README.md's "## Current figures" tables, computed from the committed CSVs.

  python3 bench/readme_figures.py [--root DIR]                 print the tables (markdown)
  python3 bench/readme_figures.py [--root DIR] --check README  compare them with README's

First table: a cell is the geometric mean, over the rows of one activation type, format and M
bucket (the 8 weight shapes times the bucket's M values, each (M, K, N) exactly once), of
cublas_us / mgen_us (the graph-replay columns in the graph row); bold is marlin-gen, after
" / " vLLM's Marlin over its own cuBLAS of the same call (anchors CSV, us / cublas_us) where it
has the format. Second table: CUTLASS's Hopper mixed-input GEMM (its CSV's us, the best of its
configurations per point) over marlin-gen's default choice (mgen_us) of the same call, u4b8
g128 weights, per row (marlin-gen's activation type against CUTLASS's, and the call) and M
bucket, the same geometric mean over points present once in both files. Printed to 2
decimals, as the README shows them.
--check fails (exit 1) naming each cell that differs, and where the section no longer names a
CSV the figures come from. Bad input exits 2 naming the file and line. Standard library only
(tests run it: tests/scripts/readme_figures_check.sh).
"""
import argparse
import csv
import lzma
import math
import os
import sys

# One end-to-end call (marlin-gen, then vLLM's and IST's Marlin, then CUTLASS, each beside its
# own cuBLAS): every bucket of the first table and the W4A16 rows of the second.
V74 = "bench/results/results-h200-v74-e2e.csv.xz"
V74_ANCHORS = "bench/results/anchors-h200-v74.csv.xz"
V74_CUTLASS = "bench/results/cutlass-mixed-h200-v74.csv.xz"
# W4A8's default choice beside CUTLASS (its own call).
V45 = "bench/results/choice-h200-w4a8-v45.csv.xz"
V45_CUTLASS = "bench/results/cutlass-mixed-h200-v45.csv.xz"
SOURCES = (V74, V74_ANCHORS, V74_CUTLASS, V45, V45_CUTLASS)
SECTION = "## Current figures"

# (header, marlin-gen act and fmt, vLLM's Marlin act and fmt in the anchors CSV or None)
COLUMNS = [
    ("FP16 u4b8 g128", ("f16", "u4b8_g128"), ("fp16", "u4b8_g128")),
    ("FP16 u4b8 per channel", ("f16", "u4b8_gc"), ("fp16", "u4b8_gch")),
    ("FP16 NVFP4", ("f16", "fe2m1_nvfp4"), ("fp16", "nvfp4_g16")),
    ("FP16 MXFP4", ("f16", "fe2m1_mxfp4"), None),
    ("BF16 u4b8 g128", ("bf16", "u4b8_g128"), ("bf16", "u4b8_g128")),
]
# (M label, M values, graph-replay columns), all from V74; every row but the graph one shows
# vLLM's Marlin beside marlin-gen (the anchors were not replayed).
ROWS = [
    ("1-16", (1, 2, 4, 8, 16), False),
    ("1-16, CUDA graph replay", (1, 2, 4, 8, 16), True),
    ("32-128", (32, 64, 128), False),
    ("256", (256,), False),
    ("512-4096", (512, 1024, 2048, 4096), False),
]
SHAPES = 8
# The CUTLASS table: (row label, marlin-gen's CSV and act, CUTLASS's CSV and act) x (M label,
# M values).
CUTLASS_ROWS = [
    ("W4A16, FP16 activations", V74, "f16", V74_CUTLASS, "fp16"),
    ("W4A16, BF16 activations", V74, "bf16", V74_CUTLASS, "bf16"),
    ("W4A8, FP8 E4M3 activations (v45's call)", V45, "e4m3", V45_CUTLASS, "fp16"),
]
CUTLASS_BUCKETS = [("1-16", (1, 16)), ("64-128", (64, 128)), ("256", (256,)),
                   ("512-4096", (512, 1024, 2048, 4096))]


class BadInput(Exception):
    pass


def read_csv(path):
    """Rows as dicts with their line numbers; every column a caller names must be there."""
    try:
        opener = lzma.open if path.endswith(".xz") else open
        with opener(path, "rt", newline="") as f:
            rows = list(csv.DictReader(f))
    except (OSError, lzma.LZMAError) as e:
        raise BadInput("%s: %s" % (path, getattr(e, "strerror", None) or e))
    for i, r in enumerate(rows):
        r["_line"] = i + 2
    return rows


def require_columns(path, rows, cols):
    """BadInput naming the columns of cols that rows (read_csv's, not empty) lack."""
    missing = [c for c in cols if rows and c not in rows[0]]
    if missing:
        raise BadInput("%s: no column %s" % (path, ", ".join(missing)))


def number(path, row, col):
    v = row.get(col)
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise BadInput("%s:%d: column %s is %r, not a number" % (path, row["_line"], col, v))
    if not x > 0:
        raise BadInput("%s:%d: column %s is %s, not a time" % (path, row["_line"], col, v))
    return x


def points(path, rows, ms, key):
    """{(M, K, N): row} of the rows matching key = {column: value} and M in ms: each point
    once, SHAPES of them per M."""
    picked = [r for r in rows if all(r.get(c) == v for c, v in key.items())
              and r.get("M", "").isdigit() and int(r["M"]) in ms]
    seen = {}
    for r in picked:
        point = (r["M"], r["K"], r["N"])
        if point in seen:
            raise BadInput("%s:%d: M=%s K=%s N=%s again (line %d)"
                           % (path, r["_line"], *point, seen[point]["_line"]))
        seen[point] = r
    what = " ".join("%s=%s" % kv for kv in key.items())
    if len(picked) != SHAPES * len(ms):
        raise BadInput("%s: %s M in %s: %d rows, want %d (%d shapes x %d M)"
                       % (path, what, ",".join(map(str, ms)), len(picked), SHAPES * len(ms),
                          SHAPES, len(ms)))
    return seen


def gmean(xs):
    """The geometric mean of positive numbers (also twin_compare.py's and anchor_rounds.py's)."""
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def geomean(path, rows, ms, key, num, den):
    """Geomean of num/den over rows matching key = {column: value} and M in ms."""
    picked = points(path, rows, ms, key).values()
    return gmean([number(path, r, num) / number(path, r, den) for r in picked])


def cutlass_table(data):
    """CUTLASS's time over marlin-gen's (each row's pair of CSVs: one call), per M bucket."""
    lines = ["| marlin-gen's default choice | " + " | ".join(b[0] for b in CUTLASS_BUCKETS) + " |",
             "|---|" + "---|" * len(CUTLASS_BUCKETS)]
    for label, rel, act, crel, cact in CUTLASS_ROWS:
        cells = []
        for _, ms in CUTLASS_BUCKETS:
            ours = points(rel, data[rel], ms, {"act": act, "fmt": "u4b8_g128"})
            theirs = points(crel, data[crel], ms,
                            {"system": "cutlass_mixed", "act": cact, "fmt": "u4b8_g128"})
            if set(ours) != set(theirs):
                raise BadInput("%s and %s: act=%s M in %s: not the same (M, K, N) points"
                               % (rel, crel, act, ",".join(map(str, ms))))
            logs = [math.log(number(crel, theirs[p], "us") / number(rel, ours[p], "mgen_us"))
                    for p in sorted(ours)]
            cells.append("%.2f" % math.exp(sum(logs) / len(logs)))
        lines.append("| %s | %s |" % (label, " | ".join(cells)))
    return lines


def tables(root):
    """The section's tables, in order: [cuBLAS and vLLM's Marlin, CUTLASS]."""
    data = {}
    for rel in SOURCES:
        data[rel] = read_csv(os.path.join(root, rel))
    lines = ["| M | " + " | ".join(c[0] for c in COLUMNS) + " |",
             "|---|" + "---|" * len(COLUMNS)]
    for label, ms, graph in ROWS:
        cells = []
        for _, (act, fmt), anchor in COLUMNS:
            num, den = ("cublas_graph_us", "mgen_graph_us") if graph else ("cublas_us", "mgen_us")
            ours = geomean(V74, data[V74], ms, {"act": act, "fmt": fmt}, num, den)
            cell = "**%.2f**" % ours
            if not graph and anchor:
                theirs = geomean(V74_ANCHORS, data[V74_ANCHORS], ms,
                                 {"system": "vllm-marlin", "act": anchor[0], "fmt": anchor[1]},
                                 "cublas_us", "us")
                cell += " / %.2f" % theirs
            cells.append(cell)
        lines.append("| %s | %s |" % (label, " | ".join(cells)))
    return [lines, cutlass_table(data)]


def section(readme):
    """The lines of README's section, from its heading to the next "## " heading."""
    try:
        with open(readme) as f:
            text = f.read().splitlines()
    except OSError as e:
        raise BadInput("%s: %s" % (readme, e.strerror))
    if SECTION not in text:
        raise BadInput("%s: no line %r" % (readme, SECTION))
    start = text.index(SECTION)
    end = next((i for i in range(start + 1, len(text)) if text[i].startswith("## ")), len(text))
    return [(i + 1, text[i]) for i in range(start, end)]


def split_row(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def check(readme, wants):
    """Messages for each difference between README's tables and wants (the computed lines of
    each, in order)."""
    lines = section(readme)
    bad = []
    prose = " ".join(t for _, t in lines)
    for rel in SOURCES:
        if rel not in prose:
            bad.append("%s: %s does not name %s, which its figures come from"
                       % (readme, SECTION, rel))
    blocks, prev = [], None  # the section's tables: runs of consecutive "|" lines
    for n, t in lines:
        if t.startswith("|"):
            if prev != n - 1:
                blocks.append([])
            blocks[-1].append((n, t))
            prev = n
    if len(blocks) != len(wants):
        return bad + ["%s: %s has %d tables, want %d" % (readme, SECTION, len(blocks), len(wants))]
    for got, want in zip(blocks, wants):
        bad += compare(readme, got, want)
    return bad


def compare(readme, got, want):
    """Messages for each difference between one README table (got: (line, text)) and want."""
    bad = []
    header = split_row(want[0])
    if split_row(got[0][1]) != header:
        bad.append("%s:%d: header is %r, want %r" % (readme, got[0][0], got[0][1], want[0]))
    have = {}
    for n, t in got[2:]:
        cells = split_row(t)
        have[cells[0]] = (n, cells)
    for w in want[2:]:
        wcells = split_row(w)
        label = wcells[0]
        if label not in have:
            bad.append("%s: no row %r in the table" % (readme, label))
            continue
        n, cells = have.pop(label)
        for col, wc in enumerate(wcells[1:], 1):
            hc = cells[col] if col < len(cells) else "(none)"
            if hc != wc:
                bad.append("%s:%d: %s %s, %s is %s; the CSVs give %s"
                           % (readme, n, header[0], label, header[col], hc, wc))
        if len(cells) > len(wcells):
            bad.append("%s:%d: %s %s has %d cells, want %d"
                       % (readme, n, header[0], label, len(cells), len(wcells)))
    for label, (n, _) in have.items():
        bad.append("%s:%d: row %r is not computed from the CSVs" % (readme, n, label))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   ".."))
    ap.add_argument("--check", metavar="README")
    args = ap.parse_args()
    try:
        want = tables(args.root)
        if not args.check:
            print("\n\n".join("\n".join(t) for t in want))
            return 0
        bad = check(args.check, want)
    except BadInput as e:
        print("readme_figures: %s" % e, file=sys.stderr)
        return 2
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        print("readme_figures: regenerate with `python3 bench/readme_figures.py`",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
