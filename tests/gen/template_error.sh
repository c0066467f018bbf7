#!/usr/bin/env bash
# template_error.sh MARLIN_GEN FIXTURES -- a broken template or spec exits 1 with
# "marlin-gen: templates/<file>:<line>: ..." (or the spec entry), and writes nothing: the
# output directory is neither created nor changed. Each case copies FIXTURES/templates and
# replaces one file with one from FIXTURES/bad.
. "$(dirname "$0")/lib.sh"
mgen=$1 fixtures=$2
gc=mgen_sm80_f16_u4b8_gc_16x64x64_s4_w4_sw3x4x3
g128=mgen_sm80_f16_u4b8_g128_16x64x64_s4_w4_sw3x4x3

# A good output directory that every failing run must leave as it is.
"$mgen" --templates "$fixtures/templates" --out "$tmp/good"
good_state=$(tree_state "$tmp/good")

# check BAD_FILE TARGET EXPECTED: replacing templates/TARGET with bad/BAD_FILE gives exit 1
# and a first stderr line equal to "marlin-gen: EXPECTED" (lib.sh's check_bad), and leaves
# an existing output directory as it was.
check() {
  local bad=$1
  check_bad "$@"
  capture "$mgen" --templates "$dir" --out "$tmp/good"
  expect_rc 1 "$bad (existing output)"
  [ "$(tree_state "$tmp/good")" = "$good_state" ] || fail "$bad: changed the output directory"
}

check undefined_name.cu.tpl fixture/kernel.cu.tpl \
  "templates/fixture/kernel.cu.tpl:4: undefined name 'tile_q' (kernel $gc)"
check missing_field.cu.tpl fixture/kernel.cu.tpl \
  "templates/fixture/kernel.cu.tpl:3: k has no field 'tile_q' (kernel $gc)"
check nil_expr.cu.tpl fixture/kernel.cu.tpl \
  "templates/fixture/kernel.cu.tpl:3: \${k.partials[4]} is nil (kernel $gc)"
check assign.cu.tpl fixture/kernel.cu.tpl \
  "templates/fixture/kernel.cu.tpl:2: cannot assign k.name: k is read-only (kernel $gc)"
check assign_global.cu.tpl fixture/kernel.cu.tpl \
  "templates/fixture/kernel.cu.tpl:3: cannot assign 'count': the template environment is read-only (kernel $gc)"
check syntax.cu.tpl fixture/kernel.cu.tpl \
  "templates/fixture/kernel.cu.tpl:3: unexpected symbol near 'then'"
check unterminated.cu.tpl fixture/kernel.cu.tpl \
  "templates/fixture/kernel.cu.tpl:2: unterminated \${"
check table_error.c.tpl table.c.tpl \
  "templates/table.c.tpl:2: undefined name 'k'"
check partial_error.cuh.tpl common/fixture_common.cuh.tpl \
  "templates/common/fixture_common.cuh.tpl:3: string has no field 'frobnicate'"
check manifest_missing.tsv.tpl manifest.tsv.tpl \
  "templates/manifest.tsv.tpl: kernel $g128 has 0 lines in manifest.tsv, expected 1"
check manifest_hash.tsv.tpl manifest.tsv.tpl \
  "templates/manifest.tsv.tpl: the line of kernel $gc shows table_hash, which is computed over the kernel lines"
check derive_error.spec.lua fixture/spec.lua \
  "templates/fixture/spec.lua: derive($gc): templates/fixture/spec.lua:18: k has no field 'tile_q'"
check derive_override.spec.lua fixture/spec.lua \
  "templates/fixture/spec.lua: derive($gc): key 'group' would override a field of k"
check valid_error.spec.lua fixture/spec.lua \
  "templates/fixture/spec.lua: valid($gc): templates/fixture/spec.lua:18: no per-channel kernels in this family"
check valid_result.spec.lua fixture/spec.lua \
  "templates/fixture/spec.lua: valid($gc): returned 0; expected true, or false and a reason"
check spec_global.spec.lua fixture/spec.lua \
  "templates/fixture/spec.lua:3: undefined name 'io'"
check spec_axes.spec.lua fixture/spec.lua \
  "templates/fixture/spec.lua: axes[2] (act): values must be a non-empty list"
check spec_name.spec.lua fixture/spec.lua \
  "templates/fixture/spec.lua: cannot name kernel {act=f_16, arch=80, family=fixture, group=0, stages=4, swz_base=4, swz_bits=3, swz_shift=3, tile_k=64, tile_m=16, tile_n=64, warps=4, wfmt=u4b8}: field 'act' must be a lower-case word of letters and digits, not \"f_16\""

# -v adds the Lua traceback (and only -v).
cp -r "$fixtures/templates" "$tmp/verbose"
cp "$fixtures/bad/undefined_name.cu.tpl" "$tmp/verbose/fixture/kernel.cu.tpl"
capture "$mgen" --templates "$tmp/verbose" --out "$tmp/v" -v
expect_rc 1 "-v"
expect_in "$err" "stack traceback:" "-v"
expect_in "$err" "templates/fixture/kernel.cu.tpl:4: in main chunk" "-v"
capture "$mgen" --templates "$tmp/verbose" --out "$tmp/v"
case "$err" in *traceback*) fail "traceback without -v: $err" ;; esac
echo "template_error: $n cases ok"
