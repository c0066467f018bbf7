#!/usr/bin/env bash
# plan_agree.sh MARLIN_GEN TEST_WGMMA_PLAN -- the wgmma launch plan has two copies: the C header
# the launcher and the cost model use (templates/wgmma/include/mgen_wgmma_sched.h, printed by
# test_wgmma_plan) and its Lua mirror for the bank proof's launch totals (templates/wgmma/
# smem.lua, printed by marlin-gen --explain --shape). They must give the same grid and the same
# whole tiles on shapes that take every branch of the plan: whole tiles, split-K, stream-K
# alone and after whole waves, and a grid smaller than the SMs.
. "$(dirname "$0")/lib.sh"
mgen=$1 plan=$2
n=0
# tile_m tile_n M N K SMs (what each case takes)
while read -r tm tn m nn kk sms; do
  [ -z "$tm" ] && continue
  name="mgen_sm90a_f16_u4b8_g128_${tm}x${tn}x64_wg$((tn / 64))_s4"
  capture "$mgen" --space full --explain "$name" --shape "${m}x${nn}x${kk}" --sms "$sms"
  expect_rc 0 "--explain $name --shape ${m}x${nn}x${kk}"
  lua=$(sed -n "s/^launch M=.* SMs, \(grid [0-9]*, whole tiles [0-9]*\):.*/\1/p" <<<"$out")
  c=$("$plan" "$tm" "$tn" "$m" "$nn" "$kk" "$sms")
  [ -n "$lua" ] || fail "$name ${m}x${nn}x${kk}: no grid in --explain's launch line"
  [ "$lua" = "$c" ] || fail "$name ${m}x${nn}x${kk} on $sms SMs: Lua '$lua', C '$c'"
  n=$((n + 1))
done <<'CASES'
256 128 4096 8192 8192 132
256 128 4096 4096 4096 132
256 128 1024 4096 4096 132
64 128 16 4096 4096 132
8 256 1 22016 4096 132
16 256 16 57344 8192 132
128 128 128 57344 8192 132
64 64 64 4096 4096 100
32 256 32 4096 28672 132
8 128 1 128 256 132
CASES
echo "plan_agree: $n shapes, the C plan and its Lua mirror agree"
