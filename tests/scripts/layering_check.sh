#!/usr/bin/env bash
# layering_check.sh ROOT -- the runtime's dependencies point one way (runtime/src/LAYERS):
# 1. every folder of runtime/src is a line of LAYERS;
# 2. no file under runtime/src (.c .h .cu .cuh) includes a header of a folder above its own, or
#    calls a function defined in one (the link-level arrow an include check misses: a header
#    below declaring what a file above defines);
# 3. bench/ and runtime/tools/ include only the public headers (mgen/*.h) and the one internal
#    header LAYERS names, and use no mgen__/MGEN__ name that header does not list;
# 4. the files of runtime/tools do not call each other in a circle.
# Each violation is printed as file:line and the reason. Then the same checks on a copy of the
# tree with one violation of each kind planted, which must each be found (a checker that
# cannot fail proves nothing).
. "$(dirname "$0")/../gen/lib.sh"
root=$1
here=$(cd "$(dirname "$0")" && pwd)

# check TREE: prints the violations (none: nothing) and the arrow count as "arrows N".
check() {
  local tree=$1 src=$1/runtime/src layers=() internal="" a b d
  [ -f "$src/LAYERS" ] || fail "$src/LAYERS does not exist"
  while read -r a b; do
    case $a in
      '' | '#'*) ;;
      internal) internal=$b ;;
      *) layers+=("$a") ;;
    esac
  done <"$src/LAYERS"
  ((${#layers[@]} >= 2)) || fail "$src/LAYERS lists ${#layers[@]} folders"
  [ -n "$internal" ] && [ -f "$src/$internal" ] ||
    fail "$src/LAYERS: its 'internal' line must name a header under runtime/src ('$internal')"
  for d in "$src"/*/; do
    d=${d%/}
    d=${d##*/}
    case " ${layers[*]} " in
      *" $d "*) ;;
      *) echo "$src/$d: a folder LAYERS does not list" ;;
    esac
  done
  mapfile -t files < <(find "$src" "$tree/runtime/tools" "$tree/bench" -maxdepth 3 -type f \
    \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | LC_ALL=C sort)
  ((${#files[@]} > 40)) || fail "found only ${#files[@]} source files under $tree"
  awk -v src="$src" -v layers="${layers[*]}" -v internal="$internal" \
    -v names="$(cat "$src/$internal")" -v tools="$tree/runtime/tools" \
    -f "$here/layering.awk" "${files[@]}" "${files[@]}"
}

check "$root" >"$tmp/report"
arrows=$(sed -n 's/^arrows //p' "$tmp/report")
if grep -v '^arrows ' "$tmp/report" >"$tmp/violations"; then
  fail "the runtime's layering (runtime/src/LAYERS) is broken:"$'\n'"$(cat "$tmp/violations")"
fi
# A real tree has arrows between its folders: zero would mean the scan found no include.
((arrows >= 8)) || fail "only $arrows arrows between runtime/src folders: the scan is broken"

# --- every kind of violation is found, with its file and line
copy=$tmp/tree
mkdir -p "$copy/runtime"
cp -r "$root/runtime/src" "$root/runtime/tools" "$copy/runtime/"
cp -r "$root/bench" "$copy/"
# plant FILE TEXT NEEDLE WHAT: appends TEXT to FILE in the copy; the check must fail naming
# FILE:<its new last line> and NEEDLE; then FILE is restored.
plant() {
  local file=$copy/$1 line
  cp "$file" "$tmp/saved"
  printf '%s\n' "$2" >>"$file"
  line=$(wc -l <"$file")
  check "$copy" >"$tmp/planted"
  expect_in "$(cat "$tmp/planted")" "$file:$line: " "$4: the check names $1:$line"
  expect_in "$(cat "$tmp/planted")" "$3" "$4"
  cp "$tmp/saved" "$file"
}
plant runtime/src/base/key.h '#include "dispatch/select.h"' 'dispatch is above base' \
  'an include pointing up'
plant runtime/src/families/family.c '#include "context/internal.h"' 'context is above families' \
  'an include of the composition root'
plant runtime/src/dispatch/select.c 'static void up(void) { mgen__choose(0, 0, 0, 0, 0); }' \
  'calls mgen__choose, defined in' 'a call to a function of a folder above'
plant runtime/src/formats/formats.c '#include "mgen_internal.h"' 'is above formats' \
  'an include of the tools header from inside the runtime'
plant bench/mgen_demo.c '#include "core/ctx.h"' 'bench/ and tools/ include the public' \
  'bench including a runtime header'
plant runtime/tools/tune_args.c 'static int x(void) { return MGEN__NOT_LISTED; }' \
  'uses MGEN__NOT_LISTED' 'tools using an internal name the header does not list'
plant bench/bench_util.c 'static int z(void) { return mgen__format_a; }' 'uses mgen__format_a,' \
  'bench using a name the header lists only as part of a longer one'
plant runtime/tools/tune_json.c 'static void y(void) { marlin_tune_show(0, 0); }' 'cycle: ' \
  'a circle between tools files'
mkdir "$copy/runtime/src/extra"
check "$copy" >"$tmp/planted"
expect_in "$(cat "$tmp/planted")" "extra: a folder LAYERS does not list" "an unlisted folder"
rmdir "$copy/runtime/src/extra"
check "$copy" >"$tmp/planted"
[ "$(cat "$tmp/planted")" = "arrows $arrows" ] ||
  fail "the restored copy does not pass as the tree does: $(cat "$tmp/planted")"
echo "layering: $arrows arrows between folders, all pointing down; bench/ and tools/ through the public" \
  "API and one internal header; no circle in runtime/tools"
