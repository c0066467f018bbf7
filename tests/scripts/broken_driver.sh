#!/usr/bin/env bash
# broken_driver.sh FAKE_DRIVER_DIR GPU_TEST DEMO -- on a machine whose NVIDIA driver is installed
# but unusable (a fake libcuda.so.1 first on LD_LIBRARY_PATH), a GPU test fails loudly (exit 1,
# the reason on stderr) instead of exiting 77 ("skipped"), and so does the demo.
. "$(dirname "$0")/../gen/lib.sh"
fake=$1 gpu_test=$2 demo=$3
[ -e "$fake/libcuda.so.1" ] || fail "no $fake/libcuda.so.1"
export LD_LIBRARY_PATH=$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

capture "$gpu_test" --quick
expect_rc 1 "$gpu_test with a broken driver (77 would hide it as skipped)"
expect_in "$err" "CUDA is broken on this machine" "$gpu_test's message"
capture "$demo"
expect_rc 1 "the demo with a broken driver"
expect_in "$err" "although an NVIDIA driver is installed" "the demo's message"
echo "broken_driver: ok ($(printf '%s' "$err" | tr -d '\n'))"
