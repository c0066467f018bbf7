#!/usr/bin/env bash
# run_patch_device_check.sh ROOT -- bench/run_patch_device.sh's usage errors exit 2 before it
# builds or writes anything: no DIR, a DIR that is not ab_prepare.sh's output, a TESTS entry that
# is not a GPU test program, a SANITIZE entry that names no compute-sanitizer tool, a BENCH
# that is not one of the A/B's two programs, an EXTRA variant that is not NAME:DIR of one.
. "$(dirname "$0")/../gen/lib.sh"
root=$1
rp=$root/bench/run_patch_device.sh
mkdir -p "$tmp/ab/base" "$tmp/ab/new"
printf 'name\n' >"$tmp/ab/base/manifest.tsv"
export OUT=$tmp/out

capture bash "$rp"
expect_rc 2 "no DIR"
expect_in "$err" "usage: run_patch_device.sh DIR" "the usage line"
capture bash "$rp" "$tmp/ab"
expect_rc 2 "a DIR without new/manifest.tsv"
printf 'name\n' >"$tmp/ab/new/manifest.tsv"
TESTS="test_gemm_gpu --quick;ls -la" capture bash "$rp" "$tmp/ab"
expect_rc 2 "a TESTS entry that is not a GPU test program"
expect_in "$err" "TESTS: 'ls -la' is not a tests/ GPU program" "the TESTS message"
SANITIZE="racecheck:--race leakcheck:--quick" capture bash "$rp" "$tmp/ab"
expect_rc 2 "a SANITIZE entry that names no tool"
expect_in "$err" "SANITIZE: unknown tool in 'leakcheck:--quick'" "the SANITIZE message"
BENCH=bench_layer capture bash "$rp" "$tmp/ab"
expect_rc 2 "a BENCH that is not bench_gemm or bench_moe"
expect_in "$err" "BENCH is bench_gemm or bench_moe, not 'bench_layer'" "the BENCH message"
EXTRA="stage:$tmp/ab/none" capture bash "$rp" "$tmp/ab"
expect_rc 2 "an EXTRA variant without a manifest"
expect_in "$err" "EXTRA: 'stage:$tmp/ab/none' is not NAME:DIR of a marlin-gen output" "the EXTRA message"
EXTRA="$tmp/ab/base" capture bash "$rp" "$tmp/ab"
expect_rc 2 "an EXTRA variant without a name"
# run_ab_device.sh, which run_patch_device.sh's A/B runs, checks BENCH alike before it builds.
VARIANTS="base:$tmp/ab/base" BENCH=bench_layer capture bash "$root/bench/run_ab_device.sh"
expect_rc 2 "run_ab_device.sh with a BENCH that is not bench_gemm or bench_moe"
expect_in "$err" "BENCH is bench_gemm or bench_moe, not 'bench_layer'" "run_ab_device.sh's BENCH message"
[ ! -e "$OUT" ] || fail "a usage error wrote $OUT"
echo "run_patch_device_check: ok"
