#!/usr/bin/env bash
# current.sh MARLIN_GEN SNAPSHOT -- the committed snapshot (generated/) is what marlin-gen
# writes with default options. Refresh it with: cmake --build build --target mgen_snapshot
. "$(dirname "$0")/lib.sh"
mgen=$1 snapshot=$2

[ -f "$snapshot/mgen.stamp" ] ||
  fail "no snapshot in $snapshot; run: cmake --build <build> --target mgen_snapshot"
"$mgen" --out "$tmp/out"
diff -r "$snapshot" "$tmp/out" ||
  fail "$snapshot is out of date; run: cmake --build <build> --target mgen_snapshot"
echo "current: ok"
