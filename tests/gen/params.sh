#!/usr/bin/env bash
# params.sh MARLIN_GEN FIXTURES SOURCE_ROOT CC -- a family's params are declared once, in its
# spec (M.params): marlin-gen renders include/mgen_params_<family>.h (templates/params.h.tpl)
# whose indexes and names are the manifest's params column, in order; the C compiler rejects a
# spec declaring more than mgen_kernel_desc.params holds (MGEN_FAMILY_PARAMS); derive's values
# must name exactly the declared params. Uses the fixture family with params added.
. "$(dirname "$0")/lib.sh"
mgen=$1 fixtures=$2 root=$3 cc=$4

# fixture_with PARAMS_LIST DERIVE_VALUES: a copy of the fixture templates in $tmp/t whose spec
# declares M.params = { PARAMS_LIST } and whose derive returns params = { DERIVE_VALUES }.
fixture_with() {
  rm -rf "$tmp/t" "$tmp/out"
  cp -R "$fixtures/templates" "$tmp/t"
  cp "$root/templates/params.h.tpl" "$tmp/t/params.h.tpl"
  local spec=$tmp/t/fixture/spec.lua
  sed -i "s|^  return {\$|  return { params = { $2 },|" "$spec"
  sed -i "s|^return M\$|M.params = { $1 }\nreturn M|" "$spec"
  grep -q "params = { $2 }" "$spec" || fail "could not add params to the fixture's derive"
}

# compile_names: compiles and runs a program printing the header's names by their indexes.
compile_names() {
  cat >"$tmp/names.c" <<'C'
#include <stdio.h>
#include "mgen_params_fixture.h"
static const char *const names[MGEN_FIXTURE_PARAMS + 1] = MGEN_FIXTURE_PARAM_NAMES;
int main(void) {
  int index[] = {MGEN_FIXTURE_STAGES, MGEN_FIXTURE_WARPS};
  for (int i = 0; i < 2; i++) printf("%d:%s\n", index[i], names[index[i]]);
  return names[MGEN_FIXTURE_PARAMS] != NULL;
}
C
  capture "$cc" -std=c11 -I"$root/runtime/include" -I"$tmp/out/include" "$tmp/names.c" -o "$tmp/names"
}

# 1. The header agrees with the manifest: indexes, names, count.
fixture_with '{ name = "warps", doc = "warps per block" }, { name = "stages", doc = "pipeline stages" }' \
  'stages = k.stages, warps = k.warps'
"$mgen" --templates "$tmp/t" --out "$tmp/out"
[ -f "$tmp/out/include/mgen_params_fixture.h" ] || fail "no include/mgen_params_fixture.h"
compile_names
expect_rc 0 "compiling against mgen_params_fixture.h"
"$tmp/names" >"$tmp/names.txt" || fail "the names list is not NULL-terminated at MGEN_FIXTURE_PARAMS"
[ "$(cat "$tmp/names.txt")" = $'1:stages\n0:warps' ] ||
  fail "indexes and names of the header: $(cat "$tmp/names.txt"), expected 1:stages, 0:warps"
# every kernel's params (its banner's k.params_text, the manifest's params column) lists the
# declared names in the declared order
cat "$tmp"/out/kernels/*.cu >"$tmp/kernels.txt"
sed -n 's/^\/\/ k\.params_text *= "\(.*\)"$/\1/p' "$tmp/kernels.txt" |
  sed 's/=[0-9-]*//g' | sort -u >"$tmp/columns.txt"
[ "$(cat "$tmp/columns.txt")" = "warps,stages" ] ||
  fail "params_text of the kernels: $(cat "$tmp/columns.txt"), expected warps,stages on every kernel"

# 2. More params than the descriptor holds: the header does not compile, and says why.
list='' values=''
for i in 0 1 2 3 4 5 6 7 8; do
  list+="{ name = \"p$i\", doc = \"param $i\" }, "
  values+="p$i = $i, "
done
fixture_with "$list" "$values"
"$mgen" --templates "$tmp/t" --out "$tmp/out"
cat >"$tmp/nine.c" <<'C'
#include "mgen_params_fixture.h"
int main(void) { return MGEN_FIXTURE_P8; }
C
capture "$cc" -std=c11 -I"$root/runtime/include" -I"$tmp/out/include" -c "$tmp/nine.c" -o "$tmp/nine.o"
[ "$rc" -ne 0 ] || fail "9 params compiled; mgen_kernel_desc.params holds fewer"
expect_in "$err" "more params than mgen_kernel_desc.params holds" "9 params"

# 3. derive's values name exactly the declared params.
fixture_with '{ name = "stages", doc = "pipeline stages" }, { name = "warps", doc = "warps per block" }' \
  'stages = k.stages'
capture "$mgen" --templates "$tmp/t" --out "$tmp/out"
expect_rc 1 "a declared param without a value"
expect_in "$err" "params.warps (params[2] of the spec) must be an integer, not nil" "missing value"
fixture_with '{ name = "stages", doc = "pipeline stages" }' 'stages = k.stages, warps = k.warps'
capture "$mgen" --templates "$tmp/t" --out "$tmp/out"
expect_rc 1 "a value of no declared param"
expect_in "$err" "params.warps is not one of the spec's params" "undeclared value"
fixture_with '{ name = "stages", doc = "a */ in a doc" }' 'stages = k.stages'
capture "$mgen" --templates "$tmp/t" --out "$tmp/out"
expect_rc 1 "a doc that ends the header's comment"
expect_in "$err" "params[1] must be { name = lower-case identifier, doc = text (no '*/') }" "doc"
echo "params: ok"
