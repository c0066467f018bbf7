#!/usr/bin/env bash
# run_patch_device.sh DIR [A/B options] -- one GPU-machine call over a waiting template
# patch (bench/patches/): its tests and compute-sanitizer on the patched kernels, then the A/B
# against the unpatched ones. DIR is bench/ab_prepare.sh's output (DIR/base, DIR/new; carry it).
#
#   bench/ab_prepare.sh bench/patches/NAME.patch .scratch/ab 'GLOBS'      (here: Lua)
#   OUT=$OUT bench/run_patch_device.sh .scratch/ab --act f16,bf16 --fmt g128,u4_g128 --m 64,128,256
#
# Steps: build TESTS' programs from DIR/new (its kernels only, in build-ab-new, which the A/B
# then reuses); run each test; each SANITIZE tool on the first test program;
# bench/run_ab_device.sh with VARIANTS="base:DIR/base new:DIR/new" and the options given
# (skipped without options), then bench/ab_compare.awk's table. One summary line per step; logs in ${OUT:-bench}/patch.
# Environment: TESTS (default "test_gemm_gpu --quick"; ";"-separated, each a program of
# tests/ and its arguments, e.g. "test_gemm_gpu --quick;test_moe_gpu --quick"), SANITIZE
# (default "racecheck:--race memcheck:--quick synccheck:--quick": tool:arguments of the first
# program), ROUNDS (the A/B's, default 2), STEP_LIMIT (seconds per step, default 240; the A/B's:
# AB_LIMIT, default 480), BENCH (the A/B's program: bench_gemm, or bench_moe with its options,
# run_ab_device.sh), EXTRA (more "NAME:DIR" variants for the A/B beside base and new, e.g. a
# second patch's tree: timed in the same rounds, not tested).
# Exits 2 on a usage error (before anything builds), 1 if a step failed, else 0.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
dir=${1:-}
if [ -z "$dir" ] || [ ! -f "$dir/base/manifest.tsv" ] || [ ! -f "$dir/new/manifest.tsv" ]; then
  echo "usage: run_patch_device.sh DIR [A/B options] (DIR: ab_prepare.sh's output, with base/ and new/)" >&2
  exit 2
fi
shift
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
out=${OUT:-bench}/patch
limit=${STEP_LIMIT:-240}
. bench/ab_rounds.sh
IFS=';' read -r -a tests <<<"${TESTS:-test_gemm_gpu --quick}"
read -r -a tools <<<"${SANITIZE:-racecheck:--race memcheck:--quick synccheck:--quick}"
for t in "${tests[@]}"; do
  case ${t%% *} in test_*_gpu) ;; *) echo "run_patch_device: TESTS: '$t' is not a tests/ GPU program" >&2; exit 2 ;; esac
done
ab_bench >/dev/null || exit 2
ab_variants "run_patch_device: EXTRA" "${EXTRA:-}" || exit 2
for s in "${tools[@]}"; do
  case ${s%%:*} in memcheck | racecheck | synccheck | initcheck) ;; *) echo "run_patch_device: SANITIZE: unknown tool in '$s'" >&2; exit 2 ;; esac
done
mkdir -p "$out" || exit 1
export PATH=/usr/local/cuda/bin:$PATH
status=0
step() { # step NAME LOG COMMAND...: runs under the step limit, prints rc, seconds and the log's summary
  local name=$1 log=$out/$2 start rc
  shift 2
  start=$(date +%s)
  timeout "$limit" "$@" >"$log" 2>&1
  rc=$?
  echo "$name: rc=$rc $(($(date +%s) - start)) s"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|kernels tested|checks,|PASS|FAIL" "$log" | tail -4
  [ "$rc" = 0 ] || status=1
}
build="build-ab-new"  # the A/B's own build of the new tree: its kernels compile once
targets=()
for t in "${tests[@]}"; do targets+=("${t%% *}"); done
# (through bash: timeout runs programs, not the functions ab_rounds.sh defines)
step configure configure.log bash -c '. bench/ab_rounds.sh && ab_configure "$@"' ab_configure new \
  "$dir/new" "$(ab_arch)"
step "build ${targets[*]}" build.log cmake --build "$build" --target "${targets[@]}"
[ "$status" = 0 ] || { tail -20 "$out/build.log"; exit 1; }
i=0
for t in "${tests[@]}"; do
  read -r -a cmd <<<"$t"
  step "$t" "test$i.log" "$build/tests/${cmd[0]}" "${cmd[@]:1}"
  i=$((i + 1))
done
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
read -r -a first <<<"${tests[0]}"
for s in "${tools[@]}"; do
  read -r -a args <<<"${s#*:}"
  step "${s%%:*} ${first[0]} ${args[*]}" "${s%%:*}.log" "$sanitizer" --tool "${s%%:*}" --error-exitcode 1 \
    "$build/tests/${first[0]}" "${args[@]}"
done
if [ $# -gt 0 ]; then
  limit=${AB_LIMIT:-480}
  step "A/B ($*)" ab.log env VARIANTS="base:$dir/base new:$dir/new${EXTRA:+ $EXTRA}" OUT="$out/ab" ROUNDS="${ROUNDS:-2}" \
    bash bench/run_ab_device.sh "$@"
  awk -F, -v base=base -f bench/ab_compare.awk "$out/ab/ab.csv"
fi
exit $status
