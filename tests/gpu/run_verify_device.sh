#!/usr/bin/env bash
# run_verify_device.sh -- the GPU machine's verification pass over the default kernel set: build
# (sm_80 + sm_90), the gpu tests and compute-sanitizer memcheck over every kernel (--quick shapes,
# ctest -L sanitize), then a log of each under ${OUT:-verify}/.
#
#   tests/gpu/run_verify_device.sh
#   MUTANTS=.scratch/mutants tests/gpu/run_verify_device.sh   (tests/gpu/mutants/prepare.sh's
#        output, carried: then also every mutant must fail its test, run_mutants_device.sh)
#
# The other sanitizer tools (racecheck, synccheck, initcheck) over every kernel take several
# device calls: tests/gpu/run_sanitizers_device.sh GROUP... (its header lists the calls).
# Prints one summary line per step; exits non-zero if any step failed. A ctest step fails also
# where a test skipped or no test ran (ctest itself exits 0 then: a GPU test skips when it sees
# no GPU, e.g. CUDA_VISIBLE_DEVICES empty, and `-L sanitize` selects nothing without
# compute-sanitizer): scripts/ctest-skips.sh checks its log, and the skips are listed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
out=${OUT:-verify}
build=${BUILD_DIR:-build}
mkdir -p "$out"
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
ctest_step() { # ctest_step NAME LOG CTEST-ARGS...: step, then no test of it may skip or be missing
  local name=$1 log=$2
  shift 2
  step "$name" "$log" ctest --test-dir "$build" --no-tests=error "$@"
  step "$name: none skipped" "${log%.log}_skips.log" bash scripts/ctest-skips.sh "$out/$log" "$build"
  grep -E "^  " "$out/${log%.log}_skips.log" | tail -20
}

if [ ! -d "$build" ]; then # MGEN_LINEINFO: compute-sanitizer's reports name source lines
  step configure configure.log cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES="80;90" -DMGEN_NVCC_JOBS="$(nproc)" -DMGEN_LINEINFO=ON
else
  step configure configure.log cmake -S . -B "$build" -DMGEN_LINEINFO=ON
fi
step build build.log cmake --build "$build"
ctest_step "ctest -L gpu" ctest_gpu.log -L gpu -LE sanitize --output-on-failure
# The gpu.sanitize.* tests: memcheck over every kernel on the --quick shapes (-V keeps the
# ERROR SUMMARY lines in the log).
ctest_step "ctest -L sanitize (memcheck)" memcheck.log -L sanitize -V
if [ -n "${MUTANTS:-}" ]; then
  step "mutants (each must fail its test)" mutants.log env OUT="$out" \
    bash tests/gpu/run_mutants_device.sh "$MUTANTS"
  grep -E "^mutant" "$out/mutants.log" | tail -12
fi
exit $status
