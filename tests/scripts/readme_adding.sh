#!/usr/bin/env bash
# readme_adding.sh ROOT -- CONTRIBUTING.md's "Adding a kernel family, a tile, a quant format or an
# operation" lists the files a newcomer touches, and the tree agrees, both ways:
# - every backticked repository path of every bullet exists, its placeholders expanded to every
#   instance in the tree (<family>: templates/*/spec.lua; <fmt>, <wfmt>, <act>, <op>, <layout>,
#   <scheme>: templates/formats.lua's rows; <fragment>: the specs' dequant_of fragment orders;
#   upper case: the enumerator spelling); a glob matches at least one file;
# - every file under templates/ and runtime/src/ whose path carries a family's or a format's
#   name is one of those paths (or under a folder among them): no per-family or per-format file
#   the section leaves out;
# - each bullet names what a family, format, operation or layout has, and every one in the tree
#   has it: a family its spec naming its folder and template, its mgen__family_<family>, its
#   X(<family>) line and MGEN_FAMILY_<FAMILY>; a format its mgen__format_<fmt> and
#   mgen__format_ops_<fmt> in their files and registries, its partials' struct, its enumerators,
#   its files in the CMake lists and its keys in every family's defaults; an operation its
#   MGEN_OP_<OP> in mgen_op and PUBLIC_OPS; the tile example is a tile the tree lacks.
# (The section was README.md's until it moved to CONTRIBUTING.md; the script keeps its name.)
. "$(dirname "$0")/../gen/lib.sh"
root=$1
doc=$root/CONTRIBUTING.md formats=$root/templates/formats.lua
title='## Adding a kernel family, a tile, a quant format or an operation'
awk -v t="$title" '$0 == t { on = 1; next } on && /^## / { exit } on' "$doc" >"$tmp/section"
[ -s "$tmp/section" ] || fail "CONTRIBUTING.md has no section '$title'"

# The bullets, one file each (a bullet starts with "- " in column 0).
awk -v dir="$tmp" '/^- / { n++ } n { print > (dir "/bullet" n) }' "$tmp/section"
declare -A bullet=()
for f in "$tmp"/bullet*; do
  first=$(sed -n '1p' "$f")
  case "$first" in
    "- A kernel family"*) key=family ;;
    "- A tile"*) key=tile ;;
    "- A quant format"*) key=format ;;
    "- An operation"*) key=op ;;
    "- Layouts are per kernel family"*) key=layout ;;
    *) fail "CONTRIBUTING.md's section has a bullet this check does not know: $first" ;;
  esac
  [ -z "${bullet[$key]:-}" ] || fail "CONTRIBUTING.md's section has two '$key' bullets"
  bullet[$key]=$f
done
for key in family tile format op layout; do
  [ -n "${bullet[$key]:-}" ] || fail "CONTRIBUTING.md's section lost its '$key' bullet"
done

