#!/usr/bin/env bash
# run_mutants_device.sh DIR -- on the GPU machine: each mutant that tests/gpu/mutants/prepare.sh
# wrote into DIR (deliberately wrong kernels, or a weakened test or runtime: the patch's parts
# outside templates/ are applied to a copy of the tree) is built into its own test program
# (mutant.test; MGEN_GENERATE=OFF over DIR/<mutant>) and must FAIL it, printing the mutant's
# expected text (test_gemm_gpu: for each of its kernels);
# the log also says whether the worst-case bound alone would have caught it. Exits non-zero if
# any mutant passes, fails another way, or does not build. Logs in ${OUT:-verify}/mutant_*.log.
#
#   tests/gpu/mutants/prepare.sh .scratch/mutants                          (here, with Lua)
#   OUT=$OUT tests/gpu/run_mutants_device.sh .scratch/mutants                (there; carry it)
# --build-only DIR builds them and runs nothing (e.g. in the background while other GPU tests
# run; a later run finds the builds current).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
build_only=0
[ "${1:-}" = --build-only ] && build_only=1 && shift
dir=${1:?usage: run_mutants_device.sh [--build-only] DIR}
out=${OUT:-verify}
mkdir -p "$out"
status=0 count=0
for m in "$dir"/*/; do
  m=${m%/}
  name=$(basename "$m")
  [ -f "$m/mutant.expect" ] || continue
  count=$((count + 1))
  expect=$(cat "$m/mutant.expect")
  test=$(cat "$m/mutant.test")
  log=$out/mutant_$name.log build=build-mutant-$name
  start=$(date +%s)
  src=. patch=$(cd "$m" && pwd)/mutant.patch # (absolute: DIR may be either)
  others=$(grep '^diff --git a/' "$patch" | grep -v '^diff --git a/templates/' || true)
  if [ -n "$others" ]; then
    # Outside the checkout (inside it, git apply takes the copy for a subfolder of the
    # repository and skips every path, rc 0); kept, so a second call finds the build current.
    src=${TMPDIR:-/tmp}/mgen-mutant-$name-src
    if [ ! -d "$src" ]; then
      mkdir -p "$src" && cp -a CMakeLists.txt cmake gen runtime templates tests bench scripts \
        README.md "$src"/ &&
        (cd "$src" && git apply --exclude='templates/*' "$patch" &&
          git apply -R --check --exclude='templates/*' "$patch") ||
        { echo "mutant $name: its patch does not apply here"; rm -rf "$src"; status=1; continue; }
    fi
  fi
  if ! { cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMGEN_GENERATE=OFF \
           -DMGEN_PREGENERATED="$(cd "$m" && pwd)" -DCMAKE_CUDA_ARCHITECTURES=90 \
           -DMGEN_NVCC_JOBS="$(nproc)" && cmake --build "$build" --target "$test"; } \
         >"$log.build" 2>&1; then
    echo "mutant $name: FAILED TO BUILD (see $log.build)"
    status=1
    continue
  fi
  ((build_only)) && { echo "mutant $name: built"; continue; }
  env -u MGEN_TEST_KERNELS -u MGEN_TEST_QUICK "$build/tests/$test" >"$log" 2>&1
  rc=$?
  over=$(grep -cE "[1-9][0-9]* over the bound" "$log" || true)
  caught=$(grep -cF -- "$expect" "$log" || true)
  echo "mutant $name ($test): rc=$rc, $caught lines '$expect', $over cases over the worst-case bound," \
       "$(($(date +%s) - start)) s"
  if [ "$rc" = 77 ]; then
    echo "mutant $name: NOT RUN (no GPU here): a mutant that did not run is no proof"
    status=1
  elif [ "$rc" = 0 ] || [ "$caught" = 0 ]; then
    echo "mutant $name: SURVIVED (the test did not fail it with '$expect')"
    status=1
  elif [ "$test" = test_gemm_gpu ]; then # each kernel failed: on an expected line, or FAIL
    IFS=, read -ra kernels <"$m/mutant.kernels"
    grep -F -- "$expect" "$log" >"$log.lines" || true
    for k in "${kernels[@]}"; do
      [[ $k == *[*?[]* ]] && continue # (globs: the kernels of test_gemm_gpu's summary)
      if ! grep -qF -- "$k" "$log.lines" && ! grep -qE "^$k .* FAIL\$" "$log"; then
        echo "mutant $name: $k SURVIVED (neither named on a '$expect' line nor FAIL)"
        status=1
      fi
    done
  fi
done
((count > 0)) || { echo "run_mutants_device: no prepared mutant in $dir"; exit 1; }
exit $status
