#!/usr/bin/env bash
# run_sweep_device.sh -- the configuration sweep on the GPU machine: every valid, conflict-free
# kernel whose name matches GLOB, timed by bench_gemm --sweep on all benchmark shapes and M.
#
#   MARLIN_GEN=path/to/marlin-gen bench/run_sweep_device.sh GLOB [bench_gemm options]
#   e.g. ... 'mgen_*_f16_u4b8_g128_*' --fmt g128 --sweep 10
#
# The GPU machine has no Lua, so marlin-gen comes from elsewhere (a statically linked build
# carried over). It writes the kernels into $BUILD_DIR/generated (--space full, many shards
# so nvcc runs in parallel); libmgen and bench_gemm are then built from them with
# MGEN_GENERATE=OFF for this GPU's architecture only. Writes ${OUT:-bench}/sweep.csv and
# sweep.log (build times included). Environment: OUT, BUILD_DIR (default build-sweep),
# SHARDS (default 64), MGEN_NVCC_JOBS (default: the CPU count).
set -euo pipefail
cd "$(dirname "$0")/.."
glob=${1:?usage: MARLIN_GEN=... run_sweep_device.sh GLOB [bench_gemm options]}
shift
gen=${MARLIN_GEN:?set MARLIN_GEN to a marlin-gen binary}
out=${OUT:-bench}
build=${BUILD_DIR:-build-sweep}
mkdir -p "$out"
log=$out/sweep.log
: >"$log"

caps=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader) # all lines, then the first
arch=$(printf '%s\n' "$caps" | sed -n '1{s/[ .]//g;p}')
start=$(date +%s)
rm -rf "$build/generated"
"$gen" --space full --kernels "$glob" --shards "${SHARDS:-64}" --out "$build/generated" | tee -a "$log"
echo "kernels: $(grep -vc -e '^#' -e '^name' "$build/generated/manifest.tsv") (glob $glob, sm_$arch)" | tee -a "$log"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DMGEN_GENERATE=OFF -DMGEN_PREGENERATED="$PWD/$build/generated" \
  -DMGEN_NVCC_JOBS="${MGEN_NVCC_JOBS:-$(nproc)}" >>"$log" 2>&1
cmake --build "$build" --target bench_gemm 2>&1 | tail -3 | tee -a "$log"
echo "build: $(($(date +%s) - start)) s" | tee -a "$log"

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv 2>&1 | tee -a "$log" || true
start=$(date +%s)
echo "run: $build/bench/bench_gemm --csv $out/sweep.csv $*" | tee -a "$log"
"$build/bench/bench_gemm" --csv "$out/sweep.csv" "$@" >>"$log" 2>&1 || status=$?
echo "sweep: $(($(date +%s) - start)) s, exit ${status:-0}" | tee -a "$log"
sed -n '/# bench_gemm summary/,$p' "$log"
exit "${status:-0}"
