#!/usr/bin/env bash
# proof.sh MARLIN_GEN -- the bank proof through the CLI, on the embedded templates: --explain
# (mma; wgmma: dense tiles, moe's waived conflict, --shape with split-K),
# --allow-conflicts, --space full, and the BANKS reasons of --why-not.
. "$(dirname "$0")/lib.sh"
mgen=$1
good=mgen_sm80_f16_u4b8_g128_16x128x128_s4_w8_sw3x4x4
none=mgen_sm80_f16_u4b8_g128_16x128x128_s4_w8_swnone

# A default kernel: conflict-free (the epilogue reads too, since they alternate halves); its
# ldmatrix table.
capture "$mgen" --explain "$good"
expect_rc 0 "--explain $good"
[ "$(head -1 <<<"$out")" = "$good: conflict-free" ] ||
  fail "--explain $good: first line: $(head -1 <<<"$out")"
expect_in "$out" "A ldmatrix.x4      ldsm    ldmatrix.x4          16        16         64      64         0" \
  "--explain $good: ldmatrix row"
expect_in "$out" "store_c LDS 2nd    ld      LDS.128              16         8         32      32         0" \
  "--explain $good: store_c conflict-free"
# lane 1: row 1, chunk 0 -> 256 ^ (1 << 4) = 272, banks 4-7
expect_in "$out" "      1       272  4-7    0" "--explain $good: lane 1"

# Unswizzled: every row of a matrix in banks 0-3: 8-way, rejected, and the table shows it.
capture "$mgen" --explain "$none"
expect_rc 0 "--explain $none"
expect_in "$out" "$none: REJECTED BANKS: A ldmatrix.x4 8-way (32 wavefronts, min 4)" "--explain $none"
expect_in "$out" "      1       256  0-3    0" "--explain $none: lane 1"
expect_in "$out" "phase 0 (lanes 0-7): 8 wavefronts, min 1: 8 words in bank 0 (8-way)" "--explain $none: phase"

# Predicted launch totals (1024 stages x 16 ldmatrix at 4 wavefronts; no excess anywhere).
# ncu measured the same per instruction on an H200 (SourceCounters), after the store_c fix, when
# the tile was unswapped (55808 ld); swapped since (g128 scales on the sums; bench/notes/v25.md),
# its 4 K-warps' reduction reads one float a lane (LDS.32): more instructions, the same wavefronts.
capture "$mgen" --explain "$good" --shape 16x4096x4096 --sms 132
expect_rc 0 "--explain --shape"
expect_in "$out" "launch M=16 N=4096 K=4096 on 132 SMs, grid 264" "--shape header"
expect_in "$out" "  ldsm           16384        65536        65536            0" "--shape ldsm"
expect_in "$out" "  ld             80384       151552       151552            0" "--shape ld"
# A bad --shape is a usage error before anything is printed (no proof on stdout).
for shape in 16x4096 16x4095x4096 16x4096x4095; do
  expect_usage_error "--shape" "$mgen" --explain "$good" --shape "$shape"
done

# wgmma (Hopper): A through the 128-byte swizzle conflict-free (TMA writes, wgmma reads), the
# consumers' W words in 32 banks: a dense tile's lanes take their W tiles rotated (wgmma/spec.lua
# rotate_w: lanes 8 q .. 8 q + 7 read tile (warp + q) % 4), and C staged in whole rows.
wg=mgen_sm90a_f16_u4b8_g128_256x128x64_wg2_s6
capture "$mgen" --explain "$wg"
expect_rc 0 "--explain $wg"
[ "$(head -1 <<<"$out")" = "$wg: conflict-free" ] || fail "--explain $wg: first line: $(head -1 <<<"$out")"
expect_in "$out" "A TMA write        tma     bulk.tensor.2d       16        64        256     256         0" \
  "--explain $wg: TMA row"
expect_in "$out" "A wgmma read       wgmma   wgmma.mma_async      16       128        512     512         0" \
  "--explain $wg: wgmma row"
expect_in "$out" "W ld.shared        ld      ld.shared.b32         4        32         32      32         0" \
  "--explain $wg: W row"
expect_in "$out" "C stage ld.shared  ld      ld.shared.v4.b32     16         4         16      16         0" \
  "--explain $wg: C row"
# wgmma step 0, rows 0-15: lane 1 = row 1, chunk 0 -> 128 + (0 ^ 1) * 16 = 144, banks 4-7
expect_in "$out" "      1       144  4-7    0" "--explain $wg: SW128 lane 1"
# moe keeps the warp's W tile (store_moe() writes the route's rows from the fragments): the W
# words 4-way (lanes 16 B apart) and waived, so the kernel stays in the default set.
wm=mgen_sm90a_moe_f16_u4b8_g128_128x192x64_wg3_s8
capture "$mgen" --explain "$wm"
expect_rc 0 "--explain $wm"
[ "$(head -1 <<<"$out")" = "$wm: conflict-free except waived accesses" ] ||
  fail "--explain $wm: first line: $(head -1 <<<"$out")"
