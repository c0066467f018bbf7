#!/usr/bin/env bash
# twin_compare_check.sh ROOT -- bench/twin_compare.py (one format's time over its twin's per M
# bucket, #48's bar): the committed v38 run gives v38's published figures (bench/notes/v38.md
# item 4) and misses a 3% bar where v38 says it did; hand-made CSVs give known answers (the
# fastest kernel of a point counts, a point one format lacks does not, graph replay's -1 rows are
# left out); bad input exits 2 with a message.
. "$(dirname "$0")/../gen/lib.sh"
root=$1
tc=$root/bench/twin_compare.py

# The real run: v38 item 4's u4 / u4b8 geomeans, f16 and bf16, M 1-16 / 32-128 / 256 / 512-4096.
capture python3 "$tc" "$root/bench/results/results-h200-v38-u4.csv.xz" --bar 1.03
expect_rc 1 "v38's run against a 3% bar"
expect_in "$out" "| f16 | g128 | 1.014 (40) | 1.040 (24) | 1.026 (8) | 0.996 (32) |" "v38's f16 row"
expect_in "$out" "| bf16 | g128 | 1.035 (40) | 1.044 (24) | 1.044 (8) | 1.010 (32) |" "v38's bf16 row"
expect_in "$out" "bf16 g128 M 1-16: 1.035; bf16 g128 M 32-128: 1.044; bf16 g128 M 256: 1.044; f16 g128 M 32-128: 1.040" \
  "the buckets above the bar"
capture python3 "$tc" "$root/bench/results/results-h200-v38-u4.csv.xz" --time mgen_graph_us --bar 1.03
expect_rc 0 "v38's graph replay (M 1-16 only) against a 3% bar"
expect_in "$out" "| f16 | g128 | 1.012 (40) | - | - | - |" "v38's replayed f16 row"

# Known answers: per point the fastest row of each format; M = 1 ratios 1.21 and 1.0 (geomean
# 1.1), M = 64 1.2 after the base's faster kernel, M = 300 in no bucket, an M = 256 point without
# a twin row.
csv=$tmp/t.csv
{
  echo "gpu,act,fmt,kernel,M,K,N,mgen_us,mgen_graph_us"
  echo "g,f16,u4b8_g128,mgen_sm80_f16_u4b8_g128_8x128x128_s4,1,4096,4096,10.0,-1"
  echo "g,f16,u4_g128,mgen_sm80_f16_u4_g128_8x128x128_s4,1,4096,4096,12.1,-1"
  echo "g,f16,u4b8_g128,mgen_sm80_f16_u4b8_g128_8x128x128_s4,1,8192,4096,20.0,-1"
  echo "g,f16,u4_g128,mgen_sm80_f16_u4_g128_8x128x128_s4,1,8192,4096,20.0,-1"
  echo "g,f16,u4b8_g128,mgen_sm90a_f16_u4b8_g128_64x128x64_wg2_s8,64,4096,4096,30.0,-1"
  echo "g,f16,u4b8_g128,mgen_sm90a_f16_u4b8_g128_64x256x64_wg4_s6,64,4096,4096,25.0,-1"
  echo "g,f16,u4_g128,mgen_sm90a_f16_u4_g128_64x128x64_wg2_s8,64,4096,4096,30.0,-1"
  echo "g,f16,u4_g128,mgen_sm90a_f16_u4_g128_64x256x64_wg4_s6,64,4096,4096,33.0,-1"
  echo "g,f16,u4b8_g128,mgen_sm90a_f16_u4b8_g128_64x256x64_wg4_s6,300,4096,4096,40.0,-1"
  echo "g,f16,u4_g128,mgen_sm90a_f16_u4_g128_64x256x64_wg4_s6,300,4096,4096,80.0,-1"
  echo "g,f16,u4b8_g128,mgen_sm90a_f16_u4b8_g128_64x256x64_wg4_s6,256,4096,4096,40.0,-1"
} >"$csv"
capture python3 "$tc" "$csv" --bar 1.15
expect_rc 1 "hand-made CSV against a 15% bar"
expect_in "$out" "| f16 | g128 | 1.100 (2) | 1.200 (1) | - | - |" "the known geomeans"
expect_in "$out" "above the bar 1.150: f16 g128 M 32-128: 1.200" "the bucket above the bar"
expect_in "$out" "f16 sm90a 64x128x64_wg2_s8: 1.200 (1 point)" "the twin's fastest kernel names the tile"
capture python3 "$tc" "$csv" --bar 1.2
expect_rc 0 "hand-made CSV against a 20% bar"
capture python3 "$tc" "$csv" --base u4 --twin u4b8
expect_rc 0 "the formats swapped"
expect_in "$out" "| 0.909 (2) | 0.833 (1) |" "the inverse ratios"

# Bad input: exit 2 and a message, never a traceback.
bad() { # bad DESCRIPTION: the last capture exited 2 with a one-line message
  expect_rc 2 "$1"
  [[ "$err" == twin_compare.py:* && "$err" != *Traceback* ]] || fail "$1: stderr '$err'"
}
capture python3 "$tc" "$csv" --time mgen_graph_us
bad "a column with no replayed point"
expect_in "$err" "no point has both u4b8 and u4 rows" "the empty comparison's message"
sed 's/,12.1,/,fast,/' "$csv" >"$tmp/bad.csv"
capture python3 "$tc" "$tmp/bad.csv"
bad "a time that is not a number"
expect_in "$err" "bad.csv:3: mgen_us or M is not a number" "the bad row's line"
sed 's/,12.1,/,0,/' "$csv" >"$tmp/zero.csv"
capture python3 "$tc" "$tmp/zero.csv"
bad "a zero time"
cut -d, -f1-7 "$csv" >"$tmp/cut.csv"
capture python3 "$tc" "$tmp/cut.csv"
bad "a CSV without a time column"
expect_in "$err" "cut.csv: no column mgen_us" "the missing column's message"
capture python3 "$tc" "$tmp/missing.csv"
bad "a CSV that does not exist"
capture python3 "$tc" "$csv" --bar -1
bad "a negative bar"
capture python3 "$tc" "$csv" --bogus 1
bad "an unknown option"
capture python3 "$tc" "$csv" --bar
bad "an option without its value"
expect_in "$err" "--bar needs a value" "the missing value's message"
echo "twin_compare: v38's figures reproduced, known answers and bad input checked"
