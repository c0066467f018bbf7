#!/usr/bin/env bash
# readme_adding_mutants.sh ROOT -- readme_adding.sh fails where CONTRIBUTING.md's "Adding ..."
# section and the tree disagree: on a copy of the tree (links to ROOT's files), each mutant below
# changes one file, and the check must exit 1 naming the mutant's cause; the unchanged copy
# passes. One mutant per rule of the check: a misspelled path, a format without its _ops.c, a
# format row without its files, a per-format file the section leaves out, a missing registry
# line or default-set key, a stale tile example, a required name dropped, the old title ...
. "$(dirname "$0")/../gen/lib.sh"
root=$(cd "$1" && pwd)
check=$(cd "$(dirname "$0")" && pwd)/readme_adding.sh
copy=$tmp/tree
mkdir "$copy"
for e in CONTRIBUTING.md templates runtime tests generated cmake bench gen; do
  cp -as "$root/$e" "$copy/$e"
done

capture bash "$check" "$copy"
expect_rc 0 "readme_adding.sh on an unchanged copy"

# mutant WHY EXPECTED FILE ACTION [SED]: FILE edited by sed SED (ACTION edit), removed
# (remove) or created empty (create); the check must fail with EXPECTED in its message; then
# FILE is as before.
n=0
mutant() {
  local why=$1 expected=$2 file=$3 action=$4
  case "$action" in
    edit) rm "$copy/$file" && sed -e "$5" "$root/$file" >"$copy/$file"
          ! cmp -s "$root/$file" "$copy/$file" || fail "mutant '$why': sed changed nothing" ;;
    remove) rm "$copy/$file" ;;
    create) : >"$copy/$file" ;;
  esac
  capture bash "$check" "$copy"
  expect_rc 1 "readme_adding.sh on mutant '$why'"
  expect_in "$err" "$expected" "mutant '$why'"
  rm -f "$copy/$file"
  [ ! -e "$root/$file" ] || ln -s "$root/$file" "$copy/$file"
  n=$((n + 1))
}

mutant "a misspelled path" "no runtime/src/prepare/registy_ops.c in the tree" CONTRIBUTING.md edit \
  's|`runtime/src/prepare/registry_ops.c`|`runtime/src/prepare/registy_ops.c`|'
mutant "an unknown placeholder" "no placeholder <famly>" CONTRIBUTING.md edit \
  's|`templates/<family>/spec.lua`:|`templates/<famly>/spec.lua`:|'
mutant "a format without its _ops.c" "no runtime/src/prepare/fe2m1_ops.c in the tree" \
  runtime/src/prepare/fe2m1_ops.c remove
mutant "a format row without its files" "zp4" templates/formats.lua edit \
  '/^M\.wfmts = {/a\  { name = "zp4", enum = 3, bits = 4, layouts = { "mma" } },'
mutant "a family without its .h" "no runtime/src/families/wgmma.h in the tree" \
  runtime/src/families/wgmma.h remove
mutant "a per-format file the section leaves out" \
  "runtime/src/prepare/prepare_fe2m1.h belongs to 'fe2m1'" CONTRIBUTING.md edit \
  's|`runtime/src/prepare/prepare_fe2m1.h`|its header|'
mutant "a per-family file the section leaves out" \
  "runtime/src/families/wgmma_plan.c belongs to 'wgmma'" runtime/src/families/wgmma_plan.c create
mutant "a runtime file of no family" "runtime/src/families/extra.c is no family's" \
  runtime/src/families/extra.c create
mutant "a format file of no format" "runtime/src/prepare/zp4_ops.c is no format's" \
  runtime/src/prepare/zp4_ops.c create
mutant "a build file listing a family's runtime file" "lists families/mma.c" \
  tests/fuzz/CMakeLists.txt edit 's|^\( *\)${mgen_family_sources} |\1${mgen_src}/families/mma.c |'
mutant "a family's registry line missing" "no X(wgmma) in MGEN_FAMILY_LIST" \
  runtime/src/families/registry.c edit '/^ *X(wgmma)/d'
mutant "a format's hooks not registered" "&mgen__format_ops_fe2m1," \
  runtime/src/prepare/registry_ops.c edit '/&mgen__format_ops_fe2m1,/d'
mutant "a format missing from libmgen's sources" "src/prepare/fe2m1_ops.c" runtime/CMakeLists.txt \
  edit '\|src/prepare/fe2m1_ops.c|d'
mutant "a default-set key missing" '["bf16_fe2m1_g16"]' templates/wgmma/defaults.lua edit \
  '/\["bf16_fe2m1_g16"\]/,/^  },/d'
mutant "an operation without its enumerator" "MGEN_OP_DENSE =" runtime/include/mgen/mgen_kernel.h \
  edit 's/MGEN_OP_DENSE = 0/MGEN_OP_PLAIN = 0/'
mutant "a stale tile example" "already in templates/mma/spec.lua" CONTRIBUTING.md edit \
  's/m = 32, n = 128, k = 256/m = 32, n = 128, k = 128/; s/32x128x256/32x128x128/'
mutant "a required name dropped" "no longer names \`X(<family>)\`" CONTRIBUTING.md edit \
  's/`X(<family>)`/X(<family>)/'
mutant "a bullet merged into another" "lost its 'op' bullet" CONTRIBUTING.md edit \
  's/^- An operation/  An operation/'
mutant "the section renamed" "has no section" CONTRIBUTING.md edit \
  's/^## Adding a kernel family, a tile, a quant format or an operation$/## Adding things/'

capture bash "$check" "$copy"
expect_rc 0 "readme_adding.sh on the copy after the mutants"
echo "readme_adding_mutants: $n mutants, each caught"
