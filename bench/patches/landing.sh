# shellcheck shell=bash
# landing.sh -- sourced by land-prepare.sh: the waiting patches that land together, in the order
# they apply (each on the ones before), and what is still owed before they do (the bench/notes
# entry that made them says). Waiting:
# - w4a8-bf16-64rows-v74.patch (#52: the bf16 g128 W4A8 keys get the f16 cover's 64-row tile;
#   owes land-device.sh's w4a8 step on an H200 (BASE=1): its 3 kernels checked and under the
#   sanitizers, and the bench_gemm A/B: bench/notes/v74.md item 5);
# - route-blocks-256-v74.patch (#49: a block per 256 pairs; owes the tests and sanitize steps; its
#   A/B is v74 item 2's). Last: land-prepare.sh's route-base.cu takes back the last patch.
# Both are checked in one build (the w4a8 patch leaves the route alone, the route patch the
# dense kernels) and land alone if only one passes (each applies on main by itself).
# route-short-block-v73.patch landed (bench/notes/v74.md item 1); route-regs-v70.patch and
# route-pad-warps-v73.patch measured slower on an H100 and stay out.
# (mma-moe-store-rows-v55.patch applies on main: its own A/B, not a landing.)
# shellcheck disable=SC2034 # read by the scripts that source it
LANDING=(
  bench/patches/w4a8-bf16-64rows-v74.patch
  bench/patches/route-blocks-256-v74.patch
)
