#!/usr/bin/env bash
# ctest_skips_check.sh ROOT -- skips never read as success: scripts/ctest-skips.sh (run by
# .ci/run after the tests, and by tests/gpu/run_verify_device.sh) and the verification's verdict,
# with stand-in ctest and cmake programs that print what ctest prints in each case:
# - every test passed: both pass, in ctest's plain and -V summaries (the verification's
#   memcheck step runs -V);
# - a test skipped (exit code 77: ctest exits 0 and counts it passed): the verification fails
#   and names it with the reason from LastTest.log; ctest-skips.sh fails unless the test carries
#   the label it allows (.ci/run allows gpu), and so does a cpu test that skipped;
# - no test ran (`ctest -L sanitize` without compute-sanitizer; ctest exits 0 without
#   --no-tests=error): both fail.
. "$(dirname "$0")/../gen/lib.sh"
root=$(cd "$1" && pwd)
build=$tmp/build
mkdir -p "$build/Testing/Temporary" "$tmp/bin" "$tmp/out"

# The stand-in ctest: SCENARIO (passed, skipped, cpu_skipped, none) picks its output; -N -L
# lists the gpu tests (gpu.test_gemm_gpu, gpu.test_api_gpu).
cat >"$tmp/bin/ctest" <<'EOF'
#!/usr/bin/env bash
build=""
prev=""
for a in "$@"; do
  [ "$prev" = --test-dir ] && build=$a
  prev=$a
done
case " $* " in
  *" -N "*)
    echo "Test project $build"
    echo "  Test #1: gpu.test_gemm_gpu"
    echo "  Test #2: gpu.test_api_gpu"
    echo
    echo "Total Tests: 2"
    exit 0 ;;
esac
log=$build/Testing/Temporary/LastTest.log
block() { # block INDEX NAME OUTPUT
  printf '%s/3 Testing: %s\n%s/3 Test: %s\nCommand: "/x/%s"\nOutput:\n%s\n%s\n<end of output>\n' \
    "$1" "$2" "$1" "$2" "$2" "----------------------------------------------------------" "$3"
  printf 'Test time =   0.01 sec\n----------------------------------------------------------\nTest Passed.\n\n'
}
echo "Test project $build"
case $SCENARIO in
  none)
    echo "No tests were found!!!"
    : >"$log"
    case " $* " in *" --no-tests=error "*) exit 8 ;; esac
    exit 0 ;;
  passed | skipped | cpu_skipped)
    skip=""
    [ "$SCENARIO" = skipped ] && skip=gpu.test_api_gpu
    [ "$SCENARIO" = cpu_skipped ] && skip=runtime.test_layout
    {
      block 1 gpu.test_gemm_gpu "test_gemm_gpu: 100 kernels tested"
      if [ "$skip" = gpu.test_api_gpu ]; then
        block 2 gpu.test_api_gpu "test_api_gpu: SKIP: no CUDA device visible"
      else
        block 2 gpu.test_api_gpu "test_api_gpu: 12 checks"
      fi
      if [ "$skip" = runtime.test_layout ]; then
        block 3 runtime.test_layout "$(printf 'first line\nSKIPPED: no layout tool here')"
      else
        block 3 runtime.test_layout "test_layout: PASS"
      fi
    } >"$log"
    # (-V leaves out the ", 0 tests failed" where none failed: seen on the H200's ctest)
    case " $* " in
      *" -V "*) echo "100% tests passed out of 3" ;;
      *) echo "100% tests passed, 0 tests failed out of 3" ;;
    esac
    echo
    echo "Total Test time (real) =   1.00 sec"
    if [ -n "$skip" ]; then
      echo
      echo "The following tests did not run:"
      printf '\t%3d - %s (Skipped)\n' 2 "$skip"
    fi
    exit 0 ;;
esac
echo "stand-in ctest: unknown SCENARIO '$SCENARIO'" >&2
exit 99
EOF
printf '#!/bin/sh\nexit 0\n' >"$tmp/bin/cmake"
chmod +x "$tmp/bin/ctest" "$tmp/bin/cmake"

# verify SCENARIO: tests/gpu/run_verify_device.sh over the stand-ins (BUILD_DIR exists: no
# configure); its output in $out, its status in $rc.
verify() {
  rm -rf "$tmp/out"
  capture env SCENARIO="$1" PATH="$tmp/bin:$PATH" BUILD_DIR="$build" OUT="$tmp/out" \
    bash "$root/tests/gpu/run_verify_device.sh"
}
# skips SCENARIO [LABEL [CTEST-ARGS...]]: ctest's output of SCENARIO, then ctest-skips.sh over it.
skips() {
  SCENARIO=$1 "$tmp/bin/ctest" --test-dir "$build" "${@:3}" >"$tmp/ctest.log" 2>&1 || true
  capture env CTEST="$tmp/bin/ctest" bash "$root/scripts/ctest-skips.sh" "$tmp/ctest.log" "$build" ${2:+"$2"}
}

verify passed
expect_rc 0 "run_verify_device.sh, every test passed"
expect_in "$out" "none skipped: rc=0" "run_verify_device.sh's skip steps"
verify skipped
expect_rc 1 "run_verify_device.sh, a GPU test skipped (ctest exit 0)"
expect_in "$out" "gpu.test_api_gpu: test_api_gpu: SKIP: no CUDA device visible" "the skipped test and why"
verify none
expect_rc 1 "run_verify_device.sh, no test ran"

skips passed
expect_rc 0 "ctest-skips.sh, every test passed"
expect_in "$out" "3 tests ran, none skipped" "ctest-skips.sh's count"
skips passed "" -V
expect_rc 0 "ctest-skips.sh, every test passed, ctest -V's summary"
expect_in "$out" "3 tests ran, none skipped" "ctest-skips.sh's count from the -V summary"
skips skipped
expect_rc 1 "ctest-skips.sh, a skipped test and no label allowed"
skips skipped gpu
expect_rc 0 "ctest-skips.sh gpu, a gpu test skipped"
expect_in "$out" "gpu.test_api_gpu (gpu): test_api_gpu: SKIP: no CUDA device visible" "listed with its reason"
skips cpu_skipped gpu
expect_rc 1 "ctest-skips.sh gpu, a cpu test skipped"
expect_in "$out" "runtime.test_layout: SKIPPED: no layout tool here  <- must not skip here" \
  "the cpu test, its reason (the line that says skip)"
expect_in "$err" "1 test(s) skipped that must run here (only gpu tests may skip)" "the verdict"
skips none gpu
expect_rc 1 "ctest-skips.sh, no test ran"
expect_in "$err" "no test ran" "ctest-skips.sh's verdict"
echo "ctest_skips_check: skipped tests and empty runs fail the verification and CI's check"
