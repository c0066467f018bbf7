#!/usr/bin/env bash
# update_golden.sh MARLIN_GEN FIXTURES -- after an intended change to the generator or the
# fixture (or a version bump), rewrites FIXTURES/golden and golden_list.txt with what
# MARLIN_GEN renders, prints the diff it applied (review it; commit it with the change), and
# then runs golden.sh against the new files. gen.golden itself never writes them.
. "$(dirname "$0")/lib.sh"
mgen=$1 fixtures=$2

"$mgen" --templates "$fixtures/templates" --out "$tmp/out" --shards 2
"$mgen" --templates "$fixtures/templates" --list --why-not >"$tmp/list.txt"
changed=0
diff -ruN "$fixtures/golden" "$tmp/out" || changed=1
diff -uN "$fixtures/golden_list.txt" "$tmp/list.txt" || changed=1
if ((changed == 0)); then
  echo "update_golden: $fixtures/golden is already what $mgen renders; nothing changed"
  exit 0
fi
rm -rf "$fixtures/golden"
cp -r "$tmp/out" "$fixtures/golden"
cp "$tmp/list.txt" "$fixtures/golden_list.txt"
echo "update_golden: rewrote $fixtures/golden and golden_list.txt (the diff above); review and commit it"
bash "$(dirname "$0")/golden.sh" "$mgen" "$fixtures"
