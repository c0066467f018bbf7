#!/usr/bin/env bash
# run_device.sh -- the one script for the GPU machine: build bench_gemm if needed, run it, keep
# the CSV and the log.
#
#   bench/run_device.sh [bench_gemm options]     e.g. --fmt all, --all-kernels, --quick
#   bench/run_device.sh --build-only             (for scripts that run bench_gemm their own way)
#
# Configures build/ (Release, sm_80 + sm_90) only when it does not exist yet, rebuilds the
# bench target (a no-op when current), and writes ${OUT:-bench}/bench.csv and bench.log; the
# summary ends the log and stdout. Environment: OUT, BUILD_DIR (default build), MGEN_NVCC_JOBS
# (parallel nvcc jobs for the kernel shards, default 8). Exits non-zero if the build fails or
# a row fails bench_gemm's sanity check.
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=0
if [ "${1:-}" = --build-only ]; then build_only=1; shift; fi
out=${OUT:-bench}
build=${BUILD_DIR:-build}
mkdir -p "$out"
log=$out/bench.log
: >"$log"

if [ ! -d "$build" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="80;90" \
    -DMGEN_NVCC_JOBS="${MGEN_NVCC_JOBS:-8}" 2>&1 | tee -a "$log"
fi
start=$(date +%s)
cmake --build "$build" --target bench_gemm 2>&1 | tee -a "$log"
echo "build: $(($(date +%s) - start)) s" | tee -a "$log"
[ "$build_only" = 0 ] || exit 0

# The card as found (clocks, temperature, power): the notes should say if it looked wrong.
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv 2>&1 | tee -a "$log" || true
echo "run: $build/bench/bench_gemm --csv $out/bench.csv $*" | tee -a "$log"
"$build/bench/bench_gemm" --csv "$out/bench.csv" "$@" 2>&1 | tee -a "$log"
