# shellcheck shell=bash
# landing.sh -- sourced by land-prepare.sh: the waiting patches that land together, in the order
# they apply (each on the ones before), and what is still owed before they do (bench/notes/v59.md).
# moe-route-revert-v59.patch takes the route kernel back to its v56 form: the v57 route landed
# with the v55-v57 patches measured 1.00-1.31x slower (bench_moe --parts route, H100, v59), but
# its form before v57 has not run test_moe_gpu: owed `build tests sanitize` (the routes'
# racecheck and synccheck) and `build ab` (the route A/B now reads base = main's v57 route, new =
# the revert: predicted 0.77-1.0x of base's time).
# (mma-moe-store-rows-v55.patch applies on main: its own A/B, not in this landing.)
# shellcheck disable=SC2034 # read by the scripts that source it
LANDING=(
  bench/patches/moe-route-revert-v59.patch
)
