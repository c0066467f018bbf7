#!/usr/bin/env bash
# readme_check.sh ROOT [MARLIN_TUNE] -- README.md says what a user sees, and so do the files it
# sends readers to (CONTRIBUTING.md, docs/*.md), where the README's text moved:
# - every kernel name they show is a kernel of the default table (generated/manifest.tsv), every
#   name glob it shows selects at least one, and every other mgen_sm... token is the start of one
#   (a name prefix in prose, ending at a field boundary). A token is "a kernel name" when it has
#   the shape of one (digit runs alike) of either family, whatever its fields;
# - the cache-file example carries this table's hash and, with MARLIN_TUNE, is a file that
#   `marlin-tune --show` (the library's own reader) accepts, as this build's table where the
#   build has the default set (a build of an MGEN_KERNELS subset, MGEN_README_TABLE=subset in
#   the environment, has another table unless the subset is everything);
# - the size of the mma default set CONTRIBUTING.md states is templates/mma/defaults.lua's;
# - the quick start's two commands are the lines .ci/run runs;
# - the licence it names is there.
. "$(dirname "$0")/../gen/lib.sh"
root=$1 tune=${2:-} built=${MGEN_README_TABLE:-default}
readme=$root/README.md manifest=$root/generated/manifest.tsv contributing=$root/CONTRIBUTING.md
docs=("$readme" "$contributing" "$root"/docs/*.md)
grep '^mgen_' "$manifest" | cut -f1 >"$tmp/names"
[ -s "$tmp/names" ] || fail "no kernel names in $manifest"

for f in "${docs[@]}"; do [ -f "$f" ] || fail "no $f"; done
cat "${docs[@]}" | grep -o 'mgen_sm[0-9][0-9a-z_*]*' | sort -u >"$tmp/mentioned"
# The shapes of the default set's names: digit runs as 9, so that the rule comes from the
# names themselves (mma ..._s4_w8_sw3x4x4, wgmma ..._wg2_s4, any family added later).
shape() { sed 's/[0-9][0-9]*/9/g'; }
shape <"$tmp/names" | sort -u >"$tmp/shapes"
checked=0
while read -r token; do
  case "$token" in
    *'*'*) # a glob: it must select something
      hit=0
      while read -r name; do [[ $name == $token ]] && { hit=1; break; }; done <"$tmp/names"
      ((hit)) || fail "the docs' glob '$token' matches no kernel of the default set" ;;
    *) if grep -qxF -- "$token" "$tmp/names"; then
         : # a kernel of the default set
       elif grep -qxF -- "$(shape <<<"$token")" "$tmp/shapes"; then
         fail "the docs name '$token', which is not in the default set ($manifest)"
       else # a name prefix in prose: it must end at a field boundary of some kernel's name
         prefix=${token%_}
         awk -v p="${prefix}_" 'index($0, p) == 1 { found = 1 } END { exit !found }' "$tmp/names" ||
           fail "the docs' '$token' is neither a kernel of the default set nor the start of one's name"
       fi ;;
  esac
  checked=$((checked + 1))
done <"$tmp/mentioned"
((checked > 0)) || fail "found no kernel names in README.md, CONTRIBUTING.md and docs/"

# The cache-file example: from "mgen-cache N" to "end" inside the code block.
sed -n '/^mgen-cache [0-9]*$/,/^end$/p' "$readme" >"$tmp/example.cache"
[ -s "$tmp/example.cache" ] || fail "no cache-file example in README.md"
hash=$(sed -n 's/^table \(0x[0-9a-f]*\)$/\1/p' "$tmp/example.cache")
want=$(sed -n '1s/.*table_hash \(0x[0-9a-f]*\).*/\1/p' "$manifest")
[ "$hash" = "$want" ] || fail "README's cache example has table $hash; the default table is $want"
if [ -n "$tune" ]; then
  capture "$tune" --show "$tmp/example.cache"
  expect_rc 0 "marlin-tune --show on README's cache example"
  if [ "$built" = default ]; then
    expect_in "$out" "(this build's)" "the example's table is this build's"
  else
    expect_in "$out" "this build's" "the example's table compared with this subset's"
  fi
fi

# "The mma default set (N kernels in all": N is the count of templates/mma/defaults.lua.
stated=$(tr '\n' ' ' <"$contributing" | sed -n 's/.*mma default set (\([0-9]*\) kernels in all.*/\1/p')
have=$(grep -c '^ *"mgen_' "$root/templates/mma/defaults.lua")
[ -n "$stated" ] || fail "CONTRIBUTING.md states no size of the mma default set"
[ "$stated" = "$have" ] || fail "CONTRIBUTING.md says the mma default set has $stated kernels; templates/mma/defaults.lua lists $have"

# Quick start: the first command line after "# 1." and after "# 2." in the sh block.
cmd1=$(sed -n '/^# 1\./,/^[^#]/p' "$readme" | sed -n '$p')
cmd2=$(sed -n '/^# 2\./,/^[^#]/p' "$readme" | sed -n '$p')
[ -n "$cmd1" ] && [ -n "$cmd2" ] || fail "no quick start commands in README.md"
grep -qxF -- "$cmd1" "$root/.ci/run" || fail ".ci/run does not run README's command 1: $cmd1"
grep -qxF -- "$cmd2" "$root/.ci/run" || fail ".ci/run does not run README's command 2: $cmd2"
grep -q 'Licence: Apache-2.0' "$readme" || fail "README.md names no licence"
grep -q 'Apache License' "$root/LICENSE" && grep -q 'Version 2.0, January 2004' "$root/LICENSE" ||
  fail "README.md says Apache-2.0; LICENSE is missing or another licence"
echo "readme_check: $checked kernel names and globs, the cache example and the quick start ok"