expect_in "$out" "W ld.shared        ld      ld.shared.b32         4        48        192      48       144  waived" \
  "--explain $wm: W row"
expect_in "$out" "phase 0 (lanes 0-31): 4 wavefronts, min 1: 4 words in bank 0 (4-way)" "--explain $wm: W phase"
expect_in "$out" "fix: the route's rows staged as store() stages dense tiles" "--explain $wm: the waiver names the fix"
capture "$mgen" --list --kernels "$wm"
[ "$out" = "$wm" ] || fail "--list $wm: the waived kernel is in the default set: $out"
# --explain for a kernel of each dense tile.
for tile in 64x64x64_wg1 128x64x64_wg1 256x64x64_wg1 64x128x64_wg2 128x128x64_wg2 \
  256x128x64_wg2 32x256x64_wg4 64x256x64_wg4; do
  k="mgen_sm90a_f16_u4b8_g128_${tile}_s4"
  capture "$mgen" --explain "$k"
  expect_rc 0 "--explain $tile"
  [ "$(head -1 <<<"$out")" = "$k: conflict-free" ] || fail "--explain $k: first line: $(head -1 <<<"$out")"
done
# Launch totals: 64x128 at M = 16: 32 tiles split-K 4 ways, 128 blocks (banks_test.lua); per
# stage W 32 loads x 1 wavefront (rotated) and the scales 8 x 1, the flag 8 loads per piece,
# the staged epilogue 32 tiles x 2 groups x 4 chunks x 4 loads of 4 wavefronts.
capture "$mgen" --explain mgen_sm90a_f16_u4b8_g128_64x128x64_wg2_s4 --shape 16x4096x4096 --sms 132
expect_rc 0 "--explain wgmma --shape"
expect_in "$out" "launch M=16 N=4096 K=4096 on 132 SMs, grid 128" "wgmma --shape header"
expect_in "$out" "  ld             83968        87040        87040            0" "wgmma --shape ld"

# The filter: only the conflict-free swizzle in the full space, all with --allow-conflicts.
glob='mgen_sm80_f16_u4b8_g128_16x128x128_s4_w8_*'
capture "$mgen" --space full --list --kernels "$glob"
[ "$out" = "$good" ] || fail "--space full --list: $out"
capture "$mgen" --space full --allow-conflicts --list --kernels "$glob"
[ "$(wc -l <<<"$out")" = 8 ] || fail "--allow-conflicts: expected the 8 swizzles: $out"
expect_in "$out" "$none" "--allow-conflicts"
capture "$mgen" --list --why-not --kernels "$glob"
expect_in "$out" "REJECTED $none: BANKS: A ldmatrix.x4 8-way (32 wavefronts, min 4)" "--why-not BANKS"
expect_in "$out" "REJECTED mgen_sm80_f16_u4b8_g128_16x128x128_s4_w8_sw2x4x4: BANKS: A ldmatrix.x4 2-way" \
  "--why-not 2-way"
capture "$mgen" --list --why-not --kernels 'mgen_sm80_f16_u4b8_g128_16x64x64_s4_w4_sw3x4x3'
expect_in "$out" "DEFAULTS: not in the default set" "--why-not DEFAULTS"
capture "$mgen" --list --why-not --kernels 'mgen_sm80_f16_u4b8_g128_64x256x128_s8_w8_sw3x4x4'
expect_in "$out" "SMEM: 8 stages x" "--why-not SMEM"
capture "$mgen" --list --why-not --kernels 'mgen_sm90_f16_u4b8_g128_16x128x128_s4_w8_sw3x4x4'
expect_in "$out" "ARCH: " "--why-not ARCH"

# Errors: a name rejected by valid() (exit 1), usage errors (exit 2).
capture "$mgen" --explain mgen_sm90_f16_u4b8_g128_16x128x128_s4_w8_sw3x4x4
expect_rc 1 "--explain of a rejected combination"
expect_in "$err" "is rejected: ARCH: " "--explain of a rejected combination"
for args in "--explain bogus" "--space most --list" "--shape 16x64x64 --list" \
  "--explain $good --shape 16x64" "--explain $good --shape 16x100x128" \
  "--explain $good --shape 16x4096x4096 --sms 0"; do
  # shellcheck disable=SC2086 # split on purpose
  capture "$mgen" $args
  expect_rc 2 "$args"
done
echo "proof: ok"
