#!/usr/bin/env bash
# w4a8-mxfp4-device.sh STEP... -- on the GPU machine, over this checkout (the W4A8 MXFP4 work,
# issue #52) and w4a8-mxfp4-prepare.sh's W/gen.tar.xz (W default .scratch/w4a8, carried). The
# build lives in DEV (default .scratch/w4a8-dev: ignored, not carried, so a warm machine keeps
# it between calls; start each call with `build`, a no-op there). Steps:
#   build     DEV/gen from the archive, DEV/build over it (MGEN_GENERATE=OFF, sm_90, -lineinfo)
#   tests     test_dequant_e4m3, test_w4a8_probe_gpu, test_w4a8_gpu, test_pack_gpu and
#             test_gemm_gpu (the fe2m1 mma-layout kernels: their packers changed too)
#   sanitize  memcheck of test_w4a8_gpu --quick and synccheck over the MXFP4 kernels; racecheck
#             of test_w4a8_gpu --race over them
#   bench     bench_gemm --act e4m3 --fmt mxfp4,g128 --all-kernels beside cuBLAS and cuBLASLt FP8
#             (CSV in OUT), then the same with --act f16 for W4A16 MXFP4 in the same run
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
mxfp4='mgen_sm90a_*fe2m1_g32_*x128_wg*,mgen_sm89_*fe2m1*'
# shellcheck source=bench/patches/device_steps.sh
. bench/patches/device_steps.sh
step_build() {
  [ -d "$dev/gen" ] || tar -xJf "$w/gen.tar.xz" -C "$dev" || return 1
  { cmake -S . -B "$dev/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DMGEN_GENERATE=OFF -DMGEN_PREGENERATED="$dev/gen" -DMGEN_LINEINFO=ON -DMGEN_NVCC_JOBS=16 &&
      cmake --build "$dev/build" --target test_dequant_e4m3 test_w4a8_probe_gpu test_w4a8_gpu \
        test_pack_gpu test_gemm_gpu bench_gemm; } >"$out/build.log" 2>&1
  local rc=$?
  echo "build: rc=$rc"
  [ "$rc" = 0 ] || tail -30 "$out/build.log"
  return "$rc"
}
step_tests() {
  local t
  for t in test_dequant_e4m3 test_w4a8_probe_gpu test_w4a8_gpu test_pack_gpu; do run "$t" "$t.log" "$bin/$t"; done
  MGEN_TEST_KERNELS='*fe2m1*' run test_gemm_gpu test_gemm_gpu.log "$bin/test_gemm_gpu" --quick
}
step_sanitize() {
  local cs=(compute-sanitizer --error-exitcode 1)
  MGEN_TEST_KERNELS=$mxfp4 run "memcheck" memcheck.log timeout 400 "${cs[@]}" --tool memcheck "$bin/test_w4a8_gpu" --quick
  MGEN_TEST_KERNELS=$mxfp4 run "racecheck" racecheck.log timeout 400 "${cs[@]}" --tool racecheck "$bin/test_w4a8_gpu" --race
  MGEN_TEST_KERNELS='mgen_sm90a_*fe2m1_g32_*x128_wg*' \
    run "synccheck" synccheck.log timeout 300 "${cs[@]}" --tool synccheck "$bin/test_w4a8_gpu" --quick
}
step_bench() {
  run "bench e4m3" bench-e4m3.log "$dev/build/bench/bench_gemm" --act e4m3 --fmt mxfp4,g128 --all-kernels \
    --m 1,16,64,256,1024,4096 --graph 10 --reps 15 --csv "$out/bench-e4m3.csv"
  run "bench f16" bench-f16.log "$dev/build/bench/bench_gemm" --act f16 --fmt mxfp4,g128 \
    --m 1,16,64,256,1024,4096 --graph 10 --reps 15 --csv "$out/bench-f16.csv"
}
[ $# -ge 1 ] || { sed -n '2,15p' "$0"; exit 2; }
for s in "$@"; do
  case $s in
  build | tests | sanitize | bench) "step_$s" || status=1 ;;
  *) echo "w4a8-mxfp4-device: unknown step $s" >&2; exit 2 ;;
  esac
done
pack w4a8-out
exit $status
