#!/usr/bin/env bash
# golden.sh MARLIN_GEN FIXTURES -- renders the two-kernel fixture (FIXTURES/templates) and
# compares it byte for byte with FIXTURES/golden (and --list --why-not with golden_list.txt).
# After an intended change (or a version bump): MGEN_UPDATE_GOLDEN=1 ctest -R gen.golden
. "$(dirname "$0")/lib.sh"
mgen=$1 fixtures=$2

"$mgen" --templates "$fixtures/templates" --out "$tmp/out" --shards 2
"$mgen" --templates "$fixtures/templates" --list --why-not >"$tmp/list.txt"
if [ -n "${MGEN_UPDATE_GOLDEN:-}" ]; then
  rm -rf "$fixtures/golden"
  cp -r "$tmp/out" "$fixtures/golden"
  cp "$tmp/list.txt" "$fixtures/golden_list.txt"
  echo "updated $fixtures/golden and golden_list.txt"
  exit 0
fi
diff -r "$fixtures/golden" "$tmp/out" || fail "rendered fixture differs from $fixtures/golden"
diff "$fixtures/golden_list.txt" "$tmp/list.txt" || fail "--list --why-not differs"
echo "golden: ok"
