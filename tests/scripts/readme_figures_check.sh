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

# Known answers. Shapes 0-3 have ratio lo, 4-7 ratio hi: geomean sqrt(lo*hi), one per bucket.
fake=$tmp/root
mkdir -p "$fake/bench/results"
head=gpu,act,fmt,kernel,M,K,N,mgen_us,cublas_us,speedup,mgen_roofline_frac
head+=,cublas_roofline_frac,weight_GBps,reps,mgen_graph_us,cublas_graph_us
# results FILE: M 1-16 ratios 2 and 8 (4.00), M 32-128 1 and 4 (2.00), M >= 256 0.5 and 1.62
# (0.90); graph columns ratio 3 at M <= 16, unset (-1) beyond, as the bench writes them.
results() {
  local f=$1 act fmt m i lo hi g
  for act in f16 bf16; do
    for fmt in u4b8_g128 u4b8_gc fe2m1_nvfp4 fe2m1_mxfp4; do
      for m in 1 2 4 8 16 32 64 128 256 512 1024 2048 4096; do
        for i in 0 1 2 3 4 5 6 7; do
          if [ "$m" -le 16 ]; then lo=2 hi=8 g=3; elif [ "$m" -le 128 ]; then lo=1 hi=4 g=-1
          else lo=0.5 hi=1.62 g=-1; fi
          [ "$i" -lt 4 ] && hi=$lo
          echo "G,$act,$fmt,k,$m,$((1000 + i)),$((2000 + i)),1.000,$hi,0,0,0,0,30,1.000,$g"
        done
      done
    done
  done | { echo "$head"; cat; } | xz >"$f"
}
results "$fake/bench/results/results-h200-v74-e2e.csv.xz"
# vLLM's Marlin over its cuBLAS: 1.5 and 6 (3.00) at M <= 16, 0.5 and 2 (1.00) at 32-128, 0.25
# and 1 (0.50) from 256.
{
  echo 'system,act,fmt,M,K,N,us,cublas_us'
  for af in fp16,u4b8_g128 fp16,u4b8_gch fp16,nvfp4_g16 bf16,u4b8_g128 fp16,mxfp4_none; do
    for m in 1 2 4 8 16 32 64 128 256 512 1024 2048 4096; do
      for i in 0 1 2 3 4 5 6 7; do
        if [ "$m" -le 16 ]; then r=1.5; [ "$i" -lt 4 ] || r=6
        elif [ "$m" -le 128 ]; then r=0.5; [ "$i" -lt 4 ] || r=2
        else r=0.25; [ "$i" -lt 4 ] || r=1; fi
        echo "vllm-marlin,$af,$m,$((1000 + i)),$((2000 + i)),1.000,$r"
        echo "ist-marlin,$af,$m,$((1000 + i)),$((2000 + i)),1.000,9"
      done
    done
  done
} | xz >"$fake/bench/results/anchors-h200-v74.csv.xz"
# CUTLASS beside marlin-gen's choice (mgen_us 1) in v74's call: FP16 2 and 8 (shapes 0-3, 4-7)
# at M <= 16, 1 and 4 beyond (4 / 2); BF16 twice that (8 / 4).
{
  echo 'system,act,fmt,M,K,N,us,cublas_us'
  for act in fp16 bf16; do
    for m in 1 16 64 128 256 512 1024 2048 4096; do
      for i in 0 1 2 3 4 5 6 7; do
        if [ "$m" -le 16 ]; then r=2; [ "$i" -lt 4 ] || r=8; else r=1; [ "$i" -lt 4 ] || r=4; fi
        [ "$act" = bf16 ] && r=$((r * 2))
        echo "cutlass_mixed,$act,u4b8_g128,$m,$((1000 + i)),$((2000 + i)),$r,9"
      done
    done
  done
} | xz >"$fake/bench/results/cutlass-mixed-h200-v74.csv.xz"
# W4A8 beside CUTLASS (v45's call): CUTLASS's time as above (FP16), marlin-gen 1 (f16) and 0.5
# (e4m3): ratios 8 / 4 (e4m3)
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
| 256 | **0.90** / 0.50 | **0.90** / 0.50 | **0.90** / 0.50 | **0.90** | **0.90** / 0.50 |
| 512-4096 | **0.90** / 0.50 | **0.90** / 0.50 | **0.90** / 0.50 | **0.90** | **0.90** / 0.50 |

