#!/usr/bin/env bash
# sanitizer_groups.sh ROOT -- tests/gpu/run_sanitizers_device.sh's GEMM groups partition the
# default table: every kernel of generated/manifest.tsv is selected by exactly one group's globs
# (matched as test_gemm_gpu's MGEN_TEST_KERNELS does: fnmatch, comma-separated; bash's [[ == ]]
# is the same for these names, which hold no '/' and start with no '.'), every group selects a
# kernel, and a group's kernels are of the family its name starts with. A new family or format
# that no group selects would otherwise never run under the sanitizers. Then the script's
# MGEN_SANITIZER_ONLY filter (`--kernels GROUP[:I/N]` prints what a step would test): each
# group keeps exactly its kernels the filter's globs match, in manifest order, and the parts of a
# filtered group deal those out, each once. Last, the groups follow the manifest: a toy family's
# row gives it a group; and MGEN_SANITIZER_TOOLS refuses a tool it does not know.
. "$(dirname "$0")/../gen/lib.sh"
root=$1
manifest=$root/generated/manifest.tsv
bash "$root/tests/gpu/run_sanitizers_device.sh" --list >"$tmp/groups"
declare -A globs=() hits=()
while IFS=$'\t' read -r name list; do
  [ -n "$list" ] || continue # prepare: programs, not GEMM kernels
  globs[$name]=$list
  hits[$name]=0
done <"$tmp/groups"
((${#globs[@]} >= 2)) || fail "run_sanitizers_device.sh --list gave ${#globs[@]} GEMM groups"

only='*_s12,*_wg1_*' # the filter checked below: wgmma kernels only, some of several groups
declare -A chosen=()   # group -> its kernels the filter matches, comma-separated, manifest order
kernels=0 bad=""
while IFS=$'\t' read -r kernel family _; do
  case "$kernel" in '#'* | name | '') continue ;; esac
  kernels=$((kernels + 1))
  in=()
  for g in "${!globs[@]}"; do
    IFS=, read -ra patterns <<<"${globs[$g]}"
    for p in "${patterns[@]}"; do
      # shellcheck disable=SC2053 # $p is a glob, matched as one
      if [[ "$kernel" == $p ]]; then
        in+=("$g")
        break
      fi
    done
  done
  if [ ${#in[@]} -ne 1 ]; then
    bad+="$kernel: in ${#in[@]} groups (${in[*]})"$'\n'
    continue
  fi
  hits[${in[0]}]=$((hits[${in[0]}] + 1))
  # shellcheck disable=SC2053 # globs
  if [[ "$kernel" == ${only%%,*} || "$kernel" == ${only#*,} ]]; then
    chosen[${in[0]}]+=${chosen[${in[0]}]:+,}$kernel
  fi
  [ "${in[0]%%-*}" = "$family" ] || bad+="$kernel: family $family, in group ${in[0]}"$'\n'
done <"$manifest"
((kernels > 100)) || fail "read only $kernels kernels from $manifest"
for g in "${!hits[@]}"; do
  [ "${hits[$g]}" -gt 0 ] || bad+="group $g selects no kernel"$'\n'
done
[ -z "$bad" ] || fail "the sanitizer groups do not partition $manifest:"$'\n'"$bad"

sanitize=$root/tests/gpu/run_sanitizers_device.sh
filtered=0
for g in "${!globs[@]}"; do
  capture env MGEN_SANITIZER_ONLY="$only" bash "$sanitize" --kernels "$g"
  expect_rc 0 "--kernels $g"
  [ "$out" = "${chosen[$g]:-}" ] ||
    fail "MGEN_SANITIZER_ONLY=$only --kernels $g: '$out', expected '${chosen[$g]:-}'"
  [ -z "${chosen[$g]:-}" ] || filtered=$((filtered + 1))
  dealt=""
  for part in 1/3 2/3 3/3; do
    capture env MGEN_SANITIZER_ONLY="$only" bash "$sanitize" --kernels "$g:$part"
    dealt+=${out:+${dealt:+,}$out}
  done
  [ "$(tr , '\n' <<<"$dealt" | sort)" = "$(tr , '\n' <<<"${chosen[$g]:-}" | sort)" ] ||
    fail "MGEN_SANITIZER_ONLY=$only, $g in 3 parts: '$dealt', expected '${chosen[$g]:-}'"
done
((filtered >= 2)) || fail "the filter $only chose kernels of only $filtered groups: no check"
capture bash "$sanitize" --kernels bogus
expect_rc 2 "--kernels bogus"
capture bash "$sanitize" --kernels "mma-f16-u4b8"
[ "$out" = "${globs[mma-f16-u4b8]}" ] || fail "--kernels mma-f16-u4b8 without a filter: '$out'"
# a subset of the tools: a name it does not know is a usage error, before anything runs
capture env MGEN_SANITIZER_TOOLS=racecheck,memcheck bash "$sanitize" --kernels "mma-f16-u4b8"
expect_rc 0 "MGEN_SANITIZER_TOOLS=racecheck,memcheck --kernels mma-f16-u4b8"
capture env MGEN_SANITIZER_TOOLS=racecheck,memchek bash "$sanitize" --kernels "mma-f16-u4b8"
expect_rc 2 "MGEN_SANITIZER_TOOLS=racecheck,memchek (a misspelt tool)"
expect_in "$err" "no tool 'memchek'" "MGEN_SANITIZER_TOOLS's message"
capture env MGEN_SANITIZER_TOOLS=, bash "$sanitize" --kernels "mma-f16-u4b8"
expect_rc 2 "MGEN_SANITIZER_TOOLS=, (no tool at all)"

# The groups come from the table: a family (and a format) the manifest gains gets its groups
# without an edit to the script. A copy of the script over the manifest plus a toy family's row.
mkdir -p "$tmp/root/tests/gpu" "$tmp/root/generated"
cp "$sanitize" "$tmp/root/tests/gpu/"
cp "$manifest" "$tmp/root/generated/manifest.tsv"
# (the row follows the manifest's header, so that a column the manifest gains cannot shift it)
declare -A toy=([name]=mgen_sm75ref_f16_u4b8_g128_1x64x16 [family]=ref [op]=dense [arch]=75
  [act]=f16 [wfmt]=u4b8 [group]=128 [scheme]=group [layout]=mma [tile_m]=1 [tile_n]=64
  [tile_k]=16 [sm_min]=75 [sm_max]=79 [smem_bytes]=0 [blocks_per_sm]=1 [default_rank]=0)
IFS=$'\t' read -ra header < <(grep -m1 '^name'$'\t' "$manifest")
row=""
for c in "${header[@]}"; do row+="${toy[$c]:-}"$'\t'; done
printf '%s\n' "${row%$'\t'}" >>"$tmp/root/generated/manifest.tsv"
capture bash "$tmp/root/tests/gpu/run_sanitizers_device.sh" --list
expect_rc 0 "--list over a manifest with a toy family"
expect_in "$out" $'\nref-f16-u4b8\tmgen_sm75ref_f16_u4b8_*\n' "the toy family's group"
[ "$(grep -c . <<<"$out")" -eq "$(($(grep -c . "$tmp/groups") + 1))" ] ||
  fail "the toy family's row added other groups than ref-f16-u4b8: $out"

summary=""
for g in "${!hits[@]}"; do summary+=" $g=${hits[$g]}"; done
echo "sanitizer_groups: $kernels kernels, one group each:$summary; the filter checked on $filtered groups"
