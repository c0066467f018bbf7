# shellcheck shell=bash
# landing.sh -- sourced by land-prepare.sh: the waiting patches that land together, in the order
# they apply (each on the ones before), and what is still owed before they do (the bench/notes
# entry that made them says). Waiting: route-short-block-v73.patch (#49: 256-thread blocks for
# short routes; owes land-device.sh's tests, sanitize and ab: bench/notes/v73.md item 5).
# route-regs-v70.patch and route-pad-warps-v73.patch measured slower on an H100 and stay out.
# (mma-moe-store-rows-v55.patch applies on main: its own A/B, not a landing.)
# shellcheck disable=SC2034 # read by the scripts that source it
LANDING=(
  bench/patches/route-short-block-v73.patch
)
