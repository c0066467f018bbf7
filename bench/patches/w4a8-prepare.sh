#!/usr/bin/env bash
# w4a8-prepare.sh OUT -- here (Lua, the generator built): the kernels the W4A8 checks of a format
# outside the default set need on the GPU machine (bench/patches/w4a8-device.sh), into
# OUT/gen.tar.xz (carry OUT: the checkout alone is ~62 of the 64 MiB a call carries, so packed):
# the default set's W4A8 kernels (the e4m3 layout: u4b8 and MXFP4, to compare against) and u4's
# W4A8 kernels of the full space (none in the default set before a measured cover): u4b8's W4A8
# picks with u4 codes (templates/wgmma/defaults_w4a8.lua, templates/mma/defaults_w4a8.lua), read
# from the manifest. (u4's packers in the mma layout are test_pack_gpu's: no kernel needed.)
# Environment: MARLIN_GEN (default build/gen/marlin-gen).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: w4a8-prepare.sh OUT}
gen=$(realpath "${MARLIN_GEN:-build/gen/marlin-gen}")
# From the committed manifest: name, then its layout and wfmt columns.
pick() {
  awk -F'\t' -v want="$1" 'NR == 2 { for (i = 1; i <= NF; i++) h[$i] = i; next }
    NR > 2 && $h["op"] == "dense" && (want == "e4m3" ? $h["layout"] == "e4m3" : $h["wfmt"] == want) { print $h["name"] }' \
    generated/manifest.tsv
}
defaults=$(pick e4m3 | paste -sd,)
u4_w4a8=$(pick e4m3 | grep '_u4b8_' | sed 's/_u4b8_/_u4_/' | paste -sd,)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" --space full --shards 8 --out "$tmp/gen" --kernels "$defaults,$u4_w4a8" >/dev/null
mkdir -p "$out"
tar -C "$tmp" -cJf "$out/gen.tar.xz" gen
names=$(find "$tmp/gen/kernels" -name '*.cu' -printf '%f\n')
u4=$(grep -E '^mgen_[a-z0-9]+_[a-z0-9]+_u4_' <<<"$names" || true)
echo "w4a8-prepare: $(wc -l <<<"$names") kernels, $(wc -l <<<"$u4") u4 ($(grep -cE '^mgen_sm89_|x128_wg' <<<"$u4" || true)" \
  "W4A8); $(du -h "$out/gen.tar.xz" | cut -f1)"
