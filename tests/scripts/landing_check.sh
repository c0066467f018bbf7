#!/usr/bin/env bash
# landing_check.sh ROOT -- the waiting patches of bench/patches/landing.sh still apply: in
# LANDING's order, each on the ones before, over ROOT's files (what land-prepare.sh does before
# a device call is spent on them), and the last one changes the route (land-prepare.sh takes
# its part of runtime/src/moe/moe_kernels.cu back for the route A/B's base). A patch that rots
# while it waits for a GPU fails here, in CI, not on the GPU machine.
. "$(dirname "$0")/../gen/lib.sh"
root=$(cd "$1" && pwd)
moe=runtime/src/moe/moe_kernels.cu

# patch_files PATCH: the files PATCH changes, one a line.
patch_files() { sed -n 's|^diff --git a/\([^ ]*\) b/.*|\1|p' "$1"; }

# apply_in_order DIR PATCH...: copies the files the patches name from ROOT into DIR, then
# applies them there in order, outside any repository (git apply inside a worktree resolves
# paths from its root and skips every file, rc 0).
apply_in_order() {
  local dir=$1 p f
  shift
  mkdir -p "$dir"
  for p in "$@"; do
    patch_files "$p" >"$tmp/files"
    [ -s "$tmp/files" ] || { echo "$p names no file" >&2; return 1; }
    while read -r f; do
      [ -e "$dir/$f" ] || [ ! -e "$root/$f" ] ||
        { mkdir -p "$dir/$(dirname "$f")" && cp "$root/$f" "$dir/$f"; }
    done <"$tmp/files"
  done
  for p in "$@"; do
    (cd "$dir" && GIT_DIR=/nonexistent GIT_CEILING_DIRECTORIES="$dir" git apply "$p") ||
      { echo "$p does not apply (on the ones before it)" >&2; return 1; }
  done
}

# shellcheck source=bench/patches/landing.sh
. "$root/bench/patches/landing.sh"
if [ ${#LANDING[@]} = 0 ]; then
  echo "landing_check: no patch waits (bench/patches/landing.sh)"
else
  patches=()
  for p in "${LANDING[@]}"; do
    [ -f "$root/$p" ] || fail "landing.sh names $p, which is not there"
    patches+=("$root/$p")
  done
  capture apply_in_order "$tmp/tree" "${patches[@]}"
  expect_rc 0 "LANDING's patches in order"
  patch_files "${patches[-1]}" >"$tmp/last"
  grep -qx "$moe" "$tmp/last" ||
    fail "the last waiting patch (${LANDING[-1]}) leaves $moe alone: land-prepare.sh's route base needs it"
  echo "landing_check: ${#LANDING[@]} waiting patches apply in order"
fi

# The check itself fails on a patch that does not apply (its removed line is not README's).
printf 'diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1,1 +1,1 @@\n-no such first line of README.md\n+x\n' \
  >"$tmp/rotten.patch"
capture apply_in_order "$tmp/rotten-tree" "$tmp/rotten.patch"
expect_rc 1 "a patch that does not apply"
expect_in "$err" "rotten.patch does not apply" "the failure names the patch"
