#!/usr/bin/env bash
# ab_prepare.sh -- the two marlin-gen outputs of an A/B of a template patch, here (Lua), for
# bench/run_ab_device.sh there (no Lua on the GPU machine): DIR/base from this checkout's
# templates, DIR/new from them with PATCH applied (in a temporary copy; the checkout is not
# touched), both for the kernels GLOBS selects. Only the patch's templates/ part is applied here
# (a patch also carries the tests its change needs, for when it lands: `git apply PATCH`).
#
#   bench/ab_prepare.sh PATCH DIR GLOBS [marlin-gen options]
#   e.g. bench/ab_prepare.sh bench/patches/NAME.patch .scratch/ab \
#          'mgen_sm80_f16_*_8x*,mgen_sm80_f16_*_16x*'
#   then: VARIANTS="base:.scratch/ab/base new:.scratch/ab/new" OUT=$OUT bench/run_ab_device.sh ...
#   (carry .scratch/ab)
#
# Environment: MARLIN_GEN (default build/gen/marlin-gen). Exits 1 if the patch does not apply or
# changes none of the selected kernels (an A/B of identical trees measures only noise).
set -euo pipefail
cd "$(dirname "$0")/.."
patch=${1:?usage: ab_prepare.sh PATCH DIR GLOBS [marlin-gen options]}
dir=${2:?DIR} globs=${3:?GLOBS}
shift 3
gen=${MARLIN_GEN:-build/gen/marlin-gen}
[ -x "$gen" ] || { echo "ab_prepare: no $gen (build the generator first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r templates "$tmp/templates"
# git apply from inside the copy: with --directory, --include matches no path and every file of
# the patch is skipped silently (rc 0), which made base and new the same kernels.
patch_abs=$(cd "$(dirname "$patch")" && pwd)/$(basename "$patch")
(cd "$tmp" && git apply --include='templates/*' "$patch_abs") || { echo "ab_prepare: $patch does not apply" >&2; exit 1; }
diff -rq templates "$tmp/templates" >/dev/null && { echo "ab_prepare: $patch changes no template" >&2; exit 1; }
rm -rf "$dir/base" "$dir/new"
"$gen" --templates templates --out "$dir/base" --kernels "$globs" "$@" >/dev/null
"$gen" --templates "$tmp/templates" --out "$dir/new" --kernels "$globs" "$@" >/dev/null
# The whole output: a patch of a family's partials changes include/<family>/, not kernels/.
diff -rq "$dir/base" "$dir/new" >/dev/null &&
  { echo "ab_prepare: the patch changes none of the kernels $globs selects" >&2; exit 1; }
echo "ab_prepare: $(grep -vc -e '^#' -e '^name' "$dir/base/manifest.tsv") kernels in $dir/base and $dir/new"
