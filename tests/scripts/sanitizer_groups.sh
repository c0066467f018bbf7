#!/usr/bin/env bash
# sanitizer_groups.sh ROOT -- tests/gpu/run_sanitizers_device.sh's GEMM groups partition the
# default table: every kernel of generated/manifest.tsv is selected by exactly one group's globs
# (matched as test_gemm_gpu's MGEN_TEST_KERNELS does: fnmatch, comma-separated; bash's [[ == ]]
# is the same for these names, which hold no '/' and start with no '.'), every group selects a
# kernel, and a group's kernels are of the family its name starts with. A new family or format
# that no group selects would otherwise never run under the sanitizers.
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
  [ "${in[0]%%-*}" = "$family" ] || bad+="$kernel: family $family, in group ${in[0]}"$'\n'
done <"$manifest"
((kernels > 100)) || fail "read only $kernels kernels from $manifest"
for g in "${!hits[@]}"; do
  [ "${hits[$g]}" -gt 0 ] || bad+="group $g selects no kernel"$'\n'
done
[ -z "$bad" ] || fail "the sanitizer groups do not partition $manifest:"$'\n'"$bad"
summary=""
for g in "${!hits[@]}"; do summary+=" $g=${hits[$g]}"; done
echo "sanitizer_groups: $kernels kernels, one group each:$summary"
