#!/usr/bin/env bash
# run_verify_device.sh -- the GPU machine's verification pass over the default kernel set: build
# (sm_80 + sm_90), the gpu tests, compute-sanitizer memcheck over every kernel (--quick shapes,
# ctest -L sanitize) and racecheck over a subset, then a log of each under ${OUT:-verify}/.
#
#   tests/gpu/run_verify_device.sh [RACECHECK_GLOBS [FP4_RACECHECK_GLOBS]]
#
# racecheck is ~3 s per kernel even on the quick shapes, so it runs the kernels that
# RACECHECK_GLOBS (u4b8; default: one kernel per pipeline depth extreme and per tile family)
# and FP4_RACECHECK_GLOBS (fe2m1) select, in one test_gemm_gpu run (MGEN_TEST_KERNELS,
# comma-separated globs). Prints one summary line per step; exits non-zero if any step failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-verify}
build=${BUILD_DIR:-build}
mkdir -p "$out"
race=${1:-'*_f16_u4b8_g128_16x256x128_s2_w4_*,*_f16_u4b8_g128_64x256x128_s2_w8_*,*_f16_u4b8_g128_16x64x128_s8_w4_*,*_f16_u4b8_g128_32x64x128_s3_w4_*,*_f16_u4b8_g32_32x256x128_s2_w8_*,*_u4b8_gc_48x256x128_s[23]_w8_*,*_f16_u4b8_g64_64x256x64_s6_w4_*,*_f16_u4b8_gc_64x128x128_s2_w4_*'}
race_fp4=${2:-'*_f16_fe2m1_g16_16x256x128_s2_w4_*,*_bf16_fe2m1_g32_64x64x128_s3_w4_*,*_f16_fe2m1_g16_16x128x64_s4_w4_*'}
status=0
step() { # step NAME LOG COMMAND...: runs, prints rc and seconds and the log's summary lines
  local name=$1 log=$out/$2 start rc
  shift 2
  start=$(date +%s)
  "$@" >"$log" 2>&1
  rc=$?
  echo "$name: rc=$rc $(($(date +%s) - start)) s"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|kernels tested|tests passed|tuning:|CHECK|FAIL" "$log" | tail -6
  [ "$rc" = 0 ] || status=1
}

if [ ! -d "$build" ]; then
  step configure configure.log cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES="80;90" -DMGEN_NVCC_JOBS="$(nproc)"
fi
step build build.log cmake --build "$build"
step "ctest -L gpu" ctest_gpu.log ctest --test-dir "$build" -L gpu -LE sanitize --output-on-failure
# The gpu.sanitize.* tests: memcheck over every kernel on the --quick shapes (-V keeps the
# ERROR SUMMARY lines in the log).
step "ctest -L sanitize (memcheck)" memcheck.log ctest --test-dir "$build" -L sanitize -V
MGEN_TEST_KERNELS=$race,$race_fp4 step "racecheck test_gemm_gpu" racecheck_gemm.log \
  compute-sanitizer --tool racecheck --racecheck-report hazard --error-exitcode 1 \
  "$build/tests/test_gemm_gpu" --quick
exit $status