# The instances each placeholder stands for.
rows() { # rows LIST: the names of templates/formats.lua's M.LIST rows
  sed -n "/^M\\.$1 = {/,/^}/s/^ *{ name = \"\\([a-z0-9_]*\\)\".*/\\1/p" "$formats"
}
declare -A values=()
values[family]=$(cd "$root/templates" && for s in */spec.lua; do echo "${s%/spec.lua}"; done)
values[fmt]=$(rows wfmts)
values[wfmt]=${values[fmt]}
values[act]=$(rows acts)
values[op]=$(rows ops)
values[layout]=$(rows layouts)
values[scheme]=$(rows schemes)
values[fragment]=$(sed -n 's/.*dequant_of(k, "\([a-z0-9_]*\)"[,)].*/\1/p' "$root"/templates/*/spec.lua |
  sort -u)
for p in family fmt act op layout scheme fragment; do
  [ -n "${values[$p]}" ] || fail "found no <$p> instances in the tree"
  values[${p^^}]=${values[$p]^^}
done
values[WFMT]=${values[FMT]}

# expand PATH: PATH once per combination of its placeholders' instances.
expand() {
  local path=$1 name v
  if [[ $path =~ \<([A-Za-z_]+)\> ]]; then
    name=${BASH_REMATCH[1]}
    [ -n "${values[$name]:-}" ] || fail "CONTRIBUTING.md names $1: no placeholder <$name> known to this check"
    for v in ${values[$name]}; do expand "${path//<$name>/$v}"; done
  else
    echo "$path"
  fi
}

# Forward: the backticked repository paths of every bullet, for every instance.
tops=$(cd "$root" && for d in */; do echo "${d%/}"; done)
: >"$tmp/covered"
checked=0
for key in family tile format op layout; do
  grep -o '`[^`]*`' "${bullet[$key]}" | tr -d '`' | sed 's/ .*//' | sort -u >"$tmp/tokens"
  while read -r token; do
    [[ $token == */* ]] || continue
    grep -qxF -- "${token%%/*}" <<<"$tops" || continue # not a repository path (<out>/..., include/)
    expand "$token" >"$tmp/expanded"
    while read -r p; do
      # shellcheck disable=SC2206 # a glob, expanded on purpose
      matches=("$root"/$p)
      if [[ $p == */ ]]; then
        [ -d "$root/$p" ] || fail "CONTRIBUTING.md's $key bullet names $token: no folder $p in the tree"
      else
        [ -e "${matches[0]}" ] || fail "CONTRIBUTING.md's $key bullet names $token: no $p in the tree"
      fi
      # A folder or glob stands for its files only as a per-instance one (templates/<family>/),
      # not as a place (runtime/src/prepare/, runtime/src/families/*.c): files named one by one.
      if [[ $token == *'<'* || ($p != */ && $p != *'*'*) ]]; then echo "$p" >>"$tmp/covered"; fi
      checked=$((checked + 1))
    done <"$tmp/expanded"
  done <"$tmp/tokens"
done

# Reverse: every file named after a family or a format is a file the section names.
covered() { # covered REL: REL is a named path, under a named folder or matched by a named glob
  local c
  while read -r c; do
    # shellcheck disable=SC2053 # c is a pattern on purpose
    [[ $1 == $c ]] && return 0
    [[ $c == */ && $1 == "$c"* ]] && return 0
  done <"$tmp/covered"
  return 1
}
names=" $(echo ${values[family]} ${values[fmt]}) "
(cd "$root" && find -L templates runtime/src -type f | sort) >"$tmp/files"
owned=0
incubating=""
while read -r rel; do
  # A folder of partials for a format the table does not have yet (a format landing in steps:
  # its partials and their CPU proofs first, the row later) is not a format: nothing generates
  # from it, so nothing here is owed for it. Named in the output, never silently.
  if [[ $rel =~ ^templates/formats/([^/]+)/ ]] && [[ $names != *" ${BASH_REMATCH[1]} "* ]]; then
    [[ " $incubating " == *" ${BASH_REMATCH[1]} "* ]] || incubating+=" ${BASH_REMATCH[1]}"
    continue
  fi
  hit=
  for token in ${rel//[\/._-]/ }; do [[ $names == *" $token "* ]] && hit=$token; done
  [ -n "$hit" ] || continue
  covered "$rel" || fail "$rel belongs to '$hit', but CONTRIBUTING.md's section names no path that is it"
  owned=$((owned + 1))
done <"$tmp/files"

# names_all KEY TEXT...: the KEY bullet names each TEXT, backticked.
names_all() {
  local key=$1 text
  shift
  for text in "$@"; do
    grep -qF -- "\`$text\`" "${bullet[$key]}" || fail "CONTRIBUTING.md's $key bullet no longer names \`$text\`"
  done
}
has() { # has FILE FIXED-STRING WHY
  grep -qF -- "$2" "$root/$1" || fail "$1 lacks '$2': $3"
}

# A family: its spec, template, runtime file and .h, its registry line and enumerator.
names_all family templates/'<family>'/spec.lua templates/'<family>'/kernel.cu.tpl \
  runtime/src/families/'<family>'.c runtime/src/families/'<family>'.h \
  runtime/src/families/registry.c 'X(<family>)' 'MGEN_FAMILY_<FAMILY>' \
  runtime/include/mgen/mgen_kernel.h 'const mgen__family mgen__family_<family>'
sed -n '/^#define MGEN_FAMILY_LIST(X)/,/^$/s/^ *X(\([a-z0-9_]*\)).*/\1/p' \
  "$root/runtime/src/families/registry.c" >"$tmp/registered"
for f in ${values[family]}; do
  has "templates/$f/spec.lua" "M.family = \"$f\"" "the spec names its folder"
  has "templates/$f/spec.lua" "M.template = \"templates/$f/kernel.cu.tpl\"" "the spec's template"
  has "templates/$f/spec.lua" "family_enum = \"MGEN_FAMILY_${f^^}\"" "its descriptors' family"
  has "runtime/src/families/$f.c" "const mgen__family mgen__family_$f =" "its runtime file"
  grep -qx -- "$f" "$tmp/registered" ||
    fail "runtime/src/families/registry.c: no X($f) in MGEN_FAMILY_LIST"
  has runtime/include/mgen/mgen_kernel.h "MGEN_FAMILY_${f^^} =" "its mgen_family id"
done
# "The build, the tests ... find it by themselves": no build file lists a family's runtime file.
(cd "$root" && find -L . -name CMakeLists.txt -type f && find -L cmake -name '*.cmake' -type f) \
  >"$tmp/buildfiles"
for f in ${values[family]}; do
  while read -r b; do
    if grep -n -- "families/$f\.c" "$root/$b" >"$tmp/where"; then
      fail "${b#./} lists families/$f.c, where CONTRIBUTING.md's family bullet says the build finds a family's runtime file: $(cat "$tmp/where")"
    fi
  done <"$tmp/buildfiles"
done
for f in $(cat "$tmp/registered"); do
  [ -f "$root/templates/$f/spec.lua" ] || fail "registry.c lists X($f): no templates/$f/spec.lua"
done
for c in "$root"/runtime/src/families/*.c; do
  f=${c##*/} f=${f%.c}
  case " family registry $(echo ${values[family]}) " in
    *" $f "*) ;;
    *) fail "runtime/src/families/$f.c is no family's (no templates/$f/spec.lua)" ;;
  esac
