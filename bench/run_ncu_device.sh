#!/usr/bin/env bash
# run_ncu_device.sh -- Nsight Compute on one kernel of the table at one problem, on the GPU
# machine: what METHOD.md asks for when a prediction misses. Builds bench_gemm when needed
# (bench/run_device.sh --build-only), runs it on the kernel's key, the one shape and M with
# --all-kernels, and profiles the kernel's 6th launch (after bench_gemm's probe and warm-up) at
# base clocks.
#
#   OUT=$OUT bench/run_ncu_device.sh KERNEL M NxK [ncu options]     (default: --set full)
#   e.g. ... mgen_sm80_f16_u4b8_g128_16x64x256_s3_w4_sw3x4x5 16 12288x4096
#
# Writes $OUT/ncu-KERNEL-mM.ncu-rep and its details page as text beside it (ncu --import
# --page details). Environment: OUT (default bench), BUILD_DIR (default build), NCU (default:
# the ncu on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
kernel=${1:?usage: run_ncu_device.sh KERNEL M NxK [ncu options]}
m=${2:?M} shape=${3:?NxK}
shift 3
[ $# -gt 0 ] || set -- --set full
# The key from the kernel's name: act, weight format and group (fe2m1: g16 NVFP4, g32 MXFP4).
[[ $kernel =~ ^mgen_sm[0-9a-z]+_(f16|bf16)_(u4b8|fe2m1)_g([0-9]+|c)_ ]] ||
  { echo "run_ncu_device: '$kernel' is not a kernel name of the table" >&2; exit 2; }
act=${BASH_REMATCH[1]} wfmt=${BASH_REMATCH[2]} group=${BASH_REMATCH[3]}
case $wfmt$group in
  fe2m116) fmt=nvfp4 ;;
  fe2m132) fmt=mxfp4 ;;
  u4b8*) fmt=g$group ;;
  *) echo "run_ncu_device: no bench format for $wfmt g$group" >&2; exit 2 ;;
esac
out=${OUT:-bench} build=${BUILD_DIR:-build}
mkdir -p "$out"
# source lines in the report: MGEN_LINEINFO (a build without it is reconfigured, the kernels
# compile again once)
if [ -d "$build" ]; then
  cmake -S . -B "$build" -DMGEN_LINEINFO=ON >/dev/null
else
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="80;90" \
    -DMGEN_NVCC_JOBS="${MGEN_NVCC_JOBS:-8}" -DMGEN_LINEINFO=ON >/dev/null
fi
OUT=$out bench/run_device.sh --build-only >/dev/null
rep=$out/ncu-$kernel-m$m
"${NCU:-ncu}" -k "regex:${kernel}_kernel" --launch-skip 5 --launch-count 1 --clock-control base "$@" \
  -f -o "$rep" "$build/bench/bench_gemm" --act "$act" --fmt "$fmt" --shapes "$shape" --m "$m" \
  --all-kernels --reps 3 --warmup 2 >"$rep.log" 2>&1 || { tail -20 "$rep.log"; exit 1; }
"${NCU:-ncu}" --import "$rep.ncu-rep" --page details >"$rep.txt"
grep -m 12 -E "Duration|Executed Instructions|Issue Slots Busy|Memory Throughput|Registers Per" "$rep.txt"
