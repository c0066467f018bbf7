#!/usr/bin/env bash
# toy_family_tree.sh ROOT TOY_DIR TREE -- adds the toy family TOY_DIR (tests/gen/fixtures/
# families/ref/) to a copy of the source tree as a newcomer adds a family, and proves that is
# all it takes: TREE/templates is ROOT/templates plus the folder <family>/ (its spec, template
# and partials), TREE/families is runtime/src/families plus its runtime file(s) (TOY_DIR/*.c,
# *.h) and one line X(<family>) in registry.c's MGEN_FAMILY_LIST. The family-seam test
# (runtime.test_family_seam) then generates, compiles and links from TREE with the build's own
# family discovery (cmake/MgenFamilies.cmake); this script fails if the tree differs from the
# source tree by anything more.
. "$(dirname "$0")/../gen/lib.sh"
root=$1 toy=$2 tree=$3
family=${toy%/}
family=${family##*/}

rm -rf "$tree"
mkdir -p "$tree"
cp -R "$root/templates" "$tree/templates"
mkdir "$tree/templates/$family"
cp -R "$toy/." "$tree/templates/$family/"
rm -f "$tree/templates/$family"/*.c "$tree/templates/$family"/*.h # runtime files go below
cp -R "$root/runtime/src/families" "$tree/families"
cp "$toy"/*.c "$toy"/*.h "$tree/families/"
sed -i "s|^#define MGEN_FAMILY_LIST(X) *\\\\\$|&\n  X($family) \\\\|" "$tree/families/registry.c"

# The proof: nothing else differs.
diff -r "$root/templates" "$tree/templates" >"$tmp/templates.diff" && rc=0 || rc=$?
[ "$(cat "$tmp/templates.diff")" = "Only in $tree/templates: $family" ] ||
  fail "templates/ of the tree differs by more than the folder $family/: $(cat "$tmp/templates.diff")"
diff -r "$root/runtime/src/families" "$tree/families" >"$tmp/families.diff" && rc=0 || rc=$?
# Allowed: the runtime files as new files; in registry.c one hunk adding the line X(<family>).
while IFS= read -r line; do
  case "$line" in
    "Only in $tree/families: "*) [ -f "$toy/${line##*: }" ] || fail "families/ gained ${line##*: }" ;;
    "diff -r $root/runtime/src/families/registry.c $tree/families/registry.c") ;;
    [0-9]*a[0-9]*) ;;
    ">   X($family) \\") added=$((${added:-0} + 1)) ;;
    *) fail "families/ of the tree differs by more than the runtime files and X($family): $line" ;;
  esac
done <"$tmp/families.diff"
[ "${added:-0}" -eq 1 ] || fail "registry.c: ${added:-0} lines X($family) added, expected 1"
for f in "$toy"/*.c "$toy"/*.h; do
  [ -f "$tree/families/${f##*/}" ] || fail "${f##*/} is not among the tree's families/ files"
done
echo "toy_family_tree: $family = templates/$family/ + families/$(cd "$toy" && echo *.c *.h) + X($family)"
