#!/usr/bin/env bash
# moe_cover_check.sh ROOT -- bench/moe_cover.py on a hand-made sweep with a known cover: per
# point one kernel is fastest and the others 20% or more slower, except where two tie within
# the tolerance; the every-shape cover comes first (tile_k 256, tile_n wider than 64 and
# sm_90-only kernels enter only in the next), the mma family's cover before the wgmma kernels, the written op_defaults.lua keeps the keys the sweep did not measure,
# a wgmma pick goes to the wgmma family's file (--out-wgmma; refused without it), and bad rows
# are refused.
. "$(dirname "$0")/../gen/lib.sh"
root=$1
cover=$root/bench/moe_cover.py
k16=mgen_sm80_moe_f16_u4b8_g128_16x64x128_s4_w4_sw3x4x4
k8=mgen_sm80_moe_f16_u4b8_g128_8x128x256_s3_w4_sw3x4x5   # tile_k 256: not every k
k64=mgen_sm80_moe_f16_u4b8_g128_64x256x64_s4_w8_sw3x4x3  # tile_n 256: not every n
k90=mgen_sm90_moe_f16_u4b8_g128_64x256x128_s4_w8_sw3x4x4 # sm_90 only
csv=$tmp/sweep.csv
{
  echo "scenario,m,part,kernel,us,graph_us,active_experts,weight_GBps,copies"
  # m=1: k8 fastest (100), k16 101 (within 3%), the others 150
  echo "mixtral,1,gate_up,$k16,120.00,110.00,2,0,2"
  echo "mixtral,1,gate_up,$k8,100.00,-,2,0,2"
  echo "mixtral,1,gate_up,$k16,101.00,-,2,0,2"
  echo "mixtral,1,gate_up,$k64,150.00,-,2,0,2"
  echo "mixtral,1,gate_up,$k90,150.00,-,2,0,2"
  # m=4096: k90 fastest (1000), k64 1100 (10% off), k16 2000, k8 3000
  echo "mixtral,4096,gate_up,$k16,2000.00,1990.00,8,0,2"
  echo "mixtral,4096,gate_up,$k8,3000.00,-,8,0,2"
  echo "mixtral,4096,gate_up,$k16,2000.00,-,8,0,2"
  echo "mixtral,4096,gate_up,$k64,1100.00,-,8,0,2"
  echo "mixtral,4096,gate_up,$k90,1000.00,-,8,0,2"
  echo "mixtral,4096,route,-,30.00,28.00,8,0,2"
} >"$csv"
# the file before: a key the sweep measures (replaced) and one it does not (kept as it is)
kept=mgen_sm80_moe_bf16_u4b8_g128_16x64x128_s4_w4_sw3x4x4
printf '%s\n' 'return {' '  moe = {' '    ["bf16_u4b8_g128"] = {' "      \"$kept\"," '    },' \
  '    ["f16_u4b8_g128"] = {' "      \"$k64\"," '    },' '  },' '}' >"$tmp/op_defaults.lua"
capture python3 "$cover" --out "$tmp/op_defaults.lua" "$csv"
expect_rc 0 "moe_cover.py on the hand-made sweep"
# every-shape cover (sm80, tile_k | 128, tile_n 64): k16 alone, the best of those kernels at
# both points; then against the overall best: k8 is 1% faster than k16 at m=1 (covered at 3%),
# k90 2x faster at m=4096 and k64 10% slower than k90 (not within 3%): k90 enters, k8 and k64
# do not.
[ "$out" = "f16_u4b8_g128: $k16, $k90" ] || fail "picks: $out"
expect_in "$err" "mixtral m=4096 gate_up: 2.000 ($k16)" "the default choice against the cover's best"
written=$(cat "$tmp/op_defaults.lua")
expect_in "$written" "\"$k90\"," "the written file names the picks"
expect_in "$written" "\"$kept\"," "an unmeasured key kept"
expect_in "$written" "as they were (hand picked, not measured): bf16_u4b8_g128;" "the kept key named"
[ "$(grep -c "\"$k64\"" "$tmp/op_defaults.lua")" = 0 ] || fail "the measured key's old kernel stayed"
# a wgmma kernel fastest at m=4096 (800): the every-shape k16, then the mma family's cover
# (k90, its best at m=4096, which the GPUs without wgmma keep), then kw; the picks split by
# family, each family's file written (the wgmma file's old entry of the key replaced, another
# key's kept); without --out-wgmma such a cover is refused and nothing written
kw=mgen_sm90a_moe_f16_u4b8_g128_128x128x64_wg2_s8
cp "$csv" "$tmp/wg.csv"
echo "mixtral,4096,gate_up,$kw,800.00,-,8,0,2" >>"$tmp/wg.csv"
kw_old=mgen_sm90a_moe_f16_u4b8_g128_64x128x64_wg2_s8
kw_kept=mgen_sm90a_moe_bf16_fe2m1_g32_128x128x64_wg2_s8
printf '%s\n' 'return {' '  moe = {' '    ["bf16_fe2m1_g32"] = {' "      \"$kw_kept\"," '    },' \
  '    ["f16_u4b8_g128"] = {' "      \"$kw_old\"," '    },' '  },' '}' >"$tmp/wg_defaults.lua"
