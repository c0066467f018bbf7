#!/usr/bin/env bash
# moe_readme_check.sh ROOT -- README.md's MoE figures (the geomeans beside vLLM's Marlin MoE at
# M 1-64 and M 256-4096) are what bench/moe_compare.py computes from the two CSVs the paragraph
# names. The script itself: known answers from hand-made CSVs (geomeans 1.50x and 2.00x, the
# row under 0.9x cuBLAS listed, a row without an anchor row counted; with the anchor's detail
# CSV the decode geomean per active expert), a changed figure fails naming it, a paragraph that
# names no CSV or quotes no figure exits 2.
. "$(dirname "$0")/../gen/lib.sh"
root=$1
cmp=$root/bench/moe_compare.py

# The real figures.
capture python3 "$cmp" --check "$root/README.md" --root "$root"
expect_rc 0 "README's MoE figures against the CSVs it names (python3 bench/moe_compare.py --check)"

# Known answers: decode rows 1.5x vLLM's (geomean of 1.0 and 2.25), large rows 2x.
fake=$tmp/root
mkdir -p "$fake/bench/results"
{
  echo "scenario,m,part,kernel,us,graph_us,active_experts,weight_GBps,copies,experts,topk,n,k"
  echo "mixtral,1,route,-,5.00,4.00,2,0,2,8,2,0,0"
  echo "mixtral,1,gate_up,k,100.00,90.00,2,0,2,8,2,28672,4096"
  echo "mixtral,1,down,k,100.00,90.00,2,0,2,8,2,4096,14336"
  echo "mixtral,1024,gate_up,k,100.00,90.00,8,0,2,8,2,28672,4096"
  echo "mixtral,1024,down,k,100.00,90.00,8,0,2,8,2,4096,14336"
  echo "mixtral+skew4,1024,down,k,100.00,90.00,8,0,2,8,2,4096,14336"
} >"$fake/bench/results/moe-x.csv"
{
  echo "system,scenario,gemm,act,fmt,M,E,topk,K,N,us,baseline_us,baseline_loop_us"
  echo "v,mixtral-8x7b-like,moe_align,-,-,1,8,2,0,0,6.0,,"
  echo "v,mixtral-8x7b-like,gemm1_gate_up,fp16,u4b8_g128,1,8,2,4096,28672,100.0,300.0,400.0"
  echo "v,mixtral-8x7b-like,gemm2_down,fp16,u4b8_g128,1,8,2,14336,4096,225.0,300.0,300.0"
  echo "v,mixtral-8x7b-like,gemm1_gate_up,fp16,u4b8_g128,1024,8,2,4096,28672,200.0,150.0,95.0"
  echo "v,mixtral-8x7b-like,gemm2_down,fp16,u4b8_g128,1024,8,2,14336,4096,200.0,85.0,90.0"
} >"$fake/bench/results/moe-anchor-x.csv"
capture python3 "$cmp" "$fake/bench/results/moe-x.csv" "$fake/bench/results/moe-anchor-x.csv"
expect_rc 0 "moe_compare.py on hand-made CSVs"
expect_in "$out" "M 1-64: geomean 1.50x vLLM's Marlin MoE over 2 GEMM rows" "decode geomean"
expect_in "$out" "M 256-4096: geomean 2.00x vLLM's Marlin MoE over 2 GEMM rows" "large geomean"
expect_in "$out" "lowest vs cuBLAS 0.85x (mixtral M=1024 down)" "the lowest cuBLAS ratio"
expect_in "$out" "under 0.9x cuBLAS: mixtral M=1024 down 0.85x" "the row under 0.9x listed"
case "$out" in *"gate_up 0.95x"*) fail "a row at 0.95x listed under 0.9x: $out" ;; esac
expect_in "$out" "1 marlin-gen row(s) without an anchor row" "the skewed row without an anchor row"
case "$out" in *"per active expert"*) fail "a per-expert geomean without the detail CSV: $out" ;; esac

# With the anchor's detail CSV: its routes at M = 1 activate 1 expert where bench_moe's
# activate 2, so per active expert the decode rows are 2.0x and 4.5x (geomean 3.00x).
{
  echo "system,scenario,routing,gemm,M,n_active_experts"
  echo "v,mixtral-8x7b-like,uniform,moe_align,1,1"
  echo "v,mixtral-8x7b-like,uniform,moe_align,1024,8"
} >"$tmp/detail.csv"
capture python3 "$cmp" "$fake/bench/results/moe-x.csv" "$fake/bench/results/moe-anchor-x.csv" "$tmp/detail.csv"
expect_rc 0 "moe_compare.py with the anchor's detail CSV"
expect_in "$out" "M 1-64: geomean 1.50x vLLM's Marlin MoE" "the measured decode geomean unchanged"
expect_in "$out" "per active expert (the anchor's routes activate other counts): geomean 3.00x" "the per-expert decode geomean"
sed -i '2d' "$tmp/detail.csv"
capture python3 "$cmp" "$fake/bench/results/moe-x.csv" "$fake/bench/results/moe-anchor-x.csv" "$tmp/detail.csv"
expect_in "$out" "per active expert: 2 decode row(s) without the anchor's active experts" "rows without a count named"
printf 'system,scenario,routing,gemm,M,n_active_experts\nv,mixtral-8x7b-like,uniform,moe_align,1,x\n' >"$tmp/detail.csv"
capture python3 "$cmp" "$fake/bench/results/moe-x.csv" "$fake/bench/results/moe-anchor-x.csv" "$tmp/detail.csv"
expect_rc 1 "a detail CSV with a count that is not a number"
expect_in "$err" "n_active_experts" "the bad column named"

# readme TEXT: a README whose MoE paragraph is TEXT.
readme() {
  printf '# x\n\n%s\n\nnext paragraph\n' "$1" >"$fake/README.md"
}
good='MoE layers beside it (`bench/results/moe-x.csv` beside `bench/results/moe-anchor-x.csv`):
**1.50x** vLLM'"'"'s at M 1-64 and **2.00x** at M 256-4096.'
readme "$good"
capture python3 "$cmp" --check "$fake/README.md" --root "$fake"
expect_rc 0 "a README quoting the known answers"
readme "${good/2.00x/2.01x}"
capture python3 "$cmp" --check "$fake/README.md" --root "$fake"
expect_rc 1 "a README with one figure changed"
expect_in "$err" "M 256-4096 says 2.01x" "the changed figure named"
readme "${good/\`bench\/results\/moe-x.csv\` beside /}"
capture python3 "$cmp" --check "$fake/README.md" --root "$fake"
expect_rc 2 "a paragraph naming no bench_moe CSV"
readme "${good/at M 1-64/for decode}"
capture python3 "$cmp" --check "$fake/README.md" --root "$fake"
expect_rc 2 "a paragraph quoting no decode figure"
echo "moe_readme_check: passed"