| marlin-gen'"'"'s default choice | 1-16 | 64-128 | 256 | 512-4096 |
|---|---|---|---|---|
| W4A16, FP16 activations | 4.00 | 2.00 | 2.00 | 2.00 |
| W4A16, BF16 activations | 8.00 | 4.00 | 4.00 | 4.00 |
| W4A8, FP8 E4M3 activations (v45'"'"'s call) | 8.00 | 4.00 | 4.00 | 4.00 |'
[ "$out" = "$want" ] || fail "hand-made CSVs: got
$out
expected
$want"
xz -dc "$fake/bench/results/results-h200-v74-e2e.csv.xz" | grep -v ',f16,u4b8_gc,k,64,1003,' |
  xz >"$tmp/cut.xz"
cp "$tmp/cut.xz" "$fake/bench/results/results-h200-v74-e2e.csv.xz"
capture python3 "$fig" --root "$fake"
expect_rc 2 "a missing row"
expect_in "$err" "results-h200-v74-e2e.csv.xz: act=f16 fmt=u4b8_gc M in 32,64,128: 23 rows, want 24" \
  "a missing row"
# the first table's CSV whole again; one CUTLASS point at another K than marlin-gen's
results "$fake/bench/results/results-h200-v74-e2e.csv.xz"
xz -dc "$fake/bench/results/cutlass-mixed-h200-v74.csv.xz" |
  sed 's/^cutlass_mixed,fp16,u4b8_g128,256,1005,/cutlass_mixed,fp16,u4b8_g128,256,1009,/' >"$tmp/c.csv"
xz <"$tmp/c.csv" >"$fake/bench/results/cutlass-mixed-h200-v74.csv.xz"
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
mutant "bold figure" 's/^| 1-16 | \*\*2\.36\*\*/| 1-16 | **2.35**/' \
  'M 1-16, FP16 u4b8 g128 is **2.35** / 1.92; the CSVs give **2.36** / 1.92'
mutant "vLLM's figure" 's/\*\*1\.46\*\* \/ 0\.94/**1.46** \/ 0.95/' \
  'M 32-128, FP16 NVFP4 is **1.46** / 0.95; the CSVs give **1.46** / 0.94'
mutant "vLLM's figure at 512-4096" '/^| 512-4096 |/s/\*\*0\.97\*\* \/ 0\.50/**0.97** \/ 0.51/' \
  'M 512-4096, BF16 u4b8 g128 is **0.97** / 0.51; the CSVs give **0.97** / 0.50'
mutant "graph row" '/^| 1-16, CUDA graph/s/\*\*2\.56\*\*/**2.57**/' \
  'M 1-16, CUDA graph replay, BF16 u4b8 g128 is **2.57**; the CSVs give **2.56**'
mutant "row gone" '/^| 256 |/d' "no row '256' in the table"
mutant "CSV not named" 's/bench\/results\/anchors-h200-v74\.csv\.xz/the anchors/' \
  'does not name bench/results/anchors-h200-v74.csv.xz'
mutant "CUTLASS figure" 's/^| W4A16, BF16 activations | 1\.66 |/| W4A16, BF16 activations | 1.67 |/' \
  "marlin-gen's default choice W4A16, BF16 activations, 1-16 is 1.67; the CSVs give 1.66"
mutant "CUTLASS table gone" "/^| marlin-gen's default choice |/,/^| W4A8, /d" "has 1 tables, want 2"
mutant "CUTLASS CSV not named" 's/bench\/results\/cutlass-mixed-h200-v45\.csv\.xz/its CSV/' \
  'does not name bench/results/cutlass-mixed-h200-v45.csv.xz'
echo "PASS: README's Current figures are the CSVs' (5 formats x 5 rows; CUTLASS 3 x 4), known answers, 9 mutants"
