# plot_series.awk -- bench_gemm CSV rows -> the series bench/plot.sh draws, one line per point:
#   panel  series  M  speedup  shape  name
# (panel, series: numbers in the order of first appearance, for sorting; shape "NxK"; name the
# series' legend text). Columns are found by their header names, so older CSVs work (one
# without `act` is FP16). Series: one per act + format (speedup = the CSV's cuBLAS time over
# libmgen's), and with ideal=1 one per format: the 16-bit roofline time over the 4-bit one,
# cublas_us * cublas_roofline_frac / (mgen_us * mgen_roofline_frac), the most a perfect 4-bit
# kernel gains (bench/notes/method.md), from the first act's row of each point. A second CSV is
# compared: its series' names start with `label` ("H100 v6: f16 u4b8_g128"), it has no ideal,
# and only the first CSV's shapes are kept. Bad input: a message naming file and line on
# stderr, exit 2.
#   awk -F, -v label=NAME -f plot_series.awk CSV [COMPARED_CSV]
function die(msg) {
  printf "plot: %s: %s\n", FILENAME, msg > "/dev/stderr"
  failed = 1
  exit 2
}
function number(field, what) {
  if ($field !~ /^[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/)
    die("line " FNR ": " what " is '" $field "', not a number")
  return $field + 0
}
function point(series_name, m, value,    id) {
  if (!(series_name in series_id)) series_id[series_name] = ++series_count
  id = series_id[series_name]
  printf "%d %d %d %.6g %s %s\n", panel_id[shape], id, m, value, shape, series_name
}
FNR == 1 {
  sub(/\r$/, "")
  files++
  prefix = files == 1 ? "" : label ": "
  points = 0
  split("", col)
  for (i = 1; i <= NF; i++) col[$i] = i
  split("fmt M K N mgen_us cublas_us speedup mgen_roofline_frac cublas_roofline_frac", need, " ")
  for (i = 1; i in need; i++)
    if (!(need[i] in col)) die("no '" need[i] "' column: not a bench_gemm CSV")
  next
}
{
  sub(/\r$/, "")
  if ($0 == "") next
  act = ("act" in col) ? $(col["act"]) : "f16"
  fmt = $(col["fmt"])
  if (act == "" || fmt == "") die("line " FNR ": empty act or fmt")
  m = number(col["M"], "M")
  shape = number(col["N"], "N") "x" number(col["K"], "K")
  speedup = number(col["speedup"], "speedup")
  if (m < 1) die("line " FNR ": M is " m)
  if (!(shape in panel_id)) {
    if (files > 1) next # a compared CSV: only the shapes the first one has
    panel_id[shape] = ++panel_count
  }
  point(prefix act " " fmt, m, speedup)
  points++
  if (files == 1 && !((shape, fmt, m) in seen)) {
    seen[shape, fmt, m] = 1
    mgen = number(col["mgen_us"], "mgen_us")
    mgen *= number(col["mgen_roofline_frac"], "mgen_roofline_frac")
    cublas = number(col["cublas_us"], "cublas_us")
    cublas *= number(col["cublas_roofline_frac"], "cublas_roofline_frac")
    if (mgen <= 0) die("line " FNR ": mgen_us * mgen_roofline_frac is 0: no ideal")
    point("ideal " fmt, m, cublas / mgen)
  }
}
END {
  if (failed) exit 2
  if (FNR == 0) die("empty file")
  if (points == 0) die("no data rows" (files > 1 ? " for the first CSV's shapes" : ""))
}
