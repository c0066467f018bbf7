#!/usr/bin/env python3
"""plot_figures.py -- docs/figures/, drawn from the CSVs README's "Current figures" table comes from.

  python3 bench/plot_figures.py [--root DIR] [--out DIR]   write the SVGs (default ROOT/docs/figures)
  python3 bench/plot_figures.py [--root DIR] --check       redraw in a temp dir; exit 1 naming each
                                                           committed SVG that differs
  python3 bench/plot_figures.py [--root DIR] --values      print the plotted points as text

Speedup over cuBLAS of the same activation type against M (log2 axis). speedup-h200.svg: one
panel per README column (format and activation type), each point the geometric mean over the 8
weight shapes at that M; shapes-h200-f16-u4b8-g128.svg: FP16 u4b8 g128, one panel per shape.
Lines: marlin-gen (events), marlin-gen under CUDA graph replay (M <= 16, against cuBLAS replayed
too), vLLM's and IST's Marlin and CUTLASS's mixed-input GEMM timed in the same call (anchors
CSVs, where they have the format: CUTLASS has u4b8 g128), and the 4-bit ideal: the 16-bit
roofline time over the 4-bit one (cublas_us * cublas_roofline_frac / (mgen_us *
mgen_roofline_frac)), the most a perfect 4-bit kernel gains.
Files, M buckets, columns and the geometric mean are readme_figures.py's (imported), so the plot
and the table cannot disagree: the mean of a bucket's points is its cell (test
scripts.plot_figures_values). Matplotlib (Debian: python3-matplotlib) only for drawing; the SVGs
are byte-deterministic for one matplotlib version (fixed hash salt, no date, text as text).
Bad input exits 2 naming the file and line, as readme_figures.py does.
"""
import argparse
import filecmp
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import readme_figures as rf  # noqa: E402  (beside this file; one source for files and means)

MAIN_SVG = "speedup-h200.svg"
SHAPES_SVG = "shapes-h200-f16-u4b8-g128.svg"
OUT_DIR = "docs/figures"

# Series name (its legend text) -> colour, line style, marker; drawn in this order (marlin-gen
# on top), listed in the legend in the reverse one.
OURS = "marlin-gen"
GRAPH = "marlin-gen, CUDA graph replay"
VLLM = "vLLM's Marlin"
IST = "IST's Marlin"
CUTLASS = "CUTLASS mixed-input (best config)"
IDEAL = "4-bit ideal (roofline)"
STYLE = {
    IDEAL: ("#888888", ":", None),
    CUTLASS: ("#CC79A7", "-", "D"),
    IST: ("#009E73", "-", "^"),
    VLLM: ("#D55E00", "-", "s"),
    GRAPH: ("#0072B2", "--", "."),
    OURS: ("#0072B2", "-", "o"),
}
# (series, system in its CSV, the CSV)
ANCHOR_SYSTEMS = ((VLLM, "vllm-marlin", rf.V74_ANCHORS), (IST, "ist-marlin", rf.V74_ANCHORS),
                  (CUTLASS, "cutlass_mixed", rf.V74_CUTLASS))


def load(root):
    return {rel: rf.read_csv(os.path.join(root, rel))
            for rel in (rf.V74, rf.V74_ANCHORS, rf.V74_CUTLASS)}


def ratio_one(path, rows, m, key, shape, num, den):
    """num/den of the one row matching key, M = m and shape = (K, N)."""
    want = dict(key, M=str(m), K=shape[0], N=shape[1])
    picked = [r for r in rows if all(r.get(c) == v for c, v in want.items())]
    if len(picked) != 1:
        raise rf.BadInput("%s: %s: %d rows, want 1" % (
            path, " ".join("%s=%s" % kv for kv in want.items()), len(picked)))
    return rf.number(path, picked[0], num) / rf.number(path, picked[0], den)


def point(data, rel, m, key, num, den, shape):
    """One plotted value: over all shapes readme_figures' geometric mean, else one row's ratio."""
    if shape is None:
        return rf.geomean(rel, data[rel], (m,), key, num, den)
    return ratio_one(rel, data[rel], m, key, shape, num, den)


