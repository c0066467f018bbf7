#!/usr/bin/env bash
# readme_figures_check.sh ROOT -- README.md's "## Current figures" tables (cuBLAS and vLLM's
# Marlin; CUTLASS) are what bench/readme_figures.py computes from the committed CSVs the
# section names, cell for cell.
# The script itself: known answers from hand-made CSVs (per-row cublas/mgen ratios whose
# geometric means are exact, a different one per M bucket, graph row and file), a missing row
# exits 2 naming the file; and --check fails naming the cell on copies of the README with one
# cell changed, and where the section stops naming a CSV.
. "$(dirname "$0")/../gen/lib.sh"
root=$1
fig=$root/bench/readme_figures.py

# The real table.
capture python3 "$fig" --root "$root" --check "$root/README.md"
expect_rc 0 "README's Current figures against the CSVs (python3 bench/readme_figures.py)"

# Known answers. Shapes 0-3 have ratio lo, 4-7 ratio hi: geomean sqrt(lo*hi).
fake=$tmp/root
mkdir -p "$fake/bench/results"
head=gpu,act,fmt,kernel,M,K,N,mgen_us,cublas_us,speedup,mgen_roofline_frac
head+=,cublas_roofline_frac,weight_GBps,reps,mgen_graph_us,cublas_graph_us
# results FILE LO_DECODE HI_DECODE LO_REST HI_REST: M 1-16 take the first pair, the rest the
# second; graph columns ratio 3 at M <= 16, unset (-1) beyond, as the bench writes them.
results() {
  local f=$1 act fmt m i lo hi g
  echo "$head" >"$f"
  for act in f16 bf16; do
    for fmt in u4b8_g128 u4b8_gc fe2m1_nvfp4 fe2m1_mxfp4; do
      for m in 1 2 4 8 16 32 64 128 256 512 1024 2048 4096; do
        for i in 0 1 2 3 4 5 6 7; do
          if [ "$m" -le 16 ]; then lo=$2 hi=$3 g=3; else lo=$4 hi=$5 g=-1; fi
          [ "$i" -lt 4 ] && hi=$lo
          echo "G,$act,$fmt,k,$m,$((1000 + i)),$((2000 + i)),1.000,$hi,0,0,0,0,30,1.000,$g"
        done
      done
    done
  done >>"$f"
}
results "$fake/bench/results/results-h200-v35-e2e.csv" 2 8 1 4
results "$fake/bench/results/results-h200-v33.csv" 0.5 1.62 0.5 1.62
{
  echo 'system,act,fmt,M,K,N,us,cublas_us'
  for af in fp16,u4b8_g128 fp16,u4b8_gch fp16,nvfp4_g16 bf16,u4b8_g128 fp16,mxfp4_none; do
    for m in 1 2 4 8 16 32 64 128; do
      for i in 0 1 2 3 4 5 6 7; do
        if [ "$m" -le 16 ]; then r=1.5; [ "$i" -lt 4 ] || r=6; else r=0.5; [ "$i" -lt 4 ] || r=2; fi
        echo "vllm-marlin,$af,$m,$((1000 + i)),$((2000 + i)),1.000,$r"
        echo "ist-marlin,$af,$m,$((1000 + i)),$((2000 + i)),1.000,9"
      done
    done
  done
} >"$fake/bench/results/anchors-h200-v35.csv"
# CUTLASS beside the default choice (v45): CUTLASS's time 2 and 8 (shapes 0-3, 4-7) at M <= 16,
# 1 and 4 beyond; marlin-gen 1 (f16) and 0.5 (e4m3): ratios 4 / 2 (f16), 8 / 4 (e4m3)
{
  echo 'gpu,act,fmt,kernel,M,K,N,mgen_us,cublas_us'
  for act in f16 e4m3; do
    t=1.000; [ "$act" = e4m3 ] && t=0.500
    for m in 1 16 64 128 256 512 1024 2048 4096; do
      for i in 0 1 2 3 4 5 6 7; do echo "G,$act,u4b8_g128,k,$m,$((1000 + i)),$((2000 + i)),$t,9"; done
    done
  done
} | xz >"$fake/bench/results/choice-h200-w4a8-v45.csv.xz"
{
  echo 'system,act,fmt,M,K,N,us,cublas_us'
  for m in 1 16 64 128 256 512 1024 2048 4096; do
    for i in 0 1 2 3 4 5 6 7; do
      if [ "$m" -le 16 ]; then r=2; [ "$i" -lt 4 ] || r=8; else r=1; [ "$i" -lt 4 ] || r=4; fi
      echo "cutlass_mixed,fp16,u4b8_g128,$m,$((1000 + i)),$((2000 + i)),$r,9"
    done
  done
} | xz >"$fake/bench/results/cutlass-mixed-h200-v45.csv.xz"
capture python3 "$fig" --root "$fake"
expect_rc 0 "readme_figures.py on hand-made CSVs"
want='| M | FP16 u4b8 g128 | FP16 u4b8 per channel | FP16 NVFP4 | FP16 MXFP4 | BF16 u4b8 g128 |
|---|---|---|---|---|---|
| 1-16 | **4.00** / 3.00 | **4.00** / 3.00 | **4.00** / 3.00 | **4.00** | **4.00** / 3.00 |
| 1-16, CUDA graph replay | **3.00** | **3.00** | **3.00** | **3.00** | **3.00** |
| 32-128 | **2.00** / 1.00 | **2.00** / 1.00 | **2.00** / 1.00 | **2.00** | **2.00** / 1.00 |
| 256 | **0.90** | **0.90** | **0.90** | **0.90** | **0.90** |
| 512-4096 | **0.90** | **0.90** | **0.90** | **0.90** | **0.90** |

