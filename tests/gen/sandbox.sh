#!/usr/bin/env bash
# sandbox.sh MARLIN_GEN FIXTURES -- a --templates folder cannot read or write outside its
# folder and --out: issue 45's exploit (a spec replacing string.format, directly or through
# the strings' metatable, to put "/../" and a NUL into a kernel name) and template paths that
# leave the folder (by "..", by a symbolic link) exit 1 with a message and write nothing: no
# victim file, no output directory. Each case copies FIXTURES/templates into $tmp/caseN and
# runs with --out $tmp/caseN.out, so the exploit's <out>/kernels/<name>/../../../victim.txt is
# $tmp/victim.txt.
. "$(dirname "$0")/lib.sh"
mgen=$1 fixtures=$2
echo "SECRET" >"$tmp/secret.txt"

n=0
# run_case SETUP EXPECTED: copies the fixture, runs SETUP DIR in it, generates; expects exit 1,
# EXPECTED in the first stderr line, and nothing written.
run_case() {
  local setup=$1 expected=$2
  n=$((n + 1))
  local dir="$tmp/case$n" out="$tmp/case$n.out"
  cp -r "$fixtures/templates" "$dir"
  "$setup" "$dir"
  capture "$mgen" --templates "$dir" --out "$out"
  expect_rc 1 "$setup"
  expect_in "$(head -n 1 <<<"$err")" "marlin-gen: $expected" "$setup"
  [ ! -e "$out" ] || fail "$setup: created the output directory"
  [ ! -e "$tmp/victim.txt" ] && [ ! -e "$tmp/victim.txt.cu" ] || fail "$setup: wrote $tmp/victim.txt"
  if grep -rq SECRET "$out" 2>/dev/null; then fail "$setup: rendered secret.txt"; fi
}

# apply_bad NAME DIR: the hostile spec bad/NAME.spec.patch, a patch of fixture/spec.lua, in DIR.
apply_bad() { (cd "$2" && git apply "$fixtures/bad/$1.spec.patch"); }
format() { apply_bad escape_format "$1"; }
run_case format "templates/fixture/spec.lua:10: cannot assign string.format: string is read-only"

metatable() { apply_bad escape_metatable "$1"; }
run_case metatable "templates/fixture/spec.lua:9: attempt to index a nil value"

template_dotdot() { apply_bad escape_template "$1"; }
run_case template_dotdot \
  "templates/fixture/spec.lua: template 'templates/../secret.txt' must be a path inside templates/"

template_link() { ln -sf "$tmp/secret.txt" "$1/fixture/kernel.cu.tpl"; }
run_case template_link "templates/fixture/kernel.cu.tpl: $tmp/case$((n + 1))/fixture/kernel.cu.tpl leads out of the templates folder"

partial_link() { ln -s "$tmp/secret.txt" "$1/common/secret.cuh"; }
run_case partial_link "templates/common/secret.cuh: $tmp/case$((n + 1))/common/secret.cuh leads out of the templates folder"

# A link inside the folder is fine, and so is a --templates DIR that is itself a link.
cp -r "$fixtures/templates" "$tmp/linked"
mv "$tmp/linked/fixture/kernel.cu.tpl" "$tmp/linked/kernel.cu.tpl"
ln -s ../kernel.cu.tpl "$tmp/linked/fixture/kernel.cu.tpl"
ln -s "$tmp/linked" "$tmp/link_to_templates"
"$mgen" --templates "$tmp/link_to_templates" --out "$tmp/linked.out"
"$mgen" --templates "$fixtures/templates" --out "$tmp/plain.out"
diff -r "$tmp/linked.out" "$tmp/plain.out" >/dev/null || fail "a link inside the folder changed the output"
echo "sandbox: $n cases ok"
