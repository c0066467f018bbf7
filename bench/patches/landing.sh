# shellcheck shell=bash
# landing.sh -- sourced by land-prepare.sh: the waiting patches that land together, in the order
# they apply (each on the ones before), and what is still owed before they do (the bench/notes
# entry that made them says). Waiting: route-pad-warps-v73.patch (#49: the route's padding
# written by warps; owes land-device.sh's tests, sanitize and ab: bench/notes/v73.md).
# (mma-moe-store-rows-v55.patch applies on main: its own A/B, not a landing.)
# shellcheck disable=SC2034 # read by the scripts that source it
LANDING=(
  bench/patches/route-pad-warps-v73.patch
)
