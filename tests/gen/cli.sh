#!/usr/bin/env bash
# cli.sh MARLIN_GEN FIXTURES VERSION -- options (--opt value and --opt=value), exit codes (0 ok,
# 1 error, 2 usage) and messages, against the fixture templates.
. "$(dirname "$0")/lib.sh"
mgen=$1 fixtures=$2 version=$3
tpl=(--templates "$fixtures/templates")
gc=mgen_sm80_f16_u4b8_gc_16x64x64_s4_w4_sw3x4x3
g128=mgen_sm80_f16_u4b8_g128_16x64x64_s4_w4_sw3x4x3

expect_std_options "$mgen" "$version"

# Usage errors: exit 2, "marlin-gen: what 'arg'" and a pointer to --help on stderr.
for args in "--bogus" "-x" "positional" "--out" "--shards 0" "--shards 8x" "--kernels=nothing* --list"; do
  # shellcheck disable=SC2086 # split on purpose
  expect_usage_error "" "$mgen" "${tpl[@]}" $args
done
expect_usage_error "unknown option '--bogus'" "$mgen" --bogus
expect_usage_error "unknown option '--lis'" "$mgen" --lis # options are spelled in full
expect_usage_error "unknown option '-x'" "$mgen" -vx
expect_usage_error "option takes no value '--list=1'" "$mgen" --list=1
expect_usage_error "missing value for option '--out'" "$mgen" --out
expect_usage_error "--shards needs a number from 1 to 4096, not '0'" "$mgen" --shards=0
expect_usage_error "unexpected argument '--list'" "$mgen" --list -- --list

capture "$mgen" "${tpl[@]}" --formats foo --list
expect_rc 2 "--formats foo"
expect_in "$err" "'foo'" "--formats foo"
expect_in "$err" "valid values: u4b8" "--formats foo"
capture "$mgen" "${tpl[@]}" --formats u4b8,fe2m1 --list
expect_rc 2 "--formats u4b8,fe2m1"
expect_in "$err" "'fe2m1'" "--formats u4b8,fe2m1"
capture "$mgen" "${tpl[@]}" --act bf16 --list
expect_rc 2 "--act bf16"
expect_in "$err" "valid values: f16" "--act bf16"
capture "$mgen" "${tpl[@]}" --arch=80 --list
expect_rc 2 "--arch=80"
expect_in "$err" "valid values: sm80" "--arch=80"

# Filters.
capture "$mgen" "${tpl[@]}" --list
expect_rc 0 "--list"
[ "$out" = "$gc"$'\n'"$g128" ] || fail "--list printed: $out"
capture "$mgen" "${tpl[@]}" --list --formats u4b8 --act=f16 --arch sm80
[ "$out" = "$gc"$'\n'"$g128" ] || fail "--list with all filters printed: $out"
capture "$mgen" "${tpl[@]}" --list --kernels '*_gc_*'
[ "$out" = "$gc" ] || fail "--kernels '*_gc_*' printed: $out"
capture "$mgen" "${tpl[@]}" --list --kernels 'nothing*,*_g128_*'
[ "$out" = "$g128" ] || fail "--kernels 'nothing*,*_g128_*' printed: $out"
capture "$mgen" "${tpl[@]}" --list --kernels '*_g128_*,*_gc_*'
[ "$out" = "$gc"$'\n'"$g128" ] || fail "--kernels '*_g128_*,*_gc_*' printed: $out"
# A --kernels filter that selects no kernel is a usage error naming the filter, for --list and
# for generation (which then writes nothing); --why-not accepts one that matches only rejected
# combinations, since it lists why.
capture "$mgen" "${tpl[@]}" --list --kernels 'nothing*'
expect_rc 2 "--list --kernels 'nothing*'"
[ -z "$out" ] || fail "--list --kernels 'nothing*' printed: $out"
expect_in "$err" "--kernels 'nothing*' selects no kernel" "--list --kernels 'nothing*'"
capture "$mgen" "${tpl[@]}" --kernels 'nothing*,zzz*' --out "$tmp/none_selected"
expect_rc 2 "--kernels 'nothing*,zzz*' generating"
expect_in "$err" "--kernels 'nothing*,zzz*' selects no kernel" "--kernels 'nothing*,zzz*' generating"
[ ! -e "$tmp/none_selected" ] || fail "--kernels selecting nothing wrote $tmp/none_selected"
capture "$mgen" "${tpl[@]}" --space full --list --kernels '*_s2_*'
expect_rc 2 "--space full --list --kernels '*_s2_*' (only rejected)"
capture "$mgen" "${tpl[@]}" --why-not --kernels '*_s2_*'
expect_rc 0 "--why-not --kernels '*_s2_*' (only rejected)"
expect_in "$out" "REJECTED mgen_sm80_f16_u4b8_g128_16x64x64_s2_w4_sw3x4x3" "--why-not --kernels '*_s2_*'"
capture "$mgen" "${tpl[@]}" --why-not --kernels 'nothing*'
expect_rc 2 "--why-not --kernels 'nothing*'"

