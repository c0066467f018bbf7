#!/usr/bin/env bash
# plot.sh -- a bench_gemm CSV as a picture: libmgen's speedup over cuBLAS against M, one panel
# per weight shape (N x K), one line per format (activation type + weight format), each
# format's ideal dotted (16-bit roofline time over 4-bit roofline time: the most a perfect
# 4-bit kernel gains, bench/notes/method.md), and optionally a second CSV (another system or version)
# drawn thin for comparison. Writes PREFIX.png and PREFIX.svg with gnuplot (Debian:
# gnuplot-nox; scripts/install-deps.sh installs it). The series come from plot_series.awk.
#
#   bench/plot.sh bench/results/results-h200-v6.csv   -> bench/results/results-h200-v6.{png,svg}
#   bench/plot.sh run.csv --compare bench/results/results-h200-v6.csv --label "H200 v6" -o cmp
#   bench/plot.sh run.csv --data                         the series as text, no plot
#
# Exit status: 0; 1 gnuplot missing or failing; 2 usage error or a CSV it cannot read.
# PLOT_KEEP=1 in the environment keeps its temporary directory (data and gnuplot script).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: plot.sh CSV [--compare CSV2] [--label NAME] [-o PREFIX] [--data]"
die() { # status message
  echo "plot: $2" >&2
  exit "$1"
}

csv="" compare="" label="" prefix="" data_only=0
while (($#)); do
  case $1 in
    --compare | --label | -o)
      (($# >= 2)) || die 2 "missing value for option '$1'"$'\n'"$usage"
      case $1 in --compare) compare=$2 ;; --label) label=$2 ;; -o) prefix=$2 ;; esac
      shift 2 ;;
    --data) data_only=1; shift ;;
    -h | --help) echo "$usage"; exit 0 ;;
    -*) die 2 "unknown option '$1'"$'\n'"$usage" ;;
    *) [ -z "$csv" ] || die 2 "one CSV to plot (and --compare CSV2), not also '$1'"
       csv=$1; shift ;;
  esac
done
[ -n "$csv" ] || die 2 "no CSV given"$'\n'"$usage"
for f in "$csv" ${compare:+"$compare"}; do
  [ -f "$f" ] && [ -r "$f" ] || die 2 "$f: no such readable file"
  [ -s "$f" ] || die 2 "$f: empty file"
done
[ -n "$label" ] || label=$(basename "${compare:-x}" .csv)
[ -n "$prefix" ] || prefix=${csv%.csv}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mgen-plot.XXXXXX")
trap '[ -n "${PLOT_KEEP:-}" ] || rm -rf "$tmp"' EXIT
# Sorted by panel, series, M: each series' points in a row, ready to split into blocks.
awk -F, -v label="$label" -f "$here/plot_series.awk" "$csv" ${compare:+"$compare"} \
  >"$tmp/points" || exit 2
sort -k1,1n -k2,2n -k3,3n "$tmp/points" >"$tmp/sorted"
if ((data_only)); then
  cut -d' ' -f3- "$tmp/sorted"
  exit 0
fi
command -v gnuplot >/dev/null 2>&1 ||
  die 1 "gnuplot not found (apt-get install gnuplot-nox; scripts/install-deps.sh installs it)"

# Blocks for gnuplot's `index` (two blank lines apart) and one plan line per block:
#   index panel shape kind colour dash name
# kind: main, ideal or compared; colour by weight format, dash by activation type.
awk -v data="$tmp/data" -v label="$label: " '
  BEGIN { split("#1f77b4 #d62728 #2ca02c #9467bd #ff7f0e #8c564b", colours, " ") }
  {
    key = $1 " " $2
    name = $0
    for (i = 0; i < 5; i++) sub(/^[^ ]+ /, "", name) # panel series M speedup shape
    if (key != last) {
      if (NR > 1) printf "\n\n" > data
      kind = "main"
      rest = name
      if (index(name, label) == 1) { kind = "compared"; rest = substr(name, length(label) + 1) }
      split(rest, part, " ")
      if (part[1] == "ideal") kind = "ideal"
      if (!(part[2] in fmt)) fmt[part[2]] = ++fmts
      if (kind != "ideal" && !(part[1] in act)) act[part[1]] = ++acts
      dash = kind == "ideal" ? 3 : (act[part[1]] - 1) % 2 + 1
      print blocks++, $1, $5, kind, colours[(fmt[part[2]] - 1) % 6 + 1], dash, name
      last = key
    }
    print $3, $4 > data
  }' "$tmp/sorted" >"$tmp/plan"