| marlin-gen'"'"'s default choice | 1-16 | 64-128 | 256 | 512-4096 |
|---|---|---|---|---|
| W4A16 (FP16 activations) | 4.00 | 2.00 | 2.00 | 2.00 |
| W4A8 (FP8 E4M3 activations) | 8.00 | 4.00 | 4.00 | 4.00 |'
[ "$out" = "$want" ] || fail "hand-made CSVs: got
$out
expected
$want"
grep -v ',f16,u4b8_gc,k,64,1003,' "$fake/bench/results/results-h200-v35-e2e.csv" >"$tmp/cut"
cp "$tmp/cut" "$fake/bench/results/results-h200-v35-e2e.csv"
capture python3 "$fig" --root "$fake"
expect_rc 2 "a missing row"
expect_in "$err" "results-h200-v35-e2e.csv: act=f16 fmt=u4b8_gc M in 32,64,128: 23 rows, want 24" \
  "a missing row"
# the first table's CSV whole again; one CUTLASS point at another K than marlin-gen's
results "$fake/bench/results/results-h200-v35-e2e.csv" 2 8 1 4
xz -dc "$fake/bench/results/cutlass-mixed-h200-v45.csv.xz" |
  sed 's/^cutlass_mixed,fp16,u4b8_g128,256,1005,/cutlass_mixed,fp16,u4b8_g128,256,1009,/' >"$tmp/c.csv"
xz <"$tmp/c.csv" >"$fake/bench/results/cutlass-mixed-h200-v45.csv.xz"
capture python3 "$fig" --root "$fake"
expect_rc 2 "CUTLASS's points not marlin-gen's"
expect_in "$err" "act=f16 M in 256: not the same (M, K, N) points" "the unmatched points named"

# Mutants of the README: one cell each, and a CSV no longer named.
mutant() { # DESCRIPTION SED-EXPRESSION EXPECTED-MESSAGE
  sed "$2" "$root/README.md" >"$tmp/README.md"
  cmp -s "$root/README.md" "$tmp/README.md" && fail "mutant '$1' changed nothing"
  capture python3 "$fig" --root "$root" --check "$tmp/README.md"
  expect_rc 1 "mutant '$1'"
  expect_in "$err" "$3" "mutant '$1'"
}
mutant "bold figure" 's/^| 1-16 | \*\*2\.41\*\*/| 1-16 | **2.40**/' \
  'M 1-16, FP16 u4b8 g128 is **2.40** / 1.93; the CSVs give **2.41** / 1.93'
mutant "vLLM's figure" 's/\*\*1\.43\*\* \/ 0\.94/**1.43** \/ 0.95/' \
  'M 32-128, FP16 NVFP4 is **1.43** / 0.95; the CSVs give **1.43** / 0.94'
mutant "graph row" '/^| 1-16, CUDA graph/s/\*\*2\.59\*\*/**2.58**/' \
  'M 1-16, CUDA graph replay, BF16 u4b8 g128 is **2.58**; the CSVs give **2.59**'
mutant "row gone" '/^| 256 |/d' "no row '256' in the table"
mutant "CSV not named" 's/bench\/results\/anchors-h200-v35\.csv/the anchors/' \
  'does not name bench/results/anchors-h200-v35.csv'
mutant "CUTLASS figure" 's/^| W4A8 (FP8 E4M3 activations) | 1\.59 |/| W4A8 (FP8 E4M3 activations) | 1.60 |/' \
  "marlin-gen's default choice W4A8 (FP8 E4M3 activations), 1-16 is 1.60; the CSVs give 1.59"
mutant "CUTLASS table gone" "/^| marlin-gen's default choice |/,/^| W4A8 /d" "has 1 tables, want 2"
mutant "CUTLASS CSV not named" 's/bench\/results\/cutlass-mixed-h200-v45\.csv\.xz/its CSV/' \
  'does not name bench/results/cutlass-mixed-h200-v45.csv.xz'
echo "PASS: README's Current figures are the CSVs' (5 formats x 5 rows; CUTLASS 2 x 4), known answers, 8 mutants"
