#!/usr/bin/env bash
# mutants.sh MARLIN_GEN -- every GPU-test mutant (tests/gpu/mutants/*.patch) still applies to the
# templates and changes the kernels it names (tests/gpu/mutants/prepare.sh), and the text it
# expects the failing test to print is still printed by a GPU test. The mutants run on the GPU
# machine (tests/gpu/run_mutants_device.sh); this keeps them from rotting in between.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
capture env MARLIN_GEN="$1" bash "$root/tests/gpu/mutants/prepare.sh" "$tmp/mutants"
expect_rc 0 "prepare.sh"
count=0
for dir in "$tmp"/mutants/*/; do
  expect=$(cat "$dir/mutant.expect")
  grep -rqF -- "$expect" "$root"/tests/gpu/*.c ||
    fail "$(basename "$dir"): no GPU test prints '$expect'"
  count=$((count + 1))
done
((count > 0)) || fail "no mutant prepared"
echo "mutants: $count prepared"
