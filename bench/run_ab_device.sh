#!/usr/bin/env bash
# run_ab_device.sh -- an A/B of kernel trees on the GPU machine: the same kernels generated two
# or more ways (a template or spec change against the committed snapshot), each built into its
# own libmgen + bench_gemm (or bench_moe: BENCH), then timed in alternating rounds in one call
# so that every variant sees the same card and clocks (ROUNDS 2 or more, even, to cancel the
# order's bias).
#
#   VARIANTS="base:generated new:.scratch/gen-new" bench/run_ab_device.sh [BENCH's options]
#   e.g. ... --act f16 --fmt g128,nvfp4 --m 1,16,32,64,128,256 --reps 10
#
# Each variant is NAME:DIR, DIR a marlin-gen output directory (relative to the repository or
# absolute; `marlin-gen --templates templates --out DIR` writes one from uncommitted templates).
# bench_gemm runs with --all-kernels and the options given. Writes ${OUT:-bench}/ab.csv: the
# variant and round, then the program's columns; bench/ab_compare.awk sums it up; the build and
# round logs go into ${OUT:-bench}/ab-logs.tar.xz (the GPU machine's tool brings back at most 8
# files). Environment:
# OUT, ROUNDS (default 2), MGEN_NVCC_JOBS (default: the CPU count), AB_ABLATION (1: variants
# may fail the sanity check, see bench/ab_rounds.sh), BENCH (bench_gemm, or bench_moe for a
# change of the moe kernels: its options then, e.g. --m 1,4,16,64 --parts gate_up,down).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/ab_rounds.sh
variants=${VARIANTS:?set VARIANTS to "NAME:DIR NAME:DIR ..."}
bench=$(ab_bench) || exit 2
ab_variants run_ab_device "$variants" || exit 2
out=${OUT:-bench}
mkdir -p "$out"
arch=$(ab_arch)
start=$(date +%s)
for vd in $variants; do
  name=${vd%%:*} dir=${vd#*:}
  case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
  ab_configure "$name" "$dir" "$arch" >"$out/ab-build-$name.log" 2>&1
  cmake --build "build-ab-$name" --target "$bench" >>"$out/ab-build-$name.log" 2>&1 ||
    { tail -20 "$out/ab-build-$name.log"; exit 1; }
  echo "built $name from $dir: $(($(date +%s) - start)) s"
done
bins=()
for vd in $variants; do bins+=("${vd%%:*}=build-ab-${vd%%:*}/bench/$bench"); done
# bench_gemm times every kernel of the variant's table (--all-kernels); bench_moe has no such
# option: its rows are the choice's (or --kernels GLOBS's).
all=(--all-kernels)
[ "$bench" = bench_gemm ] || all=()
ab_rounds "$out" "${ROUNDS:-2}" "$start" "${bins[@]}" -- "${all[@]}" "$@"
ab_pack_logs "$out"
