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
# - the licence it names is there;
# - the "Kernel names" legends list every weight format of the table's names, and its text every
#   architecture token, so that a format or family added later gets its line there;
# - each C block of "## API example", and every other C block, compiles as printed (C11,
#   -Wall -Wextra -Werror) and, given MGEN_README_LIBS (libmgen and libcudart, as CMake passes
#   them), links: a block with main() as a program, any other as a shared object with no
#   undefined symbol; and no call's status is dropped (a libmgen or CUDA call as a bare
#   statement; `(void)` says it is meant). Two
#   mutants of the first block (main's opening line gone; a bare mgen_ call) must fail it.
#   MGEN_README_CC (default cc) and MGEN_README_CUDA_INCLUDE (default /usr/local/cuda/include).
# With MGEN_README_RUN=1 (ctest gpu.readme_c) the first block, linked, also runs as printed:
# once without MGEN_CACHE ("C = A W^T: ..." on stdout), then twice with MGEN_CACHE naming a new
# file, which the first of the two saves (marlin-tune --show reads it, where given) and the
# second loads without complaint. Where it cannot create a context and nvidia-smi lists no GPU
# either: exit 77, skipped.
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
# The "Kernel names" section: each "weight format (a, b, ...)" of its legends lists every weight
# format of the table, and the section names every architecture token (`sm80`, ...).
sed -n '/^## Kernel names$/,/^## [^K]/p' "$readme" >"$tmp/legend"
grep -q 'weight format (' "$tmp/legend" || fail "README's \"## Kernel names\" lists no weight formats"
awk -F'\t' '$1 ~ /^mgen_/ { print $6 }' "$manifest" | sort -u >"$tmp/wfmts"
cut -d_ -f2 "$tmp/names" | sort -u | sed 's/.*/`&`/' >"$tmp/archs"
while read -r lists; do
  while read -r w; do
    [[ ", $lists, " == *", $w, "* ]] ||
      fail "README's kernel-name legend lists weight formats ($lists) without '$w' (generated/manifest.tsv)"
  done <"$tmp/wfmts"
done < <(sed -n 's/.*weight format (\([a-z0-9, ]*\)).*/\1/p' "$tmp/legend")
while read -r a; do
  grep -qF -- "$a" "$tmp/legend" || fail "README's \"## Kernel names\" does not name the architecture token $a"
done <"$tmp/archs"

grep -q 'Apache License' "$root/LICENSE" && grep -q 'Version 2.0, January 2004' "$root/LICENSE" ||
  fail "README.md says Apache-2.0; LICENSE is missing or another licence"
