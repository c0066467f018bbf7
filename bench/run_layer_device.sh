#!/usr/bin/env bash
# run_layer_device.sh -- bench_layer on the GPU machine in one call: libmgen's four GEMMs in a
# decoder layer's sequence of kernels beside cuBLAS FP16 (issue 50), both models, M 1-64, by
# events and under graph replay, both PDL trigger points of the stand-ins, f16 u4b8 g128.
#
#   OUT=$OUT bench/run_layer_device.sh [bench_layer options]   e.g. --fmt g128,nvfp4 --act all
#
# Configures build/ (Release, sm_80 + sm_90) only when it does not exist yet, builds the
# bench_layer target (a no-op when current; the kernel shards are the library's, so a build
# dir that has bench_gemm built needs only bench_layer's own files), and writes
# ${OUT:-bench}/layer.csv and layer.log; the summary (one table per model, mode and trigger)
# ends the log and stdout. The run takes ~30 s on an H200 after the build. Environment: OUT,
# BUILD_DIR (default build), MGEN_NVCC_JOBS (parallel nvcc jobs, default 8). Exits non-zero if
# the build fails, the run fails, or libmgen's layer disagrees with cuBLAS's (the check).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench}
build=${BUILD_DIR:-build}
mkdir -p "$out"
log=$out/layer.log
: >"$log"

if [ ! -d "$build" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="80;90" \
    -DMGEN_NVCC_JOBS="${MGEN_NVCC_JOBS:-8}" 2>&1 | tee -a "$log"
fi
start=$(date +%s)
cmake --build "$build" --target bench_layer 2>&1 | tee -a "$log"
echo "build: $(($(date +%s) - start)) s" | tee -a "$log"

# The card as found (clocks, temperature, power): the notes should say if it looked wrong.
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv 2>&1 | tee -a "$log" || true
args=(--model all --act f16 --fmt g128 --m "1,2,4,8,16,32,64" --mode both --trigger both --reps 50 "$@")
echo "run: $build/bench/bench_layer --csv $out/layer.csv ${args[*]}" | tee -a "$log"
start=$(date +%s)
"$build/bench/bench_layer" --csv "$out/layer.csv" "${args[@]}" 2>&1 | tee -a "$log"
echo "run: $(($(date +%s) - start)) s" | tee -a "$log"
