#!/usr/bin/env bash
# w4a8-mxfp4-prepare.sh OUT -- here (Lua, the generator built): the kernels the W4A8 MXFP4 checks
# need on the GPU machine (bench/patches/w4a8-mxfp4-device.sh), into OUT/gen.tar.xz (carry OUT:
# the checkout alone is ~62 of the 64 MiB a call carries, so packed): the
# default set's W4A8 kernels (u4b8, the e4m3 layout) and fe2m1 kernels (the mma layout: the
# packers changed under them), plus MXFP4 W4A8 kernels of the full space (none is in the
# default set before a measured cover): the wgmma tiles of the u4b8 W4A8 cover and the sm89
# decode tiles.
# Environment: MARLIN_GEN (default build/gen/marlin-gen).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: w4a8-mxfp4-prepare.sh OUT}
gen=$(realpath "${MARLIN_GEN:-build/gen/marlin-gen}")
# From the committed manifest: name, then its layout and wfmt columns.
defaults=$(awk -F'\t' 'NR == 2 { for (i = 1; i <= NF; i++) h[$i] = i; next }
  NR > 2 && ($h["layout"] == "e4m3" || ($h["wfmt"] == "fe2m1" && $h["arch"] != "sm89")) { print $h["name"] }' \
  generated/manifest.tsv | paste -sd,)
extra=(
  'mgen_sm90a_*16_fe2m1_g32_8x128x128_wg1_s8' 'mgen_sm90a_*16_fe2m1_g32_16x128x128_wg2_s8'
  'mgen_sm90a_*16_fe2m1_g32_64x128x128_wg2_s8' 'mgen_sm90a_*16_fe2m1_g32_128x128x128_wg2_s6'
  'mgen_sm90a_*16_fe2m1_g32_192x128x128_wg2_s4' 'mgen_sm90a_f16_fe2m1_g32_32x256x128_wg4_s6'
  'mgen_sm90a_f16_fe2m1_g32_8x256x128_wg2_s4' 'mgen_sm90a_f16_fe2m1_g32_64x192x128_wg3_s6'
  'mgen_sm90a_f16_fe2m1_g32_128x64x128_wg1_s6' 'mgen_sm90a_f16_fe2m1_g32_16x256x128_wg4_s6'
  'mgen_sm89_*16_fe2m1_g32_8x128x128_s4_w4_*' 'mgen_sm89_*16_fe2m1_g32_16x128x128_s3_w4_*'
  'mgen_sm89_f16_fe2m1_g32_8x256x128_s2_w4_*' 'mgen_sm89_f16_fe2m1_g32_16x64x128_s3_w4_*')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" --space full --shards 8 --out "$tmp/gen" --kernels "$defaults,$(IFS=,; echo "${extra[*]}")" >/dev/null
mkdir -p "$out"
tar -C "$tmp" -cJf "$out/gen.tar.xz" gen
names=$(find "$tmp/gen/kernels" -name '*.cu' -printf '%f\n')
echo "w4a8-mxfp4-prepare: $(wc -l <<<"$names") kernels," \
  "$(grep -cE 'sm89_.*fe2m1|sm90a_.*fe2m1_g32_[0-9]+x[0-9]+x128_wg' <<<"$names" || true) of them MXFP4 W4A8;" \
  "$(du -h "$out/gen.tar.xz" | cut -f1)"
