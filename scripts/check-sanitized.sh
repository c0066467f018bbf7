#!/usr/bin/env bash
# check-sanitized.sh [BUILD_DIR] -- the CPU tests on a build whose host C code (runtime,
# generator, tools, tests) is compiled with AddressSanitizer and UndefinedBehaviorSanitizer
# (MGEN_SANITIZE=address,undefined; default BUILD_DIR: build-asan). .ci/run runs it after the
# plain build's tests; it takes about 3 minutes on 2 cores.
#
# The kernels are nvcc's and not instrumented, so one kernel for sm_80 is enough (the table is
# a subset: the tests that compare with the default table know it). The fuzz tests are left
# out: tests/fuzz builds its targets with sanitizers of its own, and the plain build runs them.
# libmgen is the default shared libmgen.so here too, instrumented, so the programs linked to it
# (mgen_demo, runtime.broken_driver) run it under the sanitizers. install.consumers is left
# out: its consumers are projects outside this one, built without -fsanitize against the
# installed (instrumented) libmgen.so, and ASan refuses to start in a program whose first
# library is not its runtime ("ASan runtime does not come first"); what it tests (install,
# exported symbols, link lines) does not depend on the sanitizers, and the plain build runs it.
# So are examples.build (the examples are such consumers) and tools.tune_linkage (marlin-tune
# run against a stand-in libmgen built for the test): linkage, which the plain build checks.
#
# Any sanitizer report fails the script, even one from a program that a test expected to fail
# (a crash with exit status 1 could pass for an error exit): the reports go to files under
# BUILD_DIR/sanitizer-reports, which must stay empty, and are printed here.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-asan}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMGEN_SANITIZE=address,undefined -DCMAKE_CUDA_ARCHITECTURES=80 \
  -DMGEN_KERNELS=mgen_sm80_f16_u4b8_g128_64x256x128_s2_w8_sw3x4x4
cmake --build "$build"

reports=$(cd "$build" && pwd)/sanitizer-reports
rm -rf "$reports"
mkdir -p "$reports"
# protect_shadow_gap=0: the CUDA driver maps memory where ASan would reserve its shadow gap (on
# a machine with a GPU, CUDA calls would fail without it).
export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:protect_shadow_gap=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1"
status=0
ctest --test-dir "$build" -LE 'gpu|fuzz' -E '^(install\.consumers|examples\.build|tools\.tune_linkage)$' --output-on-failure || status=$?

shopt -s nullglob
found=("$reports"/*)
if ((${#found[@]})); then
  for f in "${found[@]}"; do
    echo "=== sanitizer report: $f"
    cat "$f"
  done
  echo "check-sanitized: ${#found[@]} sanitizer report(s) (above)" >&2
  exit 1
fi
if ((status != 0)); then
  echo "check-sanitized: ctest failed (status $status) with no sanitizer report" >&2
  exit "$status"
fi
echo "check-sanitized: CPU tests passed under address,undefined; no sanitizer report"
