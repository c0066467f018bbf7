#!/usr/bin/env bash
# run_e2e_device.sh -- a version's end-to-end figures in one GPU-machine call: bench_gemm over
# the benchmark formats and M (bench/run_device.sh), then, where an ignored copy of the anchor
# harness sits in anchors/ (cp -r ../shared/anchors anchors; carry it), vLLM's and IST's
# Marlin and CUTLASS's Hopper mixed-input GEMM (anchors/cutlass, its prebuilt binary) over the
# same shapes and M in the same call, so that the notes compare one card's clocks. Takes ~5
# min on an H200 after the build (~45 s); stay inside one 10-minute call.
#
#   OUT=$OUT bench/run_e2e_device.sh [--ms 1,2,...] [bench_gemm options]
#
# Defaults: --act all --fmt gc,g128,nvfp4,mxfp4 --graph 20 (gc: #11's per-channel target at
# M >= 512), M 1,2,4,8,16,32,64,128,256,512,1024,2048,4096 (--ms replaces the list for both).
# Then the same rows of M <= 256 cold (`--cold 16`: after 16 other kernels of the key, as in an
# engine; bench/notes/v32.md; COLD=0 skips it, COLD=N another count). Writes $OUT/bench.csv,
# bench.log, bench-cold.csv, bench-cold.log and, with the anchors, $OUT/anchors.log,
# cutlass.log and anchors.tar.xz (their folder of CSVs and logs: all.csv holds vLLM's and IST's
# rows, cutlass/cutlass_mixed.csv CUTLASS's). Exits
# non-zero if a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
ms=1,2,4,8,16,32,64,128,256,512,1024,2048,4096
if [ "${1:-}" = --ms ]; then
  ms=${2:?--ms needs a list}
  shift 2
fi
out=${OUT:-bench}
fmts=gc,g128,nvfp4,mxfp4
OUT=$out MGEN_NVCC_JOBS=${MGEN_NVCC_JOBS:-$(nproc)} bench/run_device.sh --act all \
  --fmt "$fmts" --m "$ms" --graph 20 "$@" | tail -40
cold=${COLD:-16}
cold_ms=$(tr , '\n' <<<"$ms" | awk '$1 <= 256' | paste -sd, -)
if [ "$cold" != 0 ] && [ -n "$cold_ms" ]; then
  # bench_gemm was built by run_device.sh above; the same rows again, each after $cold others
  "${BUILD_DIR:-build}/bench/bench_gemm" --act all --fmt "$fmts" --m "$cold_ms" --cold "$cold" \
    --csv "$out/bench-cold.csv" "$@" >"$out/bench-cold.log" 2>&1 ||
    { echo "run_e2e_device: the cold pass failed ($out/bench-cold.log)"; tail -20 "$out/bench-cold.log"; exit 1; }
  sed -n '/geometric-mean/,/^$/p' "$out/bench-cold.log"
fi
if [ -x anchors/build_and_run.sh ]; then
  OUT=$out/anchors anchors/build_and_run.sh -- --ms "$ms" >"$out/anchors.log" 2>&1 ||
    { echo "run_e2e_device: the anchors failed ($out/anchors.log)"; tail -20 "$out/anchors.log"; exit 1; }
  tail -30 "$out/anchors.log"
  # CUTLASS's Hopper mixed-input GEMM (prebuilt sm_90a binary; issue #51), u4b8 g128 FP16 and
  # BF16 over the same M, beside its own cuBLAS: ~1 min on an H200 (its README)
  if [ -x anchors/cutlass/build_and_run.sh ]; then
    OUT=$out/anchors/cutlass anchors/cutlass/build_and_run.sh --no-build -- --ms "$ms" \
      >"$out/cutlass.log" 2>&1 ||
      { echo "run_e2e_device: the CUTLASS anchor failed ($out/cutlass.log)"; tail -20 "$out/cutlass.log"; exit 1; }
    grep SUMMARY "$out/cutlass.log" | tail -12 || true
  else
    echo "run_e2e_device: no anchors/cutlass/: vLLM's and IST's Marlin only"
  fi
  # their CSVs and logs as one archive: the GPU machine's tool brings back at most 8 files
  tar cJf "$out/anchors.tar.xz" -C "$out" anchors && rm -rf "$out/anchors"
else
  echo "run_e2e_device: no anchors/ (cp -r ../shared/anchors anchors, and carry it): ours only"
fi
