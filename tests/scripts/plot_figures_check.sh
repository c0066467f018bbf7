#!/usr/bin/env bash
# plot_figures_check.sh ROOT values|figures PYTHON -- bench/plot_figures.py, the figures in docs/.
# values (any python3, no matplotlib): the plotted points are the table's: over each of README's
#   M buckets their geometric mean is the "Current figures" cell (readme_figures.py's table), for
#   marlin-gen, graph replay and vLLM's Marlin, in the per-format panels and over the per-shape
#   panels; per-shape points are the rows' own ratios (IST's Marlin from the anchors CSV, the
#   ideal cublas_us*cublas_frac/(mgen_us*mgen_frac)). Two mutants of the script must fail it.
# figures (PYTHON has matplotlib): docs/figures/ is byte for byte what the committed CSVs draw
#   now (--check), the README and docs/benchmarking.md show the figures, and --check fails on a
#   copy of the tree with one CSV value changed (naming the SVGs it moves, not the other) or an
#   SVG gone. Skips (77) where PYTHON's matplotlib is not the version that drew the committed
#   SVGs (the bytes differ between versions; CI's Debian has that version, and fails on a skip).
. "$(dirname "$0")/../gen/lib.sh"
root=$1 mode=$2 py=$3
plot=bench/plot_figures.py
main=docs/figures/speedup-h200.svg shapes=docs/figures/shapes-h200-f16-u4b8-g128.svg