done

# A format: its files, registry entries, partials' struct, enumerators, CMake lists, defaults.
names_all format templates/formats.lua templates/formats/partials.lua \
  'templates/formats/<fmt>/<fragment>_<act>.cuh' 'templates/<family>/defaults.lua' \
  runtime/include/mgen/mgen_kernel.h tests/runtime/test_formats.c \
  'runtime/src/formats/<fmt>.c' runtime/src/formats/registry.c \
  'runtime/src/prepare/<fmt>_ops.c' runtime/src/prepare/registry_ops.c \
  runtime/CMakeLists.txt tests/CMakeLists.txt tests/fuzz/CMakeLists.txt mgen_pack_weights
sed -n '/^M\.wfmt = {/,/^}/s/^ *\([a-z0-9_]*\) = {.*/\1/p' \
  "$root/templates/formats/partials.lua" >"$tmp/partial_wfmts"
for f in ${values[fmt]}; do
  has "runtime/src/formats/$f.c" "const mgen__format mgen__format_$f =" "its description"
  has runtime/src/formats/registry.c "&mgen__format_$f," "its line in the format registry"
  has "runtime/src/prepare/${f}_ops.c" "const mgen__format_ops mgen__format_ops_$f =" "its GPU hooks"
  has runtime/src/prepare/registry_ops.c "&mgen__format_ops_$f," "its line in the hooks' registry"
  grep -qx -- "$f" "$tmp/partial_wfmts" || fail "templates/formats/partials.lua: no $f in M.wfmt"
  has runtime/include/mgen/mgen_kernel.h "MGEN_WFMT_${f^^} =" "its mgen_wfmt enumerator"
  has tests/runtime/test_formats.c "case MGEN_WFMT_${f^^}:" "test_formats.c's switch"
  has runtime/CMakeLists.txt "src/formats/$f.c" "libmgen's sources"
  has runtime/CMakeLists.txt "src/prepare/${f}_ops.c" "libmgen's sources"
  has tests/CMakeLists.txt "formats/$f.c" "mgen_format_sources"
  has tests/fuzz/CMakeLists.txt "formats/$f.c" "the fuzzers' cost sources"
  has tests/fuzz/CMakeLists.txt "prepare/${f}_ops.c" "fuzz_import's sources"
  # Its keys in every family's defaults: act x each of its schemes' groups.
  groups=$(sed -n "/^M\\.schemes = {/,/^}/{/wfmt = \"$f\"/s/.*groups = { \\([0-9, ]*\\) }.*/\\1/p}" \
    "$formats" | tr ',' ' ')
  [ -n "$groups" ] || fail "templates/formats.lua: no scheme rows for $f"
  for family in ${values[family]}; do
    for act in ${values[act]}; do
      for g in $groups; do
        [ "$g" = 0 ] && g=c
        # ...or of the measured format whose set it takes (templates/default_set.lua, M.twins).
        twin=$(sed -n "s/^M\.twins = {.*\b$f = \"\([a-z0-9]*\)\".*/\1/p" "$root/templates/default_set.lua")
        has "templates/$family/defaults.lua" "[\"${act}_${twin:-$f}_g$g\"]" \
          "a default-set key of $f${twin:+ (the set of its twin $twin, M.twins)}"
      done
    done
  done
