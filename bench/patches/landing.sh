# shellcheck shell=bash
# landing.sh -- sourced by land-prepare.sh: the waiting patches that land together, in the order
# they apply (each on the ones before), and what is still owed before they do
# (bench/notes/v57.md): compute-sanitizer over the changed kernels, the GPU mutants, the
# bias-less path's A/B against main, the route's A/B, the rest of `ctest -L gpu`.
# (mma-moe-store-rows-v55.patch applies on top of them: its own A/B after the landing.)
# shellcheck disable=SC2034 # read by the scripts that source it
LANDING=(
  bench/patches/gemm-bias-v55.patch
  bench/patches/moe-unsorted-v55.patch
  bench/patches/moe-unsorted-rule-v56.patch
  bench/patches/moe-route-groups-v57.patch
)