# A copy of what the figures come from, under $tmp/root.
copy_root() {
  rm -rf "$tmp/root"
  mkdir -p "$tmp/root/bench/results" "$tmp/root/docs/figures"
  cp "$root/bench/readme_figures.py" "$root/$plot" "$tmp/root/bench/"
  cp "$root"/bench/results/{results-h200-v74-e2e,anchors-h200-v74,cutlass-mixed-h200-v74}.csv.xz \
     "$root"/bench/results/{choice-h200-w4a8-v45,cutlass-mixed-h200-v45}.csv.xz \
     "$tmp/root/bench/results/"
  cp "$root"/docs/figures/*.svg "$tmp/root/docs/figures/"
}

if [ "$mode" = values ]; then
  cat >"$tmp/values.py" <<'PY'
import math, os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "bench"))
import plot_figures as pf, readme_figures as rf
root = sys.argv[1]
bad = []
figs = pf.panels(root)
main, shapes = figs[pf.MAIN_SVG], figs[pf.SHAPES_SVG]
table = {rf.split_row(t)[0]: rf.split_row(t)[1:] for t in rf.tables(root)[0][2:]}
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))

def cell(panel_series, ms, graph):
    """A table cell from points of panels: each a {series: [(M, y)]}."""
    def mean(name):
        ys = [y for ss in panel_series for m, y in ss.get(name, []) if m in ms]
        if len(ys) != len(ms) * len(panel_series):
            bad.append("%s: %d points for M %s, want %d" % (name, len(ys), ms,
                                                            len(ms) * len(panel_series)))
            return float("nan")
        return gm(ys)
    c = "**%.2f**" % mean(pf.GRAPH if graph else pf.OURS)
    if not graph and pf.VLLM in panel_series[0]:
        c += " / %.2f" % mean(pf.VLLM)
    return c

checked = 0
for label, ms, graph in rf.ROWS:
    for i, (title, ss) in enumerate(main):
        got, want = cell([ss], ms, graph), table[label][i]
        checked += 1
        if got != want:
            bad.append("%s, M %s: the points give %s, the table %s" % (title, label, got, want))
    got = cell([ss for _, ss in shapes], ms, graph)
    if got != table[label][0]:
        bad.append("per-shape panels, M %s: the points give %s, the table %s (%s)"
                   % (label, got, table[label][0], rf.COLUMNS[0][0]))
    checked += 1

# Per-shape points from the rows themselves, at M = 1 (events, ideal) and the anchors' IST.
data = pf.load(root)
row = lambda rel, **key: [r for r in data[rel] if all(r[c] == v for c, v in key.items())]
for title, ss in shapes:
    n, k = title.replace("N ", "").replace("K ", "").split(", ")
    r, = row(rf.V74, act="f16", fmt="u4b8_g128", M="1", K=k, N=n)
    f = lambda c: float(r[c])
    want = {pf.OURS: f("cublas_us") / f("mgen_us"),
            pf.IDEAL: f("cublas_us") * f("cublas_roofline_frac")
                      / (f("mgen_us") * f("mgen_roofline_frac"))}
    a, = row(rf.V74_ANCHORS, system="ist-marlin", act="fp16", fmt="u4b8_g128", M="1", K=k, N=n)
    want[pf.IST] = float(a["cublas_us"]) / float(a["us"])
    c, = row(rf.V74_CUTLASS, system="cutlass_mixed", act="fp16", fmt="u4b8_g128", M="1", K=k,
             N=n)
    want[pf.CUTLASS] = float(c["cublas_us"]) / float(c["us"])
    for name, w in want.items():
        got = dict(ss[name])[1]
        checked += 1
        if abs(got - w) > 1e-9 * w:
            bad.append("%s, %s at M=1: plotted %.6f, the row gives %.6f" % (title, name, got, w))
for b in bad:
    print(b, file=sys.stderr)
print("%d checks, %d failed" % (checked, len(bad)))
sys.exit(1 if bad else 0)
PY
  capture "$py" "$tmp/values.py" "$root"
  expect_rc 0 "the plotted points against README's table and the CSV rows"
  summary=$out
  # Mutants of the script, each on a copy: vLLM's ratio upside down; the ideal without the
  # roofline fractions.
  mutant() { # DESCRIPTION SED-EXPRESSION EXPECTED-MESSAGE
    copy_root
    sed "$2" "$root/$plot" >"$tmp/root/$plot"
    cmp -s "$root/$plot" "$tmp/root/$plot" && fail "mutant '$1' changed nothing"
    capture "$py" "$tmp/values.py" "$tmp/root"
    expect_rc 1 "mutant '$1'"
    expect_in "$err" "$3" "mutant '$1'"
  }
  mutant "vLLM upside down" 's/m, key, "cublas_us", "us", shape/m, key, "us", "cublas_us", shape/' \
    "FP16 u4b8 g128, M 1-16: the points give **2.36** / 0.52, the table **2.36** / 1.92"
  mutant "ideal without fractions" 's/(m, s \* f)/(m, s)/' \
    "N 4096, K 4096, 4-bit ideal (roofline) at M=1: plotted"
  # Bad input exits 2 naming the file: a shape's row gone, a K that is not a size.
  copy_root
  csv=$tmp/root/bench/results/results-h200-v74-e2e.csv.xz
  xz -dc "$root/${csv#"$tmp/root/"}" | grep -v '^NVIDIA H200,f16,u4b8_g128,[^,]*,1,4096,4096,' |
    xz >"$csv"
  capture "$py" "$tmp/root/$plot" --values
  expect_rc 2 "$plot --values with a row gone"
  expect_in "$err" "plot_figures: bench/results/results-h200-v74-e2e.csv.xz: act=f16 fmt=u4b8_g128 M in 1: 7 rows, want 8" \
    "a row gone"
  xz -dc "$root/${csv#"$tmp/root/"}" |
    sed 's/^\(NVIDIA H200,f16,u4b8_g128,[^,]*,1,\)4096,4096,/\1x4096,4096,/' | xz >"$csv"
  capture "$py" "$tmp/root/$plot" --values
  expect_rc 2 "$plot --values with K not a size"
  expect_in "$err" "results-h200-v74-e2e.csv.xz:" "K not a size"
  expect_in "$err" "K='x4096' N='4096', not sizes" "K not a size"
  echo "PASS: plotted points are the table's cells and the rows' ratios ($summary), 2 mutants," \
       "bad input named"
  exit 0
fi

# figures
have=$(sed -n 's/.*<dc:title>Matplotlib v\([^,]*\),.*/\1/p' "$root/$main")
capture "$py" -c 'import matplotlib; print(matplotlib.__version__)'
expect_rc 0 "$py: import matplotlib"
if [ "$out" != "$have" ]; then
  echo "SKIPPED: matplotlib $out here; the committed SVGs are matplotlib $have's (bytes differ" \
       "between versions; redraw with \`python3 $plot\` where it is $have, or all of them)"
  exit 77
fi
capture "$py" "$root/$plot" --root "$root" --check
expect_rc 0 "docs/figures/ against the CSVs (python3 $plot --check)"
for doc in README.md:$main docs/benchmarking.md:$main docs/benchmarking.md:$shapes; do
  svg=${doc#*:} svg=${svg#docs/}
  grep -qF "$svg)" "$root/${doc%%:*}" || fail "${doc%%:*} does not show ${doc#*:}"
done

copy_root
capture "$py" "$tmp/root/$plot" --check
expect_rc 0 "$plot --check on an unchanged copy"
# FP16 u4b8 g128 at M = 1 on (K 4096, N 12288): both figures move.
csv=bench/results/results-h200-v74-e2e.csv.xz
xz -dc "$root/$csv" |
  sed 's/^\(NVIDIA H200,f16,u4b8_g128,[^,]*,1,4096,12288,\)13\.920,/\120.000,/' | xz >"$tmp/root/$csv"
cmp -s <(xz -dc "$root/$csv") <(xz -dc "$tmp/root/$csv") && fail "the CSV edit changed nothing"
capture "$py" "$tmp/root/$plot" --check
expect_rc 1 "$plot --check after a results CSV value changed"
expect_in "$err" "$main: differs from what the CSVs draw now" "a results CSV value changed"
expect_in "$err" "$shapes: differs" "a results CSV value changed"
expect_in "$err" "regenerate with \`python3 $plot\`" "a results CSV value changed"
# vLLM's Marlin, BF16 at M = 1 on (K 4096, N 12288): only the per-format figure shows it.
copy_root
csv=bench/results/anchors-h200-v74.csv.xz
xz -dc "$root/$csv" | sed 's/^\(vllm-marlin,bf16,u4b8_g128,1,4096,12288,\)[0-9.]*,/\199.000,/' |
  xz >"$tmp/root/$csv"
cmp -s <(xz -dc "$root/$csv") <(xz -dc "$tmp/root/$csv") &&
  fail "the anchors CSV edit changed nothing"
capture "$py" "$tmp/root/$plot" --check
expect_rc 1 "$plot --check after an anchors CSV value changed"
expect_in "$err" "$main: differs" "an anchors CSV value changed"
case "$err" in *"$shapes"*) fail "BF16's vLLM time moved the FP16 per-shape figure: $err" ;; esac
copy_root
rm "$tmp/root/$shapes"
capture "$py" "$tmp/root/$plot" --check
expect_rc 1 "$plot --check with an SVG gone"
expect_in "$err" "$shapes: missing" "an SVG gone"
echo "PASS: docs/figures/ is what the CSVs draw (matplotlib $have), shown in README and" \
     "docs/benchmarking.md; stale after a results or anchors edit, missing SVG named"