done
for s in ${values[SCHEME]}; do
  has runtime/include/mgen/mgen_kernel.h "MGEN_SCHEME_$s =" "its mgen_scheme enumerator"
  has tests/runtime/test_formats.c "case MGEN_SCHEME_$s:" "test_formats.c's switch"
done
for c in "$root"/runtime/src/formats/*.c "$root"/runtime/src/prepare/*_ops.c; do
  f=${c##*/} f=${f%.c} f=${f%_ops}
  case " format formats registry registry $(echo ${values[fmt]}) " in
    *" $f "*) ;;
    *) fail "${c#"$root"/} is no format's (no $f in templates/formats.lua's M.wfmts)" ;;
  esac
done

# An operation: its row, enumerator and PUBLIC_OPS.
names_all op M.ops templates/formats.lua mgen_op runtime/include/mgen/mgen_kernel.h \
  tests/runtime/test_formats.c PUBLIC_OPS
has templates/formats.lua "M.ops = {" "the operations' table"
has runtime/include/mgen/mgen_kernel.h "typedef enum mgen_op {" "the public mgen_op"
has tests/runtime/test_formats.c "enum { PUBLIC_OPS =" "the public count"
for o in ${values[OP]}; do
  has runtime/include/mgen/mgen_kernel.h "MGEN_OP_$o =" "its mgen_op enumerator"
  has tests/runtime/test_formats.c "case MGEN_OP_$o:" "test_formats.c's switch"
done

# A layout: its row and enumerator.
names_all layout M.layouts templates/formats.lua runtime/include/mgen/mgen_kernel.h \
  tests/runtime/test_formats.c PUBLIC_LAYOUTS
for l in ${values[LAYOUT]}; do
  has runtime/include/mgen/mgen_kernel.h "MGEN_LAYOUT_$l =" "its mgen_layout enumerator"
  has tests/runtime/test_formats.c "case MGEN_LAYOUT_$l:" "test_formats.c's switch"
done

# A tile: the example is a tile the mma family lacks (a new one), and the expected diff names it.
example=$(sed -n 's/.*`{ m = \([0-9]*\), n = \([0-9]*\), k = \([0-9]*\) },`.*/\1 \2 \3/p' \
  "${bullet[tile]}")
[ -n "$example" ] || fail "CONTRIBUTING.md's tile bullet shows no example tile line"
read -r m n k <<<"$example"
! grep -qF "{ m = $m, n = $n, k = $k }," "$root/templates/mma/spec.lua" ||
  fail "CONTRIBUTING.md's example tile ${m}x${n}x$k is already in templates/mma/spec.lua: not a new one"
names_all tile "mgen_*_${m}x${n}x${k}_*.cu" generated/kernels/ 'templates/<family>/spec.lua'
kernels=("$root"/generated/kernels/mgen_*_"${m}x${n}x${k}"_*.cu)
[ ! -e "${kernels[0]}" ] || fail "generated/kernels has ${m}x${n}x$k kernels: not a new tile"

echo "readme_adding: $checked paths (families: $(echo ${values[family]}); formats:" \
  "$(echo ${values[fmt]}); acts: $(echo ${values[act]}); ops: $(echo ${values[op]}))," \
  "$owned per-family/format files named${incubating:+; partials of formats without a table row yet, not checked:$incubating}"
