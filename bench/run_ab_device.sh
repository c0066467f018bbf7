#!/usr/bin/env bash
# run_ab_device.sh -- an A/B of kernel trees on the GPU machine: the same kernels generated two
# or more ways (a template or spec change against the committed snapshot), each built into its
# own libmgen + bench_gemm, then timed in alternating rounds in one call so that every variant
# sees the same card and clocks (ROUNDS 2 or more, even, to cancel the order's bias).
#
#   VARIANTS="base:generated new:.scratch/gen-new" bench/run_ab_device.sh [bench_gemm options]
#   e.g. ... --act f16 --fmt g128,nvfp4 --m 1,16,32,64,128,256 --reps 10
#
# Each variant is NAME:DIR, DIR a marlin-gen output directory (relative to the repository or
# absolute; `marlin-gen --templates templates --out DIR` writes one from uncommitted templates).
# bench_gemm runs with --all-kernels and the options given. Writes ${OUT:-bench}/ab.csv: the
# variant and round, then bench_gemm's columns; bench/ab_compare.awk sums it up; the build and
# round logs go into ${OUT:-bench}/ab-logs.tar.xz (the GPU machine's tool brings back at most 8
# files). Environment:
# OUT, ROUNDS (default 2), MGEN_NVCC_JOBS (default: the CPU count).
set -euo pipefail
cd "$(dirname "$0")/.."
variants=${VARIANTS:?set VARIANTS to "NAME:DIR NAME:DIR ..."}
out=${OUT:-bench}
mkdir -p "$out"
caps=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader) # all lines, then the first
arch=$(printf '%s\n' "$caps" | sed -n '1{s/[ .]//g;p}')
start=$(date +%s)
for vd in $variants; do
  name=${vd%%:*} dir=${vd#*:}
  case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
  [ -f "$dir/manifest.tsv" ] || { echo "run_ab_device: $dir has no manifest.tsv (not a marlin-gen output)" >&2; exit 2; }
  cmake -S . -B "build-ab-$name" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
    -DMGEN_GENERATE=OFF -DMGEN_PREGENERATED="$dir" -DMGEN_NVCC_JOBS="${MGEN_NVCC_JOBS:-$(nproc)}" >"$out/ab-build-$name.log" 2>&1
  cmake --build "build-ab-$name" --target bench_gemm >>"$out/ab-build-$name.log" 2>&1 ||
    { tail -20 "$out/ab-build-$name.log"; exit 1; }
  echo "built $name from $dir: $(($(date +%s) - start)) s"
done
: >"$out/ab.csv"
# Even rounds run the variants in reverse order: an A/B of two identical trees (notes v25 item 1)
# read the variant timed second in a round ~0.5% slower, so a fixed order would bias every A/B.
reversed=$(printf '%s\n' $variants | tac | tr '\n' ' ')
for round in $(seq 1 "${ROUNDS:-2}"); do
  order=$variants
  [ $((round % 2)) = 1 ] || order=$reversed
  for vd in $order; do
    name=${vd%%:*}
    "build-ab-$name/bench/bench_gemm" --all-kernels --csv "$out/ab-$name-$round.csv" "$@" >"$out/ab-$name-$round.log" 2>&1 ||
      { tail -5 "$out/ab-$name-$round.log"; exit 1; }
    # variant,round, then bench_gemm's header once and its rows
    if [ ! -s "$out/ab.csv" ]; then sed -n '1s/^/variant,round,/p' "$out/ab-$name-$round.csv" >"$out/ab.csv"; fi
    sed "1d;s/^/$name,$round,/" "$out/ab-$name-$round.csv" >>"$out/ab.csv"
    rm -f "$out/ab-$name-$round.csv"
    echo "round $round $name: $(($(date +%s) - start)) s"
  done
done
# The GPU machine's tool brings back at most 8 files from $OUT: the logs go into one archive.
(cd "$out" && tar cJf ab-logs.tar.xz --remove-files -- ab-*.log) || true
