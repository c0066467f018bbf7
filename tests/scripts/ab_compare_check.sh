#!/usr/bin/env bash
# ab_compare_check.sh ROOT -- bench/ab_compare.awk, the summary of an A/B run
# (bench/run_ab_device.sh): from a hand-made ab.csv with known answers, the geometric mean over
# the shapes of base time / variant time, each the best of its rounds, per act, format, kernel
# (without act, format and group) and M; a kernel only one variant has is left out; with -v
# by=rows, per tile rows (the best kernel of each variant); with -v by=point, per point; a CSV
# without the columns exits 2.
. "$(dirname "$0")/../gen/lib.sh"
root=$1
cmp=$root/bench/ab_compare.awk

cat >"$tmp/ab.csv" <<'CSV'
variant,round,gpu,act,fmt,kernel,M,K,N,mgen_us,cublas_us,speedup,mgen_roofline_frac,cublas_roofline_frac,weight_GBps,reps
base,1,G,f16,u4b8_g128,mgen_sm90a_f16_u4b8_g128_64x128x64_wg2_s8,16,4096,4096,12,1,1,1,1,1,10
base,2,G,f16,u4b8_g128,mgen_sm90a_f16_u4b8_g128_64x128x64_wg2_s8,16,4096,4096,10,1,1,1,1,1,10
base,1,G,f16,u4b8_g128,mgen_sm90a_f16_u4b8_g128_64x128x64_wg2_s8,16,8192,8192,40,1,1,1,1,1,10
new,1,G,f16,u4b8_g128,mgen_sm90a_f16_u4b8_g128_64x128x64_wg2_s8,16,4096,4096,5,1,1,1,1,1,10
new,2,G,f16,u4b8_g128,mgen_sm90a_f16_u4b8_g128_64x128x64_wg2_s8,16,4096,4096,6,1,1,1,1,1,10
new,1,G,f16,u4b8_g128,mgen_sm90a_f16_u4b8_g128_64x128x64_wg2_s8,16,8192,8192,80,1,1,1,1,1,10
base,1,G,f16,u4b8_g128,mgen_sm90a_f16_u4b8_g128_64x128x64_wg2_s8,1,4096,4096,9,1,1,1,1,1,10
new,1,G,f16,u4b8_g128,mgen_sm90a_f16_u4b8_g128_64x128x64_wg2_s8,1,4096,4096,3,1,1,1,1,1,10
base,1,G,f16,u4b8_g128,mgen_sm90a_f16_u4b8_g128_128x128x64_wg2_s8,1,4096,4096,9,1,1,1,1,1,10
CSV
capture awk -F, -f "$cmp" "$tmp/ab.csv"
expect_rc 0 "ab_compare.awk"
# M = 16: shapes 10/5 = 2 and 40/80 = 0.5, geometric mean 1; M = 1: 9/3 = 3 over one shape.
# 128x128 has no "new" row: no line.
want="variant  act   format       kernel                        M  base/it shapes
new      f16   u4b8_g128    64x128x64_wg2_s8              1    3.000      1
new      f16   u4b8_g128    64x128x64_wg2_s8             16    1.000      2"
[ "$out" = "$want" ] || fail "ab_compare.awk printed:"$'\n'"$out"$'\n'"expected:"$'\n'"$want"

