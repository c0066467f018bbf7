#!/usr/bin/env bash
# determinism.sh MARLIN_GEN [ARGS...] -- two runs into two directories are identical; a re-run
# into the same directory rewrites nothing but mgen.stamp; stale kernels and shards go away.
. "$(dirname "$0")/lib.sh"
mgen=$1
shift

"$mgen" "$@" --out "$tmp/a"
"$mgen" "$@" --out "$tmp/b"
diff -r "$tmp/a" "$tmp/b" || fail "two runs differ"
ls "$tmp/a/kernels"/mgen_*.cu >/dev/null || fail "no kernels generated"

before=$(tree_state "$tmp/a" mgen.stamp)
stamp_before=$(stat -c '%i %Y.%y' "$tmp/a/mgen.stamp")
"$mgen" "$@" --out "$tmp/a"
after=$(tree_state "$tmp/a" mgen.stamp)
[ "$before" = "$after" ] || fail "re-run rewrote files: $(diff <(echo "$before") <(echo "$after"))"
stamp_after=$(stat -c '%i %Y.%y' "$tmp/a/mgen.stamp")
[ "$stamp_before" != "$stamp_after" ] || fail "mgen.stamp was not rewritten"

# Stale generated files are removed; files that marlin-gen does not own stay.
touch "$tmp/a/kernels/mgen_stale.cu" "$tmp/a/kernels/notes.txt" "$tmp/a/shards/mma_99.cu"
"$mgen" "$@" --out "$tmp/a"
[ ! -e "$tmp/a/kernels/mgen_stale.cu" ] || fail "stale kernel not removed"
[ ! -e "$tmp/a/shards/mma_99.cu" ] || fail "stale shard not removed"
[ -e "$tmp/a/kernels/notes.txt" ] || fail "a file that is not a kernel was removed"
rm "$tmp/a/kernels/notes.txt"
diff -r "$tmp/a" "$tmp/b" || fail "after removing stale files"

# A --kernels filter regenerates a subset: the others are stale and removed.
"$mgen" "$@" --list >"$tmp/list" # a file, not a pipe into head (lib.sh)
first=$(head -n 1 "$tmp/list")
"$mgen" "$@" --out "$tmp/a" --kernels "$first"
[ "$(ls "$tmp/a/kernels")" = "$first.cu" ] || fail "--kernels $first left: $(ls "$tmp/a/kernels")"
echo "determinism: ok"