def has(rows, key):
    return any(all(r.get(c) == v for c, v in key.items()) for r in rows)


def series(data, column, shape=None):
    """{series name: [(M, speedup)]} for one README column (and one shape, or all of them)."""
    _, (act, fmt), anchor = column
    out = {}
    rel, ours = rf.V74, {"act": act, "fmt": fmt}
    for _, ms, graph in rf.ROWS:
        for m in ms:
            if graph:
                out.setdefault(GRAPH, []).append(
                    (m, point(data, rel, m, ours, "cublas_graph_us", "mgen_graph_us", shape)))
                continue
            s = point(data, rel, m, ours, "cublas_us", "mgen_us", shape)
            out.setdefault(OURS, []).append((m, s))
            # cublas_us*cublas_frac / (mgen_us*mgen_frac): a product, so its mean is the
            # speedup's times the roofline fractions'.
            f = point(data, rel, m, ours, "cublas_roofline_frac", "mgen_roofline_frac", shape)
            out.setdefault(IDEAL, []).append((m, s * f))
            if not anchor:
                continue
            for name, system, rel_a in ANCHOR_SYSTEMS:
                key = {"system": system, "act": anchor[0], "fmt": anchor[1]}
                if has(data[rel_a], key):
                    out.setdefault(name, []).append(
                        (m, point(data, rel_a, m, key, "cublas_us", "us", shape)))
    return out


def shapes(data):
    """(K, N) of the first column's M = 1 rows, smallest weight first."""
    _, (act, fmt), _ = rf.COLUMNS[0]
    seen = []
    for r in data[rf.V74]:
        if r.get("act") == act and r.get("fmt") == fmt and r.get("M") == "1":
            if not (r.get("K", "").isdigit() and r.get("N", "").isdigit()):
                raise rf.BadInput("%s:%d: K=%r N=%r, not sizes" % (rf.V74, r["_line"], r.get("K"),
                                                                  r.get("N")))
            seen.append((r["K"], r["N"]))
    if len(seen) != rf.SHAPES or len(set(seen)) != rf.SHAPES:
        raise rf.BadInput("%s: act=%s fmt=%s M=1: %d shapes, want %d distinct"
                          % (rf.V74, act, fmt, len(seen), rf.SHAPES))
    return sorted(seen, key=lambda kn: (int(kn[0]) * int(kn[1]), int(kn[1])))


def panels(root):
    """The two figures' panels: {file: [(title, {series: [(M, speedup)]})]}."""
    data = load(root)
    main = [(c[0], series(data, c)) for c in rf.COLUMNS]
    per_shape = [("N %s, K %s" % (n, k), series(data, rf.COLUMNS[0], (k, n)))
                 for k, n in shapes(data)]
    return {MAIN_SVG: main, SHAPES_SVG: per_shape}


NOTE = ("H200, one kernel repeated warm, one call: %s, with vLLM's and IST's Marlin\n"
        "(%s) and CUTLASS (%s) timed in the same call.")


