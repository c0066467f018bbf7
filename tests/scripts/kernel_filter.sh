#!/usr/bin/env bash
# kernel_filter.sh ROOT [MARLIN_GEN] -- the configure-time MGEN_KERNELS check
# (cmake/MgenKernelFilter.cmake): a filter that selects no kernel fails the configuration with a
# message naming it; a good one reports how many kernels it selects, the same number as
# marlin-gen's own fnmatch (when MARLIN_GEN is given).
. "$(dirname "$0")/../gen/lib.sh"
root=$1 mgen=${2:-}
manifest=$root/generated/manifest.tsv
check() { capture cmake -DGLOBS="$1" -DMANIFEST="$manifest" -P "$root/cmake/MgenKernelFilter.cmake"; }

for typo in 'zzz*' 'mgen_sm80_f16_u4b8_g128_64x256x128_s2_w8_sw3x4x' 'mgen.sm80*'; do
  check "$typo"
  [ "$rc" -ne 0 ] || fail "MGEN_KERNELS='$typo' was accepted: $out"
  flat=$(printf '%s' "$err" | tr -s ' \n' '  ') # CMake wraps its messages
  expect_in "$flat" "MGEN_KERNELS='$typo' matches none of the" "the message for '$typo'"
done

for globs in 'mgen_sm80_f16_u4b8_g128_*' '*_s[23]_w4_*,mgen_sm80_bf16_fe2m1_g16_64x256x128_s2_w8_sw3x4x4' \
  'mgen_sm80_?f16_u4b8_g[!1]*' 'mgen_sm80_f16_u4b8_g128_64x256x128_s2_w8_sw3x4x4'; do
  check "$globs"
  expect_rc 0 "MGEN_KERNELS='$globs'"
  count=${out##*selects }
  count=${count%% kernels*}
  [ "$count" -gt 0 ] || fail "'$globs': no count in: $out"
  if [ -n "$mgen" ]; then
    "$mgen" --list --kernels "$globs" >"$tmp/list"
    want=$(grep -c . "$tmp/list")
    [ "$count" = "$want" ] || fail "'$globs': the check selects $count, marlin-gen lists $want"
  fi
done
echo "kernel_filter: ok"
