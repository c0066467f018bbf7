#!/usr/bin/env bash
# run_tune_device.sh -- the autotuner on the GPU machine, one script: build what it needs, run
# the tuning and cache tests, time marlin-tune over the 8 benchmark shapes x 13 M values (u4b8
# g128, then all four u4b8 formats), print which kernel won where, and measure the host time
# mgen_gemm adds with a warm cache.
#
#   bench/run_tune_device.sh
#
# Configures build/ (Release, sm_80 + sm_90) only when it does not exist yet, like
# run_device.sh. Writes $OUT/tune.log (everything), tune-g128.cache, tune-all.cache and
# tune-show.txt. Environment: OUT (default bench), BUILD_DIR (default build), MGEN_NVCC_JOBS
# (default 8). Exits non-zero if a build, test or budget check fails.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench}
build=${BUILD_DIR:-build}
mkdir -p "$out"
log=$out/tune.log
: >"$log"

if [ ! -d "$build" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="80;90" \
    -DMGEN_NVCC_JOBS="${MGEN_NVCC_JOBS:-8}" 2>&1 | tee -a "$log"
fi
cmake --build "$build" --target marlin-tune bench_host test_tune_gpu test_tune test_cache_io \
  test_cache_file 2>&1 | tail -3 | tee -a "$log"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv 2>&1 | tee -a "$log" || true

# The CPU tests of the tuner and cache, and the GPU test: tuned vs default on the benchmark
# shapes, a cache used by another process, stream capture, 6 threads on 6 streams.
ctest --test-dir "$build" -R 'test_tune|test_cache' -LE gpu --output-on-failure 2>&1 | tee -a "$log"
"$build/tests/test_tune_gpu" 2>&1 | tee -a "$log"

# The budget: 8 shapes x 13 M in <= 30 s (g128); then all four u4b8 formats for reference.
tune=$build/runtime/marlin-tune
rm -f "$out/tune-g128.cache" "$out/tune-all.cache"
# (In a pipe marlin-tune prints no progress, only its summary and any warning.)
"$tune" --preset bench -o "$out/tune-g128.cache" 2>&1 | tee -a "$log"
"$tune" --preset bench --fmt g32,g64,g128,gc -o "$out/tune-all.cache" 2>&1 | tee -a "$log"
"$tune" --show "$out/tune-g128.cache" >"$out/tune-show.txt"
tail -18 "$out/tune-show.txt" | tee -a "$log"

# Host time per mgen_gemm call with a warm cache (budget 1 us; exit 1 beyond).
"$build/bench/bench_host" 2>&1 | tee -a "$log"
