# ab_compare.awk -- sums up run_ab_device.sh's ab.csv: per activation, format, kernel (its name
# without the activation, format and group) and M, the geometric mean over the shapes of the
# base variant's time over each other variant's (> 1: the variant is faster), each time the
# best of its rounds. Only kernels every variant has count.
# With -v by=rows the kernels of a variant are pooled by their tile's rows ("16-row": the best
# of that variant's 16-row kernels at each point), for variants whose kernels differ in name
# (other stages, tiles or warps: a configuration space against a default set). With -v
# by=point every kernel of a point is pooled ("best"): the runtime's choice against the
# runtime's choice, for an A/B that changes which kernel a point gets (a default set's keys).
# With -v time=mgen_graph_us the times compared are the graph-replay ones (bench_gemm --graph);
# rows without one (an M the run did not replay) are left out.
# An ab.csv of bench_moe (BENCH=bench_moe: a scenario column) is summed up per scenario (in the
# act column), part (in the format column), kernel and m, over its one shape; its times are
# "us" (events), or -v time=graph_us.
#
#   awk -F, -v base=base [-v by=rows|point] [-v time=mgen_graph_us] -f bench/ab_compare.awk ab.csv
BEGIN { if (base == "") base = "base" }
NR == 1 {
  for (i = 1; i <= NF; i++) col[$i] = i
  if ("scenario" in col) { # bench_moe's columns, named as bench_gemm's where they play the part
    col["act"] = col["scenario"]; col["fmt"] = col["part"]; col["M"] = col["m"]
    col["K"] = col["k"]; col["N"] = col["n"]
    if (time == "") time = "us"
  }
  if (time == "") time = "mgen_us"
  if (!("variant" in col) || !("kernel" in col) || !(time in col)) {
    print "ab_compare: not an ab.csv (no variant, kernel or " time " column)" > "/dev/stderr"
    bad = 1
    exit 2
  }
  next
}
$col[time] == "" || $col[time] + 0 <= 0 { next }
{
  v = $col["variant"]; k = $col["kernel"]; t = $col[time] + 0
  tile = k; sub(/^mgen_[a-z0-9]+_(moe_)?(f16|bf16)_[a-z0-9]+_g[a-z0-9]+_/, "", tile)
  if (by == "rows") { sub(/x.*/, "", tile); tile = tile "-row" }
  if (by == "point") tile = "best"
  point = $col["act"] SUBSEP $col["fmt"] SUBSEP tile SUBSEP ($col["M"] + 0) SUBSEP $col["K"] SUBSEP $col["N"]
  key = v SUBSEP point
  if (!(key in best) || t < best[key]) best[key] = t
  seen[v] = 1
}
END {
  if (bad) exit 2
  for (key in best) {
    split(key, f, SUBSEP)
    if (f[1] != base) continue
    point = f[2] SUBSEP f[3] SUBSEP f[4] SUBSEP f[5] SUBSEP f[6] SUBSEP f[7]
    group = f[2] SUBSEP f[3] SUBSEP f[4] SUBSEP f[5]
    for (v in seen) {
      if (v == base || !((v SUBSEP point) in best)) continue
      sum[v SUBSEP group] += log(best[key] / best[v SUBSEP point]); cnt[v SUBSEP group]++
    }
  }
  printf "%-8s %-5s %-12s %-24s %6s %8s %6s\n", "variant", "act", "format", "kernel", "M", base "/it", "shapes"
  n = 0
  for (g in cnt) lines[++n] = g
  # insertion sort by variant, act, format, kernel, M
  for (i = 2; i <= n; i++) {
    x = lines[i]; j = i - 1
    while (j > 0 && before(x, lines[j])) { lines[j + 1] = lines[j]; j-- }
    lines[j + 1] = x
  }
  for (i = 1; i <= n; i++) {
    split(lines[i], f, SUBSEP)
    printf "%-8s %-5s %-12s %-24s %6d %8.3f %6d\n", f[1], f[2], f[3], f[4], f[5], exp(sum[lines[i]] / cnt[lines[i]]), cnt[lines[i]]
  }
}
function before(a, b,    x, y, i) {
  split(a, x, SUBSEP); split(b, y, SUBSEP)
  for (i = 1; i <= 4; i++) if (x[i] != y[i]) return x[i] < y[i]
  return x[5] + 0 < y[5] + 0
}
