# shellcheck shell=bash
# landing.sh -- sourced by land-prepare.sh: the waiting patches that land together, in the order
# they apply (each on the ones before), and what is still owed before they do (the bench/notes
# entry that made them says). Waiting: route-blocks-256-v74.patch (#49: a block per 256 pairs;
# owes land-device.sh's tests, sanitize and ab: bench/notes/v74.md item 2).
# route-short-block-v73.patch landed (bench/notes/v74.md item 1); route-regs-v70.patch and
# route-pad-warps-v73.patch measured slower on an H100 and stay out.
# (mma-moe-store-rows-v55.patch and w4a8-bf16-64rows-v74.patch apply on main: their own A/Bs
# (a tree A/B for the second), not landings.)
# shellcheck disable=SC2034 # read by the scripts that source it
LANDING=(
  bench/patches/route-blocks-256-v74.patch
)
