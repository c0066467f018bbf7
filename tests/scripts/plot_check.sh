#!/usr/bin/env bash
# plot_check.sh ROOT data|picture -- bench/plot.sh, the benchmark plot command.
# data: the series it draws (--data) from hand-made CSVs with known answers: speedup as given,
#   the ideal = cublas_us * cublas_roofline_frac / (mgen_us * mgen_roofline_frac), columns
#   found by name (a CSV without `act` is FP16), a compared CSV's series labelled and limited
#   to the first CSV's shapes; bad input exits 2 naming the file, line and column. No gnuplot.
# picture: PNG and SVG of the committed H200 CSV against the previous run: a PNG file, an SVG
#   with every panel and key entry (needs gnuplot: scripts/install-deps.sh installs it).
. "$(dirname "$0")/../gen/lib.sh"
root=$1 mode=$2
plot=$root/bench/plot.sh

if [ "$mode" = data ]; then
  cat >"$tmp/a.csv" <<'CSV'
gpu,act,fmt,kernel,M,K,N,mgen_us,cublas_us,speedup,mgen_roofline_frac,cublas_roofline_frac,weight_GBps,reps
G1,f16,u4b8_g128,k1,16,4096,12288,10,30,3.000,0.5,0.8,1,30
G1,f16,u4b8_g128,k1,1,4096,12288,10,25,2.500,0.5,0.8,1,30
G1,bf16,u4b8_g128,k1,1,4096,12288,20,25,1.250,0.25,0.8,1,30
G1,f16,u4b8_g128,k1,1,8192,8192,40,20,0.500,0.5,0.5,1,30
CSV
  capture "$plot" "$tmp/a.csv" --data
  expect_rc 0 "plot.sh --data"
  # Sorted by panel (first seen), series (first seen), M. Ideals: 25*0.8/(10*0.5) = 4,
  # 30*0.8/(10*0.5) = 4.8, 20*0.5/(40*0.5) = 0.5; bf16's row adds no second u4b8 ideal.
  want="1 2.5 12288x4096 f16 u4b8_g128
16 3 12288x4096 f16 u4b8_g128
1 4 12288x4096 ideal u4b8_g128
16 4.8 12288x4096 ideal u4b8_g128
1 1.25 12288x4096 bf16 u4b8_g128
1 0.5 8192x8192 f16 u4b8_g128
1 0.5 8192x8192 ideal u4b8_g128"
  [ "$out" = "$want" ] || fail "plot.sh --data printed:"$'\n'"$out"$'\n'"expected:"$'\n'"$want"

  # Columns by name, in any order, no act column (an FP16-only run), CRLF line ends; and a
  # compared CSV: its shape 1x1 is not in the first CSV, so only 12288x4096 stays.
  {
    printf 'speedup,N,K,M,fmt,mgen_us,cublas_us,cublas_roofline_frac,mgen_roofline_frac\r\n'
    printf '%s\r\n' "2.000,12288,4096,1,u4b8_g128,10,20,1,0.5" "9,64,64,1,u4b8_g128,1,1,1,1"
  } >"$tmp/b.csv"
  capture "$plot" "$tmp/a.csv" --compare "$tmp/b.csv" --label "old run" --data
  expect_rc 0 "plot.sh --compare --data"
  expect_in "$out" "1 2 12288x4096 old run: f16 u4b8_g128" "the compared CSV's series"
  case "$out" in *64x64*) fail "a compared shape the first CSV lacks was kept: $out" ;; esac
  case "$out" in *"old run: ideal"*) fail "a compared CSV got an ideal: $out" ;; esac

  # Bad input: exit 2, and the message names what is wrong.
  sed 's/,speedup,/,speed,/' "$tmp/a.csv" >"$tmp/nocol.csv"
  sed '3s/^G1,f16,u4b8_g128,k1,1,/G1,f16,u4b8_g128,k1,x,/' "$tmp/a.csv" >"$tmp/nan.csv"
  head -1 "$tmp/a.csv" >"$tmp/header.csv"
  : >"$tmp/empty.csv"
  for bad in "nocol.csv:no 'speedup' column" "nan.csv:line 3: M is 'x', not a number" \
             "header.csv:no data rows" "empty.csv:empty file" \
             "missing.csv:no such readable file"; do
    capture "$plot" "$tmp/${bad%%:*}" --data
    expect_rc 2 "plot.sh ${bad%%:*}"
    expect_in "$err" "${bad#*:}" "plot.sh ${bad%%:*}"
  done
  capture "$plot" "$tmp/a.csv" --bogus
  expect_rc 2 "plot.sh --bogus"
  expect_in "$err" "unknown option '--bogus'" "plot.sh --bogus"
  echo "plot_check data: series, ideal, compare and bad input ok"
  exit 0
fi

csv=$root/bench/results/results-h200-v6.csv
capture "$plot" "$csv" --compare "$root/bench/results/results-h200-v5.csv" --label "H200 v5" -o "$tmp/p"
expect_rc 0 "plot.sh of $csv"
[ "$(od -An -tx1 -N8 "$tmp/p.png" | tr -d ' \n')" = 89504e470d0a1a0a ] ||
  fail "$tmp/p.png is not a PNG file"
svg=$(cat "$tmp/p.svg")
expect_in "$svg" "<svg" "the SVG"
shapes=$(awk -F, 'NR > 1 { print $7 " x " $6 }' "$csv" | sort -u)
[ "$(printf '%s\n' "$shapes" | wc -l)" -eq 8 ] || fail "expected 8 shapes in $csv"
while read -r shape; do
  expect_in "$svg" ">$shape (N x K)<" "the SVG's panel $shape"
done <<<"$shapes"
for entry in "cuBLAS (1x)" "f16 u4b8_g128" "bf16 fe2m1_mxfp4" "ideal fe2m1_nvfp4" \
             "H200 v5: f16 u4b8_g128"; do
  expect_in "$svg" ">$entry<" "the SVG's key"
done
echo "plot_check picture: PNG and SVG with 8 panels and the key"
