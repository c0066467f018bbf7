#!/usr/bin/env bash
# write_fail.sh MARLIN_GEN FIXTURES -- a write error part of the way through (here a file-size
# limit, `ulimit -f`, with SIGXFSZ ignored so that write() fails with EFBIG, as on a full disk)
# exits 1 and leaves --out as it was: every old file byte-identical and unrenamed, no
# temporaries, no new folders. The changed templates rewrite every kernel file (written first)
# and add a partial larger than the limit (written last).
. "$(dirname "$0")/lib.sh"
mgen=$1 fixtures=$2

"$mgen" --templates "$fixtures/templates" --out "$tmp/out"
before=$(tree_state "$tmp/out")

cp -r "$fixtures/templates" "$tmp/changed"
echo "// changed" >>"$tmp/changed/fixture/kernel.cu.tpl"
head -c 300000 /dev/zero | tr '\0' 'x' >"$tmp/changed/common/zz_big.cuh"

# limited DIR: generates the changed templates into DIR with files limited to 100 KiB.
limited() {
  capture bash -c 'trap "" XFSZ; ulimit -f 100; exec "$@"' limited \
    "$mgen" --templates "$tmp/changed" --out "$1"
}
limited "$tmp/out"
expect_rc 1 "a file over the size limit"
expect_in "$err" "zz_big.cuh: File too large" "a file over the size limit"
after=$(tree_state "$tmp/out")
[ "$after" = "$before" ] || fail "a failed write changed --out; before:"$'\n'"$before"$'\n'"after:"$'\n'"$after"

limited "$tmp/fresh/out"
expect_rc 1 "a file over the size limit, new --out"
[ ! -e "$tmp/fresh" ] || fail "a failed write left folders: $(find "$tmp/fresh")"

# Without the limit the same run succeeds: the kernels and the partial are written.
"$mgen" --templates "$tmp/changed" --out "$tmp/out"
[ "$(wc -c <"$tmp/out/include/zz_big.cuh")" -gt 300000 ] || fail "zz_big.cuh not written"
grep -q "^// changed" "$tmp/out/kernels/mgen_sm80_f16_u4b8_gc_16x64x64_s4_w4_sw3x4x3.cu" ||
  fail "kernel not rewritten"
leftovers=$(find "$tmp/out" -name '.*')
[ -z "$leftovers" ] || fail "temporaries left: $leftovers"
echo "write_fail: ok"