# One y range for every panel (the data and 1x, with a margin), so panels compare by eye.
read -r ylo yhi < <(awk '
  NR == 1 || $4 < lo { lo = $4 } NR == 1 || $4 > hi { hi = $4 }
  END { if (lo > 1) lo = 1; if (hi < 1) hi = 1; print lo / 1.25, hi * 1.15 }' "$tmp/sorted")
gpu=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "gpu") c = i; next }
               c { print $c; exit }' "$csv")
title="libmgen speedup over cuBLAS (the row's 16-bit type) against M, ${gpu:+$gpu, }"
title+=$(basename "$csv")
[ -z "$compare" ] || title+="; thin: $label"

{
  echo "set datafile separator ' '"
  echo "set termoption noenhanced"
  # Panels 4 to a row between y = 0.13 and 0.93 of the page, placed by hand; the strip below
  # holds one key for all of them, drawn last as an empty full-width plot.
  echo "set multiplot title \"$title\" font ',13'"
  echo "set logscale xy 2"
  echo "set xrange [0.8:5120]; set xtics (1, 4, 16, 64, 256, 1024, 4096)"
  echo "set yrange [$ylo:$yhi]; set ytics (0.125, 0.25, 0.5, 1, 2, 4, 8)"
  echo "set grid xtics ytics lc rgb '#dddddd'"
  echo "set xlabel 'M (rows of A)'; set ylabel 'speedup over cuBLAS'"
  echo "unset key"
  legend="NaN with lines lc rgb 'black' dt 1 lw 1 title 'cuBLAS (1x)'"
  rows=$(( ($(awk '{ print $2 }' "$tmp/plan" | sort -u | wc -l) + 3) / 4 ))
  while read -r panel shape; do
    awk -v i="$((panel - 1))" -v rows="$rows" 'BEGIN {
      w = 0.94 / 4; h = 0.80 / rows; x = 0.05 + i % 4 * w; y = 0.93 - (int(i / 4) + 1) * h
      printf "set lmargin at screen %.4f; set rmargin at screen %.4f\n", x + 0.035, x + w - 0.01
      printf "set bmargin at screen %.4f; set tmargin at screen %.4f\n", y + 0.065, y + h - 0.035
    }'
    echo "set title '${shape/x/ x } (N x K)'"
    plots="1 with lines lc rgb 'black' dt 1 lw 1"
    while read -r block p _ kind colour dash name; do
      [ "$p" = "$panel" ] || continue
      case $kind in
        main) style="linespoints lw 2 pt 7 ps 0.5" ;;
        ideal) style="lines lw 1.5" ;;
        compared) style="linespoints lw 1 pt 6 ps 0.6"; colour="#99${colour#\#}" ;;
      esac
      plots+=", '$tmp/data' index $block using 1:2 with $style lc rgb '$colour' dt $dash"
      ((panel != 1)) || legend+=", NaN with $style lc rgb '$colour' dt $dash title '$name'"
    done <"$tmp/plan"
    echo "plot $plots"
  done < <(awk '!seen[$2]++ { print $2, $3 }' "$tmp/plan")
  # Series that the first panel lacks have no key entry; every bench_gemm run has them all.
  echo "set lmargin at screen 0.05; set rmargin at screen 0.99"
  echo "set bmargin at screen 0; set tmargin at screen 0.09"
  echo "unset border; unset tics; unset grid; unset title"
  echo "unset xlabel; unset ylabel; unset logscale; set xrange [0:1]; set yrange [0:1]"
  echo "set key center center horizontal maxrows 4 font ',10' samplen 3 width 2"
  echo "plot $legend"
  echo "unset multiplot"
} >"$tmp/body.gp"

for term in "pngcairo size 1800,950 font 'sans,10'" "svg size 1800,950 font 'sans,10'"; do
  ext=png
  [[ $term == svg* ]] && ext=svg
  printf 'set terminal %s\nset output "%s"\n' "$term" "$prefix.$ext" >"$tmp/plot.gp"
  cat "$tmp/body.gp" >>"$tmp/plot.gp"
  gnuplot "$tmp/plot.gp" 2>"$tmp/gnuplot.err" || die 1 "gnuplot failed: $(cat "$tmp/gnuplot.err")"
  [ ! -s "$tmp/gnuplot.err" ] || die 1 "gnuplot warned: $(cat "$tmp/gnuplot.err")"
done
echo "plot: wrote $prefix.png and $prefix.svg ($(wc -l <"$tmp/plan") series in $(
  awk '{ print $2 }' "$tmp/plan" | uniq | wc -l) panels)"