# --opt=value and --opt value are the same.
capture "$mgen" "${tpl[@]}" --list --kernels='*_gc_*' --formats=u4b8 --space=default
expect_rc 0 "--kernels='*_gc_*' --formats=u4b8 --space=default"
[ "$out" = "$gc" ] || fail "--kernels='*_gc_*' printed: $out"
capture "$mgen" --templates="$fixtures/templates" --out="$tmp/eq" --shards=3
expect_rc 0 "--templates=DIR --out=DIR --shards=3"
[ -e "$tmp/eq/shards/fixture_02.cu" ] && [ ! -e "$tmp/eq/shards/fixture_03.cu" ] ||
  fail "--shards=3 --out=$tmp/eq did not write 3 shards"
capture "$mgen" "${tpl[@]}" --why-not --kernels '*_g128_*'
expect_in "$out" "REJECTED mgen_sm80_f16_u4b8_g128_16x64x64_s2_w4_sw3x4x3: STAGES: 2 < 3" "--why-not"
[ "$(grep -c REJECTED <<<"$out")" = 1 ] || fail "--why-not --kernels: $out"

# --decode.
capture "$mgen" --decode mgen_sm80_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3
expect_rc 0 "--decode"
expected="family=mma arch=80 act=f16 wfmt=u4b8 group=128 tile_m=16 tile_n=256 tile_k=64 stages=4 warps=8"
expected+=" swz_bits=3 swz_base=4 swz_shift=3"
[ "$(echo $out)" = "$expected" ] || fail "--decode printed: $out"
capture "$mgen" --decode mgen_sm90_bf16_fe2m1_gc_64x128x32_s3_w4_swnone
expect_rc 0 "--decode swnone"
expect_in "$out" "group=0" "--decode gc"
expect_in "$out" "swz_bits=0" "--decode swnone"
for bad in bogus mgen_sm80_f16_u4b8_g0_16x64x64_s4_w4_sw3x4x3 \
  mgen_sm80_f16_u4b8_g032_16x64x64_s4_w4_sw3x4x3 mgen_sm80_f16_u4b8_gc_16x64x64_s4_w4_sw0x4x3 \
  mgen_sm80_F16_u4b8_gc_16x64x64_s4_w4_sw3x4x3 mgen_sm80_f16_u4b8_gc_16x64x64_s4_w4_sw3x4x3_; do
  capture "$mgen" --decode "$bad"
  expect_rc 2 "--decode $bad"
  expect_in "$err" "not a kernel name" "--decode $bad"
done

# Messages show control bytes of arguments escaped (\xNN), never raw: no escape sequence of an
# argument reaches the terminal. UTF-8 text stays.
esc=$'\e[2J\e]0;title\a'
capture "$mgen" --decode "mgen_${esc}x"
expect_rc 2 "--decode with ESC"
expect_in "$err" "mgen_\x1B[2J\x1B]0;title\x07x" "--decode with ESC"
capture "$mgen" "--bogus$esc"
expect_rc 2 "an option with ESC"
expect_in "$err" "'--bogus\x1B[2J" "an option with ESC"
capture "$mgen" --decode $'mgen_\xc2\x9b1m_\xe2\x80\x99'
expect_in "$err" "mgen_\xC2\x9B1m_"$'\xe2\x80\x99' "--decode with a C1 control and UTF-8"
case "$err" in *$'\e'* | *$'\a'* | *$'\xc2\x9b'*) fail "raw control bytes on stderr: $err" ;; esac
capture "$mgen" --decode "$esc"
case "$err" in *$'\e'*) fail "--decode printed ESC: $err" ;; esac

# IO and template errors exit 1; nothing is written by --list or on error.
capture "$mgen" --templates "$tmp/none" --list
expect_rc 1 "--templates of a missing directory"
expect_in "$err" "no templates/<family>/spec.lua" "--templates of a missing directory"
capture "$mgen" "${tpl[@]}" --list --out "$tmp/listed"
[ ! -e "$tmp/listed" ] || fail "--list wrote files"
touch "$tmp/file"
capture "$mgen" "${tpl[@]}" --out "$tmp/file/out"
expect_rc 1 "--out below a file"
expect_in "$err" "$tmp/file/out/" "--out below a file"
echo "cli: ok"
