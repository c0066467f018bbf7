#!/usr/bin/env bash
# run_moe_device.sh -- bench_moe beside vLLM's Marlin MoE in one GPU-machine call (issue #49):
# builds (Release, sm_80 + sm_90; configured only when build/ is missing), builds the anchor
# harness from an ignored copy of ../shared/anchors in anchors/ (cp -r ../shared/anchors
# anchors; carry it) while the library builds, then times bench_moe (every scenario, M 1-4096,
# skewed routing at M = 1024) and the anchor's full run (same scenarios, M and skew, with its
# cuBLAS grouped and per-expert baselines) back to back, and sets them side by side
# (bench/moe_compare.py). ~3 min on an H200 after the build.
#
#   OUT=$OUT bench/run_moe_device.sh [bench_moe options]
#
# (--a-rule: A permuted into the route's order where the library's rule says it pays, as
# marlin_gen.torch.fused_moe runs it; without it, bench_moe gathers A's rows.)
#
# Writes $OUT/moe.csv (bench_moe), $OUT/anchor_moe.csv (the anchor's vllm_marlin_moe.csv),
# $OUT/anchor_moe_detail.csv (its detail: the active experts of its routes), $OUT/moe_compare.md
# and $OUT/moe_logs.tar.xz (build and run logs).
# Exits non-zero if a build or a run fails; the anchor's correctness-check failure (its exit 3)
# is reported and the comparison still written.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench}
build=${BUILD_DIR:-build}
mkdir -p "$out/moe_logs" || exit 1
logs=$(cd "$out/moe_logs" && pwd) # absolute: the anchor's script runs from its own folder
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv >"$logs/smi.txt" 2>&1 || true
[ -x anchors/vllm-marlin-moe/build_and_run_moe.sh ] ||
  { echo "run_moe_device: no anchors/vllm-marlin-moe (cp -r ../shared/anchors anchors; carry it)"; exit 1; }
if [ ! -d "$build" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="80;90" \
    -DMGEN_NVCC_JOBS="${MGEN_NVCC_JOBS:-12}" >"$logs/configure.log" 2>&1 ||
    { tail -30 "$logs/configure.log"; exit 1; }
fi
(cd anchors/vllm-marlin-moe && JOBS=4 OUT="$logs/anchor" ./build_and_run_moe.sh --build-only \
   >"$logs/anchor_build.log" 2>&1) &
anchor_build=$!
cmake --build "$build" --target bench_moe >"$logs/build.log" 2>&1 || { tail -40 "$logs/build.log"; exit 1; }
wait "$anchor_build" || { echo "run_moe_device: the anchor's build failed"; tail -20 "$logs/anchor_build.log"; exit 1; }
start=$(date +%s)
"$build/bench/bench_moe" --reps 30 --warmup 5 "$@" >"$out/moe.csv" 2>"$logs/bench_moe.err" ||
  { echo "run_moe_device: bench_moe failed"; tail -20 "$logs/bench_moe.err"; exit 1; }
echo "bench_moe: $(($(date +%s) - start)) s"
start=$(date +%s)
(cd anchors/vllm-marlin-moe && OUT="$logs/anchor" ./build_and_run_moe.sh --no-build \
   >"$logs/anchor_run.log" 2>&1)
rc=$?
echo "anchor: rc=$rc, $(($(date +%s) - start)) s"
[ "$rc" = 0 ] || [ "$rc" = 3 ] || { tail -20 "$logs/anchor_run.log"; exit 1; }
cp "$logs/anchor/vllm_marlin_moe.csv" "$out/anchor_moe.csv"
cp "$logs/anchor/vllm_marlin_moe_detail.csv" "$out/anchor_moe_detail.csv" # (its active experts)
python3 bench/moe_compare.py "$out/moe.csv" "$out/anchor_moe.csv" "$out/anchor_moe_detail.csv" \
  >"$out/moe_compare.md"
cat "$out/moe_compare.md"
tar cJf "$out/moe_logs.tar.xz" -C "$out" moe_logs && rm -rf "$logs"
exit $((rc == 3))
