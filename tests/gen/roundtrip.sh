#!/usr/bin/env bash
# roundtrip.sh MARLIN_GEN [ARGS...] -- every kernel name printed by --list decodes
# (--decode) to exactly the fields of its row in manifest.tsv. The manifest's header is its
# first line not starting with "#"; it must have a "name" column and one column per field, or
# the field in its "params" column (name=value,...).
. "$(dirname "$0")/lib.sh"
mgen=$1
shift

"$mgen" "$@" --out "$tmp/out"
"$mgen" "$@" --list >"$tmp/names"
[ -s "$tmp/names" ] || fail "--list printed no kernels"
manifest="$tmp/out/manifest.tsv"
header=$(grep -v -m 1 '^#' "$manifest")
[ "$(grep -c . "$tmp/names")" = "$(grep -v '^#' "$manifest" | tail -n +2 | grep -c .)" ] ||
  fail "manifest.tsv has not one row per listed kernel"

checked=0
while read -r name; do
  "$mgen" "$@" --decode "$name" >"$tmp/fields" || fail "--decode $name failed"
  # awk: the row whose "name" column is $name; every field=value must match its column.
  awk -F '\t' -v name="$name" -v fields="$tmp/fields" -v header="$header" '
    BEGIN {
      n = split(header, cols, "\t")
      for (i = 1; i <= n; i++) col[cols[i]] = i
      if (!("name" in col)) { print "manifest.tsv has no name column"; exit 1 }
    }
    /^#/ || $0 == header { next }
    $col["name"] == name {
      rows++
      while ((getline line < fields) > 0) {
        eq = index(line, "=")
        f = substr(line, 1, eq - 1); v = substr(line, eq + 1)
        if (f in col) have = $col[f]
        else if (("params" in col) && match("," $col["params"] ",", "," f "=[^,]*,")) {
          have = substr("," $col["params"] ",", RSTART + length(f) + 2, RLENGTH - length(f) - 3)
        } else { print "manifest.tsv has no column or param " f; exit 1 }
        if (have != v) { print name ": " f " is " have " in manifest.tsv, " v " decoded"; exit 1 }
      }
    }
    END { if (rows != 1) { print name ": " rows + 0 " rows in manifest.tsv"; exit 1 } }
  ' "$manifest" || fail "round trip of $name"
  checked=$((checked + 1))
done <"$tmp/names"
echo "roundtrip: $checked names ok"
