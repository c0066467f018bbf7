#!/usr/bin/env bash
# tree_prepare.sh -- the second source tree of an A/B whose change reaches past templates/
# (the packer, a layout, the runtime), here, for bench/run_tree_ab_device.sh there: DIR gets the
# checkout's tracked files (without bench/results/, the committed measurements: the GPU
# machine's carry is 64 MiB), the PATCHes applied in order (a change kept as steps, each on the
# one before), and generated/ refreshed from its templates by the generator built here (the GPU
# machine has no Lua). A template-only change needs only bench/ab_prepare.sh.
#
#   bench/tree_prepare.sh PATCH... DIR
#   e.g. bench/tree_prepare.sh bench/patches/fe2m1-f16-words-v34.patch .scratch/tree-new
#   then: TREE=.scratch/tree-new OUT=$OUT bench/run_tree_ab_device.sh --act f16 --fmt nvfp4 ...
#   (carry .scratch/tree-new)
#
# Environment: MARLIN_GEN (default build/gen/marlin-gen). Exits 1 if a patch does not apply
# (git apply refuses an empty one too).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: tree_prepare.sh PATCH... DIR" >&2; exit 2; }
dir=${*: -1}
patches=("${@:1:$#-1}")
gen=${MARLIN_GEN:-build/gen/marlin-gen}
[ -x "$gen" ] || { echo "tree_prepare: no $gen (build the generator first)" >&2; exit 2; }
rm -rf "$dir"
mkdir -p "$dir"
# Tracked files, less bench/results/ (the committed measurements): sources, tests, generated/.
git ls-files -z | grep -zv '^bench/results/' | xargs -0 cp --parents -t "$dir"
# git apply from inside the copy, outside any repository: inside this checkout's worktree (as
# .scratch/ is) it resolves paths from the checkout's root and skips every file, rc 0.
for patch in "${patches[@]}"; do
  patch_abs=$(cd "$(dirname "$patch")" && pwd)/$(basename "$patch")
  (cd "$dir" && GIT_DIR=/nonexistent GIT_CEILING_DIRECTORIES="$(dirname "$PWD")" git apply "$patch_abs") ||
    { echo "tree_prepare: $patch does not apply" >&2; exit 1; }
done
"$gen" --templates "$dir/templates" --out "$dir/generated" >/dev/null
kernels="kernels unchanged"
diff -rq generated "$dir/generated" >/dev/null || kernels="generated/ changed"
echo "tree_prepare: $dir ($(du -sh "$dir" | cut -f1)), $kernels"