def draw(title, panel_list, cols, path):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    rc = {"svg.hashsalt": "marlin-gen", "svg.fonttype": "none", "font.size": 9,
          "axes.titlesize": 9.5, "legend.fontsize": 9, "lines.linewidth": 1.4,
          "lines.markersize": 3.5}
    with matplotlib.rc_context(rc):
        rows = (len(panel_list) + cols - 1) // cols
        fig = Figure(figsize=(8, 2.3 * rows + 1.0))
        axes = list(fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False).flat)
        ms = sorted({m for _, ss in panel_list for pts in ss.values() for m, _ in pts})
        top = max(y for _, ss in panel_list for pts in ss.values() for _, y in pts)
        for ax, (name, ss) in zip(axes, panel_list):
            ax.axhline(1.0, color="black", linewidth=0.7)
            for s, (color, ls, marker) in STYLE.items():
                if s in ss:
                    xs, ys = zip(*ss[s])
                    ax.plot(xs, ys, color=color, linestyle=ls, marker=marker)
            ax.set_title(name)
            ax.set_xscale("log", base=2)
            ax.set_xticks(ms[::2])
            ax.set_xticks(ms[1::2], minor=True)
            ax.set_xticklabels([str(m) for m in ms[::2]])
            ax.set_xticklabels([], minor=True)
            ax.set_ylim(0, top * 1.08)
            ax.grid(True, which="major", color="#dddddd", linewidth=0.6)
        spare = axes[len(panel_list):]
        for ax in spare:
            ax.set_visible(False)
        for i, ax in enumerate(axes[:len(panel_list)]):
            if i + cols >= len(panel_list):  # the lowest panel of its column
                ax.xaxis.set_tick_params(labelbottom=True)
                ax.set_xlabel("M (tokens)")
        for ax in axes[::cols]:
            ax.set_ylabel("speedup over cuBLAS")
        used = [s for s in reversed(list(STYLE)) if any(s in ss for _, ss in panel_list)]
        handles = [Line2D([], [], color=STYLE[s][0], linestyle=STYLE[s][1], marker=STYLE[s][2])
                   for s in used]
        fig.suptitle(title, fontsize=11)
        fig.text(0.5, 0.005, NOTE % (rf.V74, rf.V74_ANCHORS, rf.V74_CUTLASS), ha="center",
                 va="bottom", fontsize=7.5)
        if spare:  # the legend in the empty cell, beside the panels it explains
            fig.tight_layout(rect=(0, 0.035, 1, 0.97))
            spare[0].set_visible(True)
            spare[0].axis("off")
            spare[0].legend(handles, used, loc="center", frameon=False)
        else:
            inch = 1 / fig.get_figheight()
            fig.legend(handles, used, loc="upper center", ncol=3, frameon=False,
                       bbox_to_anchor=(0.5, 1 - 0.3 * inch))
            fig.tight_layout(rect=(0, 0.035, 1, 1))
            fig.subplots_adjust(top=1 - 1.15 * inch)  # below the legend (tight_layout skips it)
        fig.savefig(path, format="svg", metadata={"Date": None})


def write(root, out):
    os.makedirs(out, exist_ok=True)
    figs = panels(root)
    draw("Speedup over cuBLAS of the same activation type, geometric mean over %d weight shapes"
         % rf.SHAPES,
         figs[MAIN_SVG], 2, os.path.join(out, MAIN_SVG))
    draw("FP16 u4b8 g128: speedup over cuBLAS FP16 per weight shape (N x K)",
         figs[SHAPES_SVG], 2, os.path.join(out, SHAPES_SVG))
    return [MAIN_SVG, SHAPES_SVG]


def check(root):
    """Messages for each committed SVG that is not what write() draws now."""
    committed = os.path.join(root, OUT_DIR)
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in write(root, tmp):
            have = os.path.join(committed, name)
            if not os.path.exists(have):
                bad.append("%s/%s: missing" % (OUT_DIR, name))
            elif not filecmp.cmp(have, os.path.join(tmp, name), shallow=False):
                bad.append("%s/%s: differs from what the CSVs draw now" % (OUT_DIR, name))
    return bad


def values(root):
    lines = []
    for name, panel_list in panels(root).items():
        for title, ss in panel_list:
            for s in reversed(list(STYLE)):
                for m, y in ss.get(s, []):
                    lines.append("%s\t%s\t%s\t%d\t%.6f" % (name, title, s, m, y))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   ".."))
    ap.add_argument("--out", help="where to write the SVGs (default ROOT/%s)" % OUT_DIR)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--values", action="store_true")
    args = ap.parse_args()
    try:
        if args.values:
            print("\n".join(values(args.root)))
            return 0
        if not args.check:
            out = args.out or os.path.join(args.root, OUT_DIR)
            for name in write(args.root, out):
                print("plot_figures: wrote %s" % os.path.join(out, name))
            return 0
        bad = check(args.root)
    except rf.BadInput as e:
        print("plot_figures: %s" % e, file=sys.stderr)
        return 2
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        import matplotlib
        print("plot_figures: regenerate with `python3 bench/plot_figures.py` (matplotlib %s here;"
              " the committed SVGs name theirs in <dc:creator>)" % matplotlib.__version__,
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