cp "$tmp/op_defaults.lua" "$tmp/mma_before.lua"
capture python3 "$cover" --out "$tmp/op_defaults.lua" "$tmp/wg.csv"
expect_rc 1 "wgmma picks without --out-wgmma"
expect_in "$err" "--out-wgmma PATH" "the missing file named"
cmp -s "$tmp/op_defaults.lua" "$tmp/mma_before.lua" || fail "the refused cover wrote the mma file"
capture python3 "$cover" --out "$tmp/op_defaults.lua" --out-wgmma "$tmp/wg_defaults.lua" "$tmp/wg.csv"
expect_rc 0 "moe_cover.py with a wgmma kernel"
[ "$out" = "f16_u4b8_g128: $k16, $k90, $kw" ] || fail "picks with a wgmma kernel: $out"
written=$(cat "$tmp/op_defaults.lua")
expect_in "$written" "\"$k16\"," "the mma file names the mma pick"
expect_in "$written" "\"$k90\"," "the mma file keeps the mma family's best where a wgmma kernel wins"
[ "$(grep -c "sm90a" "$tmp/op_defaults.lua")" = 0 ] || fail "a wgmma name in the mma file"
written=$(cat "$tmp/wg_defaults.lua")
expect_in "$written" "templates/wgmma/op_defaults.lua -- the wgmma family's" "the wgmma file's header"
expect_in "$written" "\"$kw\"," "the wgmma file names the wgmma pick"
expect_in "$written" "\"$kw_kept\"," "an unmeasured key kept in the wgmma file"
[ "$(grep -c "\"$kw_old\"" "$tmp/wg_defaults.lua")" = 0 ] || fail "the measured key's old wgmma kernel stayed"
[ "$(grep -c "\"$k16\"" "$tmp/wg_defaults.lua")" = 0 ] || fail "an mma name in the wgmma file"
# the sweep without the wgmma kernel: the measured key's wgmma entry leaves that file
capture python3 "$cover" --out "$tmp/op_defaults.lua" --out-wgmma "$tmp/wg_defaults.lua" "$csv"
expect_rc 0 "moe_cover.py, no wgmma pick"
[ "$(grep -c "f16_u4b8_g128" "$tmp/wg_defaults.lua")" = 0 ] || fail "a measured key without wgmma picks stayed in the wgmma file"
expect_in "$(cat "$tmp/wg_defaults.lua")" "\"$kw_kept\"," "the unmeasured key still kept"
# bad input
sed 's/,101.00,/,nan,/' "$csv" >"$tmp/bad.csv"
capture python3 "$cover" "$tmp/bad.csv"
expect_rc 1 "a NaN time"
expect_in "$err" "time nan" "the NaN named"
sed "s/$k64/mgen_sm80_f16_u4b8_g128_64x256x64_s4_w8_sw3x4x3/" "$csv" >"$tmp/dense.csv"
capture python3 "$cover" "$tmp/dense.csv"
expect_rc 1 "a dense kernel's row"
expect_in "$err" "not a moe kernel name" "the dense name refused"
echo "moe_cover_check: ok"