# The C blocks: those of "## API example" (api_N.c) and every other (doc_N.c), each its own
# file, as printed.
cc=${MGEN_README_CC:-cc} cuda_include=${MGEN_README_CUDA_INCLUDE:-/usr/local/cuda/include}
read -r -a libs <<<"${MGEN_README_LIBS:-}"
awk -v dir="$tmp" '/^## / { section = ($0 == "## API example") } /^```c$/ {
  if (section) file = sprintf("%s/api_%d.c", dir, ++n); else file = sprintf("%s/doc_%d.c", dir, ++d)
  printf "" >file; next }
  file != "" && /^```$/ { close(file); file = ""; next } file != "" { print >>file }' "$readme"
# No status dropped: a call to a libmgen function that returns one, or to CUDA, as a statement
# (first on its line, or after `;`, `{`, `)` or `else`).
header=$root/runtime/include/mgen/mgen.h
void_fns=$(sed -n 's/^MGEN_API void \(mgen_[a-z0-9_]*\)(.*/\1/p' "$header")
dropped() {
  sed 's/(void)[[:space:]]*/(void)=/g' "$1" |
    grep -nE '(^|[;{)]|else)[[:space:]]*(mgen_[a-z0-9_]+|cuda[A-Za-z]+)\(' |
    grep -vE "(^|[^a-z0-9_])($(tr '\n' '|' <<<"$void_fns")NONE)\(" || true
}
c_block_fails() { # C_FILE: prints why it fails, nothing if it compiles, links and checks all
  local f=$1 obj=${1%.c}.o bare
  if ! "$cc" -std=c11 -Wall -Wextra -Werror -pedantic -fPIC -I "$root/runtime/include" \
       -I "$cuda_include" -c "$f" -o "$obj" 2>"$f.log"; then
    echo "does not compile: $(head -c 600 "$f.log")"
    return
  fi
  if ((${#libs[@]})); then
    if grep -qE '^int main\(' "$f"; then
      "$cc" "$obj" "${libs[@]}" -o "${f%.c}" 2>"$f.log" ||
        echo "does not link: $(head -c 600 "$f.log")"
    else
      "$cc" -shared -Wl,--no-undefined "$obj" "${libs[@]}" -o "${f%.c}.so" 2>"$f.log" ||
        echo "does not link: $(head -c 600 "$f.log")"
    fi
  fi
  bare=$(dropped "$f")
  [ -z "$bare" ] || echo "drops a status: $bare"
}
blocks=("$tmp"/api_*.c)
[ -e "${blocks[0]}" ] || fail "no C block under \"## API example\" in README.md"
grep -q '^int main(' "${blocks[0]}" ||
  fail "README's first API example has no main(): not a program"
for f in "${blocks[@]}"; do
  why=$(c_block_fails "$f")
  [ -z "$why" ] || fail "README's C block $(basename "$f" .c | tr _ ' ') (## API example) $why"
done
others=("$tmp"/doc_*.c)
[ -e "${others[0]}" ] || others=()
for f in "${others[@]}"; do
  why=$(c_block_fails "$f")
  [ -z "$why" ] || fail "README's C block $(basename "$f" .c | tr _ ' ') (outside ## API example) $why"
done
# The check fails where it should: statements at file scope; a bare call.
sed '/^int main(/d' "${blocks[0]}" >"$tmp/mutant_1.c"
awk '/mgen_ctx_destroy\(/ && !done {
       print "  mgen_ctx_set_tune(ctx, MGEN_TUNE_NEVER, 0);"; done = 1 } { print }' \
  "${blocks[0]}" >"$tmp/mutant_2.c"
for m in 1 2; do
  why=$(c_block_fails "$tmp/mutant_$m.c")
  [ -n "$why" ] || fail "readme_check passes a broken example (mutant $m): the C check cannot fail"
done
[[ $(c_block_fails "$tmp/mutant_2.c") == "drops a status: "* ]] ||
  fail "the bare mgen_ctx_set_tune of mutant 2 is not named as a dropped status"
linked="compiled and linked"
((${#libs[@]})) || linked="compiled (MGEN_README_LIBS unset: not linked)"
echo "readme_check: ${#blocks[@]} C block(s) of \"## API example\" and ${#others[@]} elsewhere $linked;" \
  "2 mutants refused"

echo "readme_check: $checked kernel names and globs, the cache example and the quick start ok"

if [ "${MGEN_README_RUN:-0}" = 1 ]; then
  ((${#libs[@]})) || fail "MGEN_README_RUN=1 needs MGEN_README_LIBS: the example runs linked against them"
  prog=${blocks[0]%.c}
  lib_path=$(for l in "${libs[@]}"; do dirname "$l"; done | paste -sd: -)
  run_example() { # [env's arguments]: the example, with the libraries it was linked against
    capture env "$@" LD_LIBRARY_PATH="$lib_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$prog"
  }
  run_example -u MGEN_CACHE
  if [ "$rc" -eq 1 ] && [[ $err == "mgen_ctx_create: "* ]]; then
    no_gpu_agreed "README's API example says '$err'"
    echo "SKIPPED: README's API example found no GPU here: $err"
    exit 77
  fi
  expect_rc 0 "README's API example, run as printed"
  expect_in "$out" "C = A W^T: 16 x 4096 on sm_" "README's API example's output"
  ran=${out##*on }
  cache=$tmp/readme.cache
  run_example MGEN_CACHE="$cache"
  expect_rc 0 "README's API example with MGEN_CACHE (no file yet)"
  [ -s "$cache" ] || fail "README's API example with MGEN_CACHE=$cache saved no cache file"
  first=$err
  run_example MGEN_CACHE="$cache"
  expect_rc 0 "README's API example with the cache it saved"
  [ -z "$err" ] || fail "README's API example did not take the cache it saved without a word: $err"
  if [ -n "$tune" ]; then
    capture "$tune" --show "$cache"
    expect_rc 0 "marlin-tune --show on the cache README's API example saved"
  fi
  echo "readme_check: README's API example ran ($ran), saved its tune cache and ran on it" \
       "(first run's stderr: ${first:-none})"
fi