# -v by=rows pools a variant's kernels by tile rows: 64-row at M = 1 is base 9 (64x128) against
# new's 3 (64x128), and the 128-row tile now compares with no partner in "new".
capture awk -F, -v by=rows -f "$cmp" "$tmp/ab.csv"
expect_rc 0 "ab_compare.awk -v by=rows"
want="variant  act   format       kernel                        M  base/it shapes
new      f16   u4b8_g128    64-row                        1    3.000      1
new      f16   u4b8_g128    64-row                       16    1.000      2"
[ "$out" = "$want" ] || fail "ab_compare.awk -v by=rows printed:"$'\n'"$out"$'\n'"expected:"$'\n'"$want"
# Two kernels of one variant and rows: the best of them counts (new's 16-row at 2 against 4).
cat >"$tmp/rows.csv" <<'CSV'
variant,round,gpu,act,fmt,kernel,M,K,N,mgen_us
base,1,G,f16,u4b8_g128,mgen_sm80_f16_u4b8_g128_16x128x128_s3_w8_sw3x4x4,16,4096,4096,4
new,1,G,f16,u4b8_g128,mgen_sm80_f16_u4b8_g128_16x128x256_s2_w8_sw3x4x5,16,4096,4096,2
new,1,G,f16,u4b8_g128,mgen_sm80_f16_u4b8_g128_16x64x256_s4_w4_sw3x4x5,16,4096,4096,5
CSV
capture awk -F, -v by=rows -f "$cmp" "$tmp/rows.csv"
want="variant  act   format       kernel                        M  base/it shapes
new      f16   u4b8_g128    16-row                       16    2.000      1"
[ "$out" = "$want" ] || fail "ab_compare.awk -v by=rows (best of two) printed:"$'\n'"$out"
# -v by=point: a point whose choice changed tile (base's 16x128x128 against new's 16x128x256
# and 16x64x256) compares the best of each (4 against 2), where by kernel it has no partner.
capture awk -F, -v by=point -f "$cmp" "$tmp/rows.csv"
want="variant  act   format       kernel                        M  base/it shapes
new      f16   u4b8_g128    best                         16    2.000      1"
[ "$out" = "$want" ] || fail "ab_compare.awk -v by=point printed:"$'\n'"$out"
capture awk -F, -f "$cmp" "$tmp/rows.csv"
want="variant  act   format       kernel                        M  base/it shapes"
[ "$out" = "$want" ] || fail "ab_compare.awk by kernel on rows.csv printed:"$'\n'"$out"

# bench_moe's ab.csv (BENCH=bench_moe): per scenario, part, kernel (without moe_, act, format
# and group) and m; "us" by default, graph_us with -v time=graph_us, whose "-" rows (--kernels
# sweeps) are left out.
cat >"$tmp/moe.csv" <<'CSV'
variant,round,scenario,m,part,kernel,us,graph_us,active_experts,weight_GBps,copies,experts,topk,n,k
base,1,qwen3,4,gate_up,mgen_sm80_moe_f16_u4b8_g128_8x128x256_s4_w4_sw3x4x5,12,9,8,1,1,128,8,1536,2048
base,2,qwen3,4,gate_up,mgen_sm80_moe_f16_u4b8_g128_8x128x256_s4_w4_sw3x4x5,10,8,8,1,1,128,8,1536,2048
new,1,qwen3,4,gate_up,mgen_sm80_moe_f16_u4b8_g128_8x128x256_s4_w4_sw3x4x5,8,-,8,1,1,128,8,1536,2048
new,2,qwen3,4,gate_up,mgen_sm80_moe_f16_u4b8_g128_8x128x256_s4_w4_sw3x4x5,9,6,8,1,1,128,8,1536,2048
base,1,qwen3,4,route,-,3,2,0,0,1,128,8,0,0
new,1,qwen3,4,route,-,6,4,0,0,1,128,8,0,0
CSV
capture awk -F, -f "$cmp" "$tmp/moe.csv"
expect_rc 0 "ab_compare.awk on bench_moe's ab.csv"
want="variant  act   format       kernel                        M  base/it shapes
new      qwen3 gate_up      8x128x256_s4_w4_sw3x4x5       4    1.250      1
new      qwen3 route        -                             4    0.500      1"
[ "$out" = "$want" ] || fail "ab_compare.awk (bench_moe) printed:"$'\n'"$out"$'\n'"expected:"$'\n'"$want"
capture awk -F, -v time=graph_us -f "$cmp" "$tmp/moe.csv"
want="variant  act   format       kernel                        M  base/it shapes
new      qwen3 gate_up      8x128x256_s4_w4_sw3x4x5       4    1.333      1
new      qwen3 route        -                             4    0.500      1"
[ "$out" = "$want" ] || fail "ab_compare.awk -v time=graph_us (bench_moe) printed:"$'\n'"$out"

printf 'a,b\n1,2\n' >"$tmp/bad.csv"
capture awk -F, -f "$cmp" "$tmp/bad.csv"
expect_rc 2 "ab_compare.awk on a CSV without variant, kernel, mgen_us"
case $err in *"not an ab.csv"*) ;; *) fail "no message for a bad CSV: $err" ;; esac
[ -z "$out" ] || fail "ab_compare.awk printed a table for a bad CSV: $out"
echo "ab_compare_check: ok"
