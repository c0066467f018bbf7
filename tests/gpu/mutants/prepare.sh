#!/usr/bin/env bash
# prepare.sh DIR -- the generated kernels of every mutant here (tests/gpu/mutants/*.patch: a
# deliberately wrong kernel, or a weakened test, that a GPU test must fail), for
# tests/gpu/run_mutants_device.sh on the GPU machine (no Lua there): DIR/<mutant>/ holds
# marlin-gen's output for the kernels the patch's "Kernels:" line names, from the templates
# with the patch's templates/ part applied where it has one (through bench/ab_prepare.sh, which
# refuses a patch that does not apply or changes none of them), DIR/<mutant>/mutant.patch the
# patch (its other parts, tests/ or runtime/, are applied there, to a copy of the tree),
# mutant.expect the text the failing test must print (its "Expect:" line), mutant.kernels its
# kernels and mutant.test the GPU test program that must fail it ("Test:", default
# test_gemm_gpu).
#
#   tests/gpu/mutants/prepare.sh .scratch/mutants      (then carry .scratch/mutants)
#
# Environment: MARLIN_GEN (default build/gen/marlin-gen).
set -euo pipefail
cd "$(dirname "$0")/../../.."
dir=${1:?usage: prepare.sh DIR}
shopt -s nullglob
patches=(tests/gpu/mutants/*.patch)
((${#patches[@]})) || { echo "prepare: no tests/gpu/mutants/*.patch" >&2; exit 1; }
for patch in "${patches[@]}"; do
  name=$(basename "$patch" .patch)
  kernels=$(sed -n 's/^Kernels: //p' "$patch")
  expect=$(sed -n 's/^Expect: //p' "$patch")
  test=$(sed -n 's/^Test: //p' "$patch")
  test=${test:-test_gemm_gpu}
  [ -f "tests/gpu/$test.c" ] || { echo "prepare: $patch names no GPU test ('Test: $test')" >&2; exit 1; }
  [ -n "$kernels" ] && [ -n "$expect" ] ||
    { echo "prepare: $patch lacks its 'Kernels:' or 'Expect:' line" >&2; exit 1; }
  git apply --check "$patch" || { echo "prepare: $patch does not apply" >&2; exit 1; }
  if grep -q '^diff --git a/templates/' "$patch"; then
    bench/ab_prepare.sh "$patch" "$dir/$name.ab" "$kernels" >/dev/null
  else
    "${MARLIN_GEN:-build/gen/marlin-gen}" --templates templates --out "$dir/$name.ab/new" \
      --kernels "$kernels" >/dev/null
  fi
  # Every kernel the line names exists (a renamed kernel must not shrink the mutant silently).
  IFS=, read -ra names <<<"$kernels"
  for k in "${names[@]}"; do
    [[ $k == *[*?[]* ]] && continue # a glob: ab_prepare.sh / marlin-gen refuse one that matches none
    [ -f "$dir/$name.ab/new/kernels/$k.cu" ] ||
      { echo "prepare: $patch names $k, which marlin-gen does not generate" >&2; exit 1; }
  done
  rm -rf "${dir:?}/$name"
  mv "$dir/$name.ab/new" "$dir/$name"
  rm -rf "${dir:?}/$name.ab"
  cp "$patch" "$dir/$name/mutant.patch"
  printf '%s\n' "$expect" >"$dir/$name/mutant.expect"
  printf '%s\n' "$kernels" >"$dir/$name/mutant.kernels"
  printf '%s\n' "$test" >"$dir/$name/mutant.test"
  echo "prepare: $name: ${#names[@]} kernels in $dir/$name"
done
