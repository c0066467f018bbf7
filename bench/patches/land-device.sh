#!/usr/bin/env bash
# land-device.sh STEP... -- on the GPU machine: the checks the waiting patches (landing.sh) owe
# before they land, over land-prepare.sh's output carried in W (default .scratch/land). Steps,
# in the order they depend on each other (a warm machine keeps DEV's builds between calls; DEV,
# default .scratch/dev, is ignored and not carried, so a call does not replace it):
#   build     the landing tree (DEV/tree, -lineinfo) and this checkout (DEV/build-base), sm_90, side
#             by side; then the route A/B's two libmgen.so (DEV/lib-new, DEV/lib-base: the tree's and
#             the tree's with route-base.cu) (the tree alone, sm_90, 2 cores: 3.5 min; not timed
#             on the GPU machine's 16)
#   tests     test_api_gpu, test_moe_gpu, test_gemm_gpu, test_w4a8_gpu, the Python GPU tests
#   sanitize  memcheck (4 moe, 3 dense kernels, --quick), racecheck and synccheck of the routes
#             (test_moe_gpu --routes), racecheck of one mma moe kernel
#   ab        bench_gemm base / new (--act f16 --fmt g128 --m 1,16,256 --graph 20, 2 rounds),
#             the route (bench_moe --parts route, lib-base / lib-new, 3 rounds) and the unsorted
#             rule (bench_moe M 1-8 with and without --unsorted, 2 rounds)
#   w4a8      the W4A8 kernels W4A8_KERNELS names (globs; default
#             mgen_sm90a_bf16_*_64x128x128_wg2_s8: the 3 that w4a8-bf16-64rows-v74.patch adds):
#             test_w4a8_gpu on them, then memcheck, racecheck and synccheck (--quick); and
#             bench_gemm base / new (--act e4m3bf16 --fmt g128,u4_g128,mxfp4 --m 16,32,64,128
#             --graph 20, 2 rounds; needs BASE=1; summed up per point: ab_compare.awk -v by=point)
#   mutants   every GPU mutant of the tree must fail (tests/gpu/run_mutants_device.sh)
#   ctest     the tree's `ctest -L gpu -LE sanitize`
#   front     #53's GPU side on the tree: the README's Python, the wheel, the examples and the
#             layer tests, and bench/layer_overhead.py (Linear's host time per eager call)
# Logs and CSVs in OUT (default land-out), packed at the end into OUT/land-out.tar.xz (the
# A/Bs' ab.csv in OUT/gemm, route, unsorted and w4a8); one summary line per step. Exits
# non-zero if any step failed. A machine left idle for 30 s is a fresh one: start each call
# with `build` (a no-op where the builds are there), e.g. `build tests`, `build sanitize`,
# `build w4a8 ab front`, `build mutants ctest` (each within a 10-minute call on an H200,
# estimated, not yet timed).
# BASE=0: a landing that leaves the dense GEMM alone (the route revert) builds only the tree
# (all 16 cores: about half the time) and its ab skips the bench_gemm A/B against this checkout;
# TESTS="t1 t2": the tests step's GPU test programs (default: all four).
# shellcheck disable=SC2317 # the steps are called through "step_$s"
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
w=$(realpath "${W:-.scratch/land}")
out=$(mkdir -p "${OUT:-land-out}" && realpath "${OUT:-land-out}")
# The builds live outside W: a carried path is replaced on every call, an ignored one is kept.
dev=$(mkdir -p "${DEV:-.scratch/dev}" && realpath "${DEV:-.scratch/dev}")
tree=$dev/tree base=$dev/build-base with_base=${BASE:-1}
export PATH=/usr/local/cuda/bin:$PATH
status=0
# shellcheck source=bench/patches/device_steps.sh
. bench/patches/device_steps.sh
# shellcheck source=bench/ab_rounds.sh
. bench/ab_rounds.sh
configure() { # configure SRC BUILD [cmake options]
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DMGEN_GENERATE=OFF -DMGEN_NVCC_JOBS=8 "${@:3}"
}
lib_copy() { # lib_copy DIR: the tree's libmgen.so and its links into DIR
  rm -rf "$1" && mkdir -p "$1" && cp -P "$tree"/build/runtime/libmgen.so* "$1"/
}
step_build() {
  if [ ! -d "$tree" ]; then mkdir -p "$tree" && tar -xJf "$w/tree.tar.xz" -C "$tree" || return 1; fi
  { configure "$tree" "$tree/build" -DMGEN_LINEINFO=ON -DMGEN_NVCC_JOBS=$((16 / (1 + with_base))) &&
    cmake --build "$tree/build" -j $((16 / (1 + with_base))); } \
    >"$out/build-tree.log" 2>&1 &
  local t=$! b=0
  if [ "$with_base" = 1 ]; then
    { configure . "$base" && cmake --build "$base" -j 8; } >"$out/build-base.log" 2>&1
    b=$?
  fi
  wait "$t" || { echo "build: the tree failed"; tail -20 "$out/build-tree.log"; return 1; }
  [ "$b" = 0 ] || { echo "build: base failed"; tail -20 "$out/build-base.log"; return 1; }
  local moe=$tree/runtime/src/moe/moe_kernels.cu
  cp "$moe" "$dev/route-new.cu"
  lib_copy "$dev/lib-new"
  cp "$w/route-base.cu" "$moe" && cmake --build "$tree/build" --target mgen_runtime >>"$out/build-tree.log" 2>&1 &&
    lib_copy "$dev/lib-base"
  local r=$?
  cp "$dev/route-new.cu" "$moe" && cmake --build "$tree/build" --target mgen_runtime >>"$out/build-tree.log" 2>&1 ||
    r=1
  echo "build: rc=$r (libs: $(echo "$dev"/lib-*/libmgen.so))"
  return "$r"
}
step_tests() {
  local t
  for t in ${TESTS:-test_moe_gpu test_api_gpu test_w4a8_gpu test_gemm_gpu}; do
    run "$t" "$t.log" "$tree/build/tests/$t"
  done
  run python "python.log" ctest --test-dir "$tree/build" -R "python_moe|python_layer|python_marlin_gen" --output-on-failure
}
step_sanitize() {
  local cs=(compute-sanitizer --error-exitcode 1) t=$tree/build/tests
  MGEN_TEST_KERNELS='mgen_sm80_moe_f16_u4b8_g128_8x128x256_*,mgen_sm80_moe_f16_fe2m1_g16_8x64x128_*,mgen_sm80_moe_f16_u4b8_g128_48x64x128_*,mgen_sm90a_moe_f16_u4b8_g128_64x256x64_wg4_*' \
    run "memcheck moe" memcheck-moe.log timeout 300 "${cs[@]}" --tool memcheck "$t/test_moe_gpu" --quick
  MGEN_TEST_KERNELS='mgen_sm80_f16_u4b8_g128_8x128x128_*,mgen_sm90a_f16_u4b8_g128_16x128x128_wg2_s8,mgen_sm90a_f16_u4b8_g128_32x192x64_wg3_s12' \
    run "memcheck dense" memcheck-dense.log timeout 300 "${cs[@]}" --tool memcheck "$t/test_gemm_gpu" --quick
  run "racecheck routes" racecheck-routes.log timeout 300 "${cs[@]}" --tool racecheck "$t/test_moe_gpu" --routes
  run "synccheck routes" synccheck-routes.log timeout 200 "${cs[@]}" --tool synccheck "$t/test_moe_gpu" --routes
  MGEN_TEST_KERNELS='mgen_sm80_moe_f16_u4b8_g128_8x128x256_*' \
    run "racecheck moe" racecheck-moe.log timeout 300 "${cs[@]}" --tool racecheck "$t/test_moe_gpu" --quick
}
# moe_variant NAME LIBDIR [bench_moe options]: prints NAME=DEV/moe-NAME/bench_moe, the tree's
# bench_moe with LIBDIR's libmgen.so and these options, for ab_rounds to run as a variant (named
# bench_moe: ab_run takes its CSV from stdout).
moe_variant() {
  local name=$1 lib=$2 f=$dev/moe-$1/bench_moe
  shift 2
  mkdir -p "${f%/*}" || return 1
  # shellcheck disable=SC2016 # $@ is the wrapper's own
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s %s "$@"\n' \
    "$lib" "$tree/build/bench/bench_moe" "$*" >"$f" && chmod +x "$f" && echo "$name=$f"
}
step_ab() {
  local start
  start=$(date +%s)
  mkdir -p "$out/gemm" "$out/route" "$out/unsorted"
  if [ "$with_base" = 1 ]; then
    ab_rounds "$out/gemm" 2 "$start" "base=$base/bench/bench_gemm" "new=$tree/build/bench/bench_gemm" \
      -- --act f16 --fmt g128 --m 1,16,256 --graph 20 || status=1
  fi
  ab_rounds "$out/route" 3 "$start" "$(moe_variant base "$dev/lib-base")" "$(moe_variant new "$dev/lib-new")" \
    -- --parts route --m 1,4,16,64,256,1024 --skew-m 0 || status=1
  ab_rounds "$out/unsorted" 2 "$start" "$(moe_variant sorted "$dev/lib-new")" \
    "$(moe_variant unsorted "$dev/lib-new" --unsorted)" -- --m 1,2,3,4,5,6,8 --skew-m 0 || status=1
}
step_w4a8() {
  local k=${W4A8_KERNELS:-mgen_sm90a_bf16_*_64x128x128_wg2_s8} t=$tree/build/tests/test_w4a8_gpu tool
  MGEN_TEST_KERNELS=$k run "w4a8 kernels" w4a8.log "$t"
  for tool in memcheck racecheck synccheck; do
    MGEN_TEST_KERNELS=$k run "w4a8 $tool" "w4a8-$tool.log" timeout 300 \
      compute-sanitizer --error-exitcode 1 --tool "$tool" "$t" --quick
  done
  [ "$with_base" = 1 ] || { echo "w4a8: no A/B (BASE=0)"; return; }
  mkdir -p "$out/w4a8"
  ab_rounds "$out/w4a8" 2 "$(date +%s)" "base=$base/bench/bench_gemm" "new=$tree/build/bench/bench_gemm" \
    -- --act e4m3bf16 --fmt g128,u4_g128,mxfp4 --m 16,32,64,128 --graph 20 || status=1
  # the patch moves points to another kernel: the choice against the choice, per point
  awk -F, -v by=point -f bench/ab_compare.awk "$out/w4a8/ab.csv" | tee "$out/w4a8/summary.txt"
}
step_mutants() {
  if [ ! -d "$dev/mutants" ]; then tar -xJf "$w/mutants.tar.xz" -C "$dev" || return 1; fi
  (cd "$tree" && OUT=$out tests/gpu/run_mutants_device.sh "$dev/mutants") >"$out/mutants.log" 2>&1
  local rc=$?
  echo "mutants: rc=$rc"
  tail -25 "$out/mutants.log"
  return "$rc"
}
step_ctest() {
  run "ctest -L gpu" ctest-gpu.log ctest --test-dir "$tree/build" -L gpu -LE sanitize --output-on-failure
}
step_front() {
  # (not readme_figures and moe_readme: CPU tests of the committed CSVs, which the carried tree
  # leaves out, bench/tree_prepare.sh)
  run "front ctest" front-ctest.log ctest --test-dir "$tree/build" -R "readme|python_|examples|bench_layer" \
    -E "readme_figures|moe_readme" --output-on-failure
  run "layer_overhead" layer-overhead.log env MGEN_LIBRARY="$tree/build/runtime/libmgen.so" \
    python3 "$tree/bench/layer_overhead.py"
  cat "$out/layer-overhead.log"
}
[ $# -ge 1 ] || { sed -n '2,33p' "$0"; exit 2; }
for s in "$@"; do
  case $s in
  build | tests | sanitize | w4a8 | ab | mutants | ctest | front) "step_$s" || status=1 ;;
  *) echo "land-device: unknown step $s" >&2; exit 2 ;;
  esac
done
pack land-out
exit $status
