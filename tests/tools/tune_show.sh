#!/usr/bin/env bash
# tune_show.sh MARLIN_TUNE MANIFEST -- marlin-tune --show reads through the library's own cache reader
# and parser (tune_show.c; no GPU): what is not a regular file is refused at once (a FIFO is
# never waited on), files over the size limit and impossible records are refused like
# mgen_cache_load refuses them, and a valid file is shown.
. "$(dirname "$0")/../gen/lib.sh"
tune=$1
manifest=$2 # the build's generated/manifest.tsv: kernels of this build's table and their family
export CUDA_VISIBLE_DEVICES=

mkfifo "$tmp/fifo.cache"
for path in "$tmp" /dev/zero "$tmp/fifo.cache"; do
  capture timeout 20 "$tune" --show "$path" # a hang is exit 124, not 1
  expect_rc 1 "--show $path"
  expect_in "$err" "not a regular file" "--show $path"
done

truncate -s 17M "$tmp/big.cache"
capture "$tune" --show "$tmp/big.cache"
expect_rc 1 "--show of 17 MiB"
expect_in "$err" "larger than the 16 MiB" "--show of 17 MiB"

header="mgen-cache 2
library 0.1.0
table 0x502f66986d178286
device NVIDIA H200
sms 132
sm 90
cuda-runtime 13000
cuda-driver 13000
records 1"
name=mgen_sm80_f16_u4b8_g128_16x128x128_s4_w8_sw3x4x4
printf '%s\ndense/f16/u4b8/g128 4096 4096 1 1 %s 13730 %s 13730\nend\n' "$header" $name $name \
  >"$tmp/ok.cache"
capture "$tune" --show "$tmp/ok.cache"
expect_rc 0 "--show of a valid file"
expect_in "$out" "1 records, tuned on NVIDIA H200" "--show of a valid file"
# A write error on stdout fails --show (a script would read a cut table or JSON as whole).
if [ -c /dev/full ]; then
  for json in "" --json; do
    "$tune" --show "$tmp/ok.cache" ${json:+"$json"} >/dev/full 2>"$tmp/stderr" && rc=0 || rc=$?
    err=$(cat "$tmp/stderr")
    expect_rc 1 "--show $json >/dev/full"
    expect_in "$err" "marlin-tune: writing stdout: No space left on device" \
      "--show $json >/dev/full"
  done
else
  echo "tune_show: no /dev/full here: the write-error check did not run"
fi
# The winner's family, from this build's table (the manifest's family column); "?" for a
# kernel the table lacks (here $name, a kernel of an older default set).
expect_in "$out" "?      sm80 16x128x128_s4_w8_sw3x4x4" "--show of a kernel this build lacks"
shown=0
for family in mma wgmma; do
  kernel=$(awk -F'\t' -v f=$family '/^#/ { next } !header { for (i = 1; i <= NF; i++) col[$i] = i;
           header = 1; next } $col["family"] == f { print $col["name"]; exit }' "$manifest")
  [ -n "$kernel" ] || continue # a build without this family's kernels
  shown=$((shown + 1))
  sed "s/ $name 13730 / $kernel 13730 /" "$tmp/ok.cache" >"$tmp/$family.cache"
  capture "$tune" --show "$tmp/$family.cache"
  expect_rc 0 "--show of a $family winner"
  # the row: family, then the winner as "sm80 16x128x128_s3_w4_sw3x4x4" (arch token and the
  # fields after act, wfmt and group)
  IFS=_ read -r _ arch _ _ _ rest <<<"$kernel"
  expect_in "$out" "$(printf '%-6s %s %s' $family $arch "$rest")" \
    "--show names the $family family of $kernel"
done
[ "$shown" -ge 1 ] || fail "no kernel of any family in $manifest"

# A file of format 1 (no op in its keys) is refused with the message to re-tune.
sed -e 's/^mgen-cache 2$/mgen-cache 1/' -e 's|^dense/||' "$tmp/ok.cache" >"$tmp/format1.cache"
capture "$tune" --show "$tmp/format1.cache"
expect_rc 1 "--show of a format-1 file"
expect_in "$err" "cache format 1 predates the operation field (format 2): re-run marlin-tune" \
  "--show of a format-1 file"

# --json: the same file as one JSON object, byte for byte (the path escaped as a JSON string;
# the open bucket's m_hi is null).
{
  printf '%s\n' "${header%records 1}records 2"
  printf 'dense/f16/u4b8/g128 4096 4096 1 1 %s 13730 %s 13730\n' $name $name
  printf 'dense/f16/u4b8/gc 4096 11008 16385 2147483647 %s 20000 %s 30000\nend\n' $name $name
} >"$tmp/q\"uote.cache"
capture "$tune" --show "$tmp/q\"uote.cache" --json
expect_rc 0 "--show --json of a valid file"
cat >"$tmp/want.json" <<JSON
{
  "file": "$tmp/q\\"uote.cache",
  "format": 2,
  "library": "0.1.0",
  "table": "0x502f66986d178286",
  "this_build_table": false,
  "device": "NVIDIA H200",
  "sms": 132,
  "sm": 90,
  "cuda_runtime": 13000,
  "cuda_driver": 13000,
  "records": [
    {"key": "dense/f16/u4b8/g128", "n": 4096, "k": 4096, "m_lo": 1, "m_hi": 1, "kernel": "$name", "family": "?", "ns": 13730, "default_kernel": "$name", "default_ns": 13730, "speedup": 1.0000},
    {"key": "dense/f16/u4b8/gc", "n": 4096, "k": 11008, "m_lo": 16385, "m_hi": null, "kernel": "$name", "family": "?", "ns": 20000, "default_kernel": "$name", "default_ns": 30000, "speedup": 1.5000}
  ]
}
JSON
printf '%s\n' "$out" >"$tmp/got.json"
diff "$tmp/want.json" "$tmp/got.json" >"$tmp/json.diff" ||
  fail "--show --json printed (>) other than (<):"$'\n'"$(cat "$tmp/json.diff")"
capture "$tune" --show "$tmp/missing.cache" --json
expect_rc 1 "--show --json of a missing file"
[ -z "$out" ] || fail "--show --json of a missing file printed on stdout: $out"

printf '%s\ndense/f16/u4b8/g128/nvfp4 4096 4096 1 1 %s 13730 %s 13730\nend\n' "$header" $name $name \
  >"$tmp/bad.cache"
capture "$tune" --show "$tmp/bad.cache"
expect_rc 1 "--show of an impossible key"
expect_in "$err" "bad.cache:10: 'dense/f16/u4b8/g128/nvfp4' is not a key" "--show of an impossible key"
echo "tune_show: PASS"
