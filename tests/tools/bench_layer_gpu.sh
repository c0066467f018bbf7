#!/usr/bin/env bash
# bench_layer_gpu.sh BENCH_LAYER -- bench_layer end to end on the GPU, small (llama3-70b-tp4,
# M 1 and 16, 3 reps): it exits 0, so libmgen's layer agreed with cuBLAS's in every variant
# and trigger (its check), says so in its summary, and writes one CSV row per (trigger, mode,
# M, variant) with a positive time in each. Exit 77 (skipped) where there is no device; a
# CUDA that cannot start fails.
. "$(dirname "$0")/../gen/lib.sh"
bench=$1
csv=$tmp/layer.csv
capture "$bench" --model llama3-70b-tp4 --m 1,16 --reps 3 --warmup 1 --csv "$csv"
case "$err" in *"no CUDA device here"*)
  echo "SKIPPED: $(grep -m1 'no CUDA device here' <<<"$err")"
  exit 77
  ;;
esac
expect_rc 0 "bench_layer (stderr and stdout above)"
# Per M and trigger, mgen_plain once and mgen_pdl eager and from a graph, 5 outputs each:
# 2 M x 2 triggers x 3 runs x 5.
expect_in "$out" "check: 60 outputs vs cuBLAS on the same dequantized weights (tolerance 0.05): 0 failed" \
  "bench_layer's summary"
header="gpu,model,act,fmt,ctx,layers,trigger,mode,M,variant,layer_us,standins_us,gemm_us,gemm_speedup,layer_speedup,weight_GBps,kernels"
[ "$(sed -n 1p "$csv")" = "$header" ] || fail "CSV header: $(sed -n 1p "$csv")"
awk -F, 'NR > 1 {
  rows++
  if (NF != 17) { print "row " NR ": " NF " fields"; bad++ }
  if ($2 != "llama3-70b-tp4" || $3 != "f16" || $4 != "u4b8_g128" || $5 != 1024) { print "row " NR ": " $0; bad++ }
  if (!($11 > 0) || !($12 > 0)) { print "row " NR ": times " $11 ", " $12; bad++ }
  seen[$7 "," $8 "," $9 "," $10]++
  if ($10 == "standins" && ($13 != "" || $17 != "")) { print "row " NR ": stand-ins with GEMM fields"; bad++ }
  if ($10 ~ /^mgen_/ && split($17, k, ";") != 4) { print "row " NR ": kernels " $17; bad++ }
} END {
  n = 0
  for (key in seen) { n++; if (seen[key] != 1) { print key " " seen[key] " times"; bad++ } }
  if (rows != 32 || n != 32) { print rows " rows, " n " distinct, expected 32"; bad++ }
  exit bad > 0
}' "$csv" >"$tmp/awk.out" || fail "bench_layer's CSV: $(cat "$tmp/awk.out")"
echo "bench_layer_gpu: ok"
