#!/usr/bin/env bash
# golden_update.sh MARLIN_GEN FIXTURES -- gen.golden cannot be made to pass by updating: on a
# copy of the fixtures with one expected file damaged, golden.sh fails, and with
# MGEN_UPDATE_GOLDEN set it still fails and writes nothing; update_golden.sh (the separate
# step) prints the diff, rewrites the copy, and golden.sh then passes.
. "$(dirname "$0")/lib.sh"
mgen=$1 fixtures=$2 here=$(dirname "$0")

cp -r "$fixtures" "$tmp/fx"
table=$tmp/fx/golden/mgen_table.c
[ -f "$table" ] || fail "no $fixtures/golden/mgen_table.c"
echo "/* damaged */" >>"$table"
before=$(tree_state "$tmp/fx")

capture bash "$here/golden.sh" "$mgen" "$tmp/fx"
expect_rc 1 "golden.sh on a damaged golden file"
expect_in "$err" "differs from" "golden.sh names the difference"
capture env MGEN_UPDATE_GOLDEN=1 bash "$here/golden.sh" "$mgen" "$tmp/fx"
expect_rc 1 "golden.sh with MGEN_UPDATE_GOLDEN set"
expect_in "$err" "update_golden.sh" "golden.sh names the update step"
[ "$(tree_state "$tmp/fx")" = "$before" ] || fail "golden.sh wrote into the fixtures"

capture bash "$here/update_golden.sh" "$mgen" "$tmp/fx"
expect_rc 0 "update_golden.sh"
expect_in "$out" "-/* damaged */" "update_golden.sh prints the diff it applies"
expect_in "$out" "golden: ok" "update_golden.sh checks the result with golden.sh"
capture bash "$here/golden.sh" "$mgen" "$tmp/fx"
expect_rc 0 "golden.sh after update_golden.sh"
capture bash "$here/update_golden.sh" "$mgen" "$tmp/fx"
expect_rc 0 "update_golden.sh with nothing to change"
expect_in "$out" "nothing changed" "update_golden.sh on current files"
echo "golden_update: ok"
