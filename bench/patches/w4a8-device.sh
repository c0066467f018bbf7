#!/usr/bin/env bash
# w4a8-device.sh STEP... -- on the GPU machine, over this checkout (W4A8 of u4, issue #52: zero
# points subtracted in the E4M3 bytes) and w4a8-prepare.sh's W/gen.tar.xz (W default
# .scratch/w4a8, carried). The build lives in DEV (default .scratch/w4a8-dev: ignored, not
# carried, so a warm machine keeps it between calls; start each call with `build`, a no-op
# there). Steps:
#   build     DEV/gen from the archive, DEV/build over it (MGEN_GENERATE=OFF, sm_90, -lineinfo)
#   tests     test_dequant_e4m3, test_w4a8_gpu (u4 next to u4b8 and MXFP4), test_pack_gpu and
#             test_import_u4_gpu (u4 quantized, packed and imported into the e4m3 layout)
#   sanitize  memcheck of test_w4a8_gpu --quick and synccheck over the u4 W4A8 kernels (synccheck:
#             the wgmma ones); racecheck of test_w4a8_gpu --race over them
#   bench     bench_gemm --act e4m3 --fmt g128,u4_g128,gc,u4_gc --all-kernels beside cuBLAS and
#             cuBLASLt FP8 (CSV in OUT): u4 against u4b8, tile by tile, in the same run
# Logs in OUT (default w4a8-out), packed into OUT/w4a8-out.tar.xz at the end (the device tool
# brings back at most 8 files). Exits non-zero if a step failed.
# shellcheck disable=SC2317 # the steps are called through "step_$s"
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
w=$(realpath "${W:-.scratch/w4a8}")
out=$(mkdir -p "${OUT:-w4a8-out}" && realpath "${OUT:-w4a8-out}")
dev=$(mkdir -p "${DEV:-.scratch/w4a8-dev}" && realpath "${DEV:-.scratch/w4a8-dev}")
export PATH=/usr/local/cuda/bin:$PATH
bin=$dev/build/tests status=0
u4='mgen_sm90a_*_u4_*x128_wg*,mgen_sm89_*_u4_*'
# shellcheck source=bench/patches/device_steps.sh
. bench/patches/device_steps.sh
step_build() {
  [ -d "$dev/gen" ] || tar -xJf "$w/gen.tar.xz" -C "$dev" || return 1
  { cmake -S . -B "$dev/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DMGEN_GENERATE=OFF -DMGEN_PREGENERATED="$dev/gen" -DMGEN_LINEINFO=ON -DMGEN_NVCC_JOBS=16 &&
      cmake --build "$dev/build" --target test_dequant_e4m3 test_w4a8_gpu test_pack_gpu \
        test_import_u4_gpu bench_gemm; } >"$out/build.log" 2>&1
  local rc=$?
  echo "build: rc=$rc"
  [ "$rc" = 0 ] || tail -30 "$out/build.log"
  return "$rc"
}
step_tests() {
  local t
  for t in test_dequant_e4m3 test_w4a8_gpu test_pack_gpu test_import_u4_gpu; do run "$t" "$t.log" "$bin/$t"; done
}
step_sanitize() {
  local cs=(compute-sanitizer --error-exitcode 1)
  MGEN_TEST_KERNELS=$u4 run "memcheck" memcheck.log timeout 400 "${cs[@]}" --tool memcheck "$bin/test_w4a8_gpu" --quick
  MGEN_TEST_KERNELS=$u4 run "racecheck" racecheck.log timeout 400 "${cs[@]}" --tool racecheck "$bin/test_w4a8_gpu" --race
  MGEN_TEST_KERNELS='mgen_sm90a_*_u4_*x128_wg*' \
    run "synccheck" synccheck.log timeout 300 "${cs[@]}" --tool synccheck "$bin/test_w4a8_gpu" --quick
}
step_bench() {
  run "bench e4m3" bench-e4m3.log "$dev/build/bench/bench_gemm" --act e4m3 --fmt g128,u4_g128,gc,u4_gc \
    --all-kernels --m 1,16,64,256,1024,4096 --graph 10 --reps 15 --csv "$out/bench-e4m3.csv"
}
[ $# -ge 1 ] || { sed -n '2,16p' "$0"; exit 2; }
for s in "$@"; do
  case $s in
  build | tests | sanitize | bench) "step_$s" || status=1 ;;
  *) echo "w4a8-device: unknown step $s" >&2; exit 2 ;;
  esac
done
pack w4a8-out
exit $status
