#!/usr/bin/env bash
# run_tree_ab_device.sh -- an A/B of two source trees on the GPU machine: this checkout ("base")
# against TREE ("new": bench/tree_prepare.sh's copy with a patch applied), each built whole
# (runtime, packer and kernels from its own generated/), then bench_gemm's default choice of
# both timed in alternating rounds in one call (ROUNDS, default 2, even: the order alternates),
# and the new tree's GPU tests. For changes that move the packed layout with the kernels, where
# bench/run_ab_device.sh (one runtime, several kernel trees) would time kernels on weights they
# cannot read.
#
#   TREE=DIR OUT=$OUT bench/run_tree_ab_device.sh [bench_gemm options]
#   e.g. TREE=.scratch/tree-new ... --act all --fmt nvfp4,mxfp4 --m 1,2,4,8,16 --graph 20
#
# Writes $OUT/ab.csv (variant, round, then bench_gemm's columns; bench/ab_compare.awk sums it
# up) and $OUT/ab-logs.tar.xz (builds, rounds, the new tree's `ctest -L gpu -LE sanitize`).
# Environment: TREE (required), OUT (default bench), ROUNDS, MGEN_NVCC_JOBS (default: the CPU
# count), TESTS (default 1; 0 skips the new tree's tests).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/ab_rounds.sh
tree=${TREE:?set TREE to the second source tree (bench/tree_prepare.sh)}
case $tree in /*) ;; *) tree=$PWD/$tree ;; esac
[ -f "$tree/CMakeLists.txt" ] && [ -f "$tree/generated/manifest.tsv" ] ||
  { echo "run_tree_ab_device: $tree is not a source tree with generated/" >&2; exit 2; }
out=${OUT:-bench}
mkdir -p "$out"
arch=$(ab_arch)
start=$(date +%s)
for v in base new; do
  src=$PWD
  [ "$v" = new ] && src=$tree
  cmake -S "$src" -B "$src/build-tree-$v" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
    -DMGEN_GENERATE=OFF -DMGEN_NVCC_JOBS="${MGEN_NVCC_JOBS:-$(nproc)}" >"$out/ab-build-$v.log" 2>&1
  cmake --build "$src/build-tree-$v" >>"$out/ab-build-$v.log" 2>&1 || { tail -20 "$out/ab-build-$v.log"; exit 1; }
  echo "built $v: $(($(date +%s) - start)) s"
done
ab_rounds "$out" "${ROUNDS:-2}" "$start" "base=$PWD/build-tree-base/bench/bench_gemm" \
  "new=$tree/build-tree-new/bench/bench_gemm" -- "$@"
if [ "${TESTS:-1}" != 0 ]; then
  rc=0
  ctest --test-dir "$tree/build-tree-new" -L gpu -LE sanitize --output-on-failure >"$out/ab-ctest-new.log" 2>&1 || rc=$?
  echo "new tree ctest -L gpu -LE sanitize: rc $rc, $(grep -E 'tests passed' "$out/ab-ctest-new.log" || echo 'no summary')"
fi
ab_pack_logs "$out"
