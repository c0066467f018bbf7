#!/usr/bin/env bash
# golden.sh MARLIN_GEN FIXTURES -- renders the two-kernel fixture (FIXTURES/templates) and
# compares it byte for byte with FIXTURES/golden (and --list --why-not with golden_list.txt).
# It only compares: the expected files change only by update_golden.sh (below), a separate
# step whose diff is reviewed and committed, so that running the test can never make it pass.
. "$(dirname "$0")/lib.sh"
mgen=$1 fixtures=$2
update="bash ${0%golden.sh}update_golden.sh $mgen $fixtures (or: cmake --build <build> --target mgen_update_golden)"

[ -z "${MGEN_UPDATE_GOLDEN:-}" ] ||
  fail "MGEN_UPDATE_GOLDEN is set: gen.golden does not rewrite its expected files; after an intended change run $update"
"$mgen" --templates "$fixtures/templates" --out "$tmp/out" --shards 2
"$mgen" --templates "$fixtures/templates" --list --why-not >"$tmp/list.txt"
diff -r "$fixtures/golden" "$tmp/out" || fail "rendered fixture differs from $fixtures/golden; if intended: $update"
diff "$fixtures/golden_list.txt" "$tmp/list.txt" || fail "--list --why-not differs; if intended: $update"
echo "golden: ok"
