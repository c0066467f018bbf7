#!/usr/bin/env bash
# swizzle_agree.sh TEST_SWIZZLE LUA ROOT -- the C/CUDA swizzle (templates/common/mgen_swizzle.h,
# through test_swizzle --digest) and the Lua model of the bank proof (templates/common/smem.lua)
# give the same offsets for every (bits, base, shift) of the range and every offset below 2^16.
. "$(dirname "$0")/lib.sh"
test_swizzle=$1 lua=$2 root=$3
"$test_swizzle" --digest >"$tmp/c.txt"
"$lua" "$root/tests/gen/swizzle_digest.lua" "$root" >"$tmp/lua.txt"
[ -s "$tmp/c.txt" ] || fail "test_swizzle --digest printed nothing"
diff "$tmp/c.txt" "$tmp/lua.txt" || fail "the C and Lua swizzles differ (lines above: bits base shift digest)"
echo "swizzle_agree: $(grep -c . "$tmp/c.txt") parameter sets agree"
