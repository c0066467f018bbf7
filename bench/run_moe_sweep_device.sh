#!/usr/bin/env bash
# run_moe_sweep_device.sh -- the moe op's configuration sweep on the GPU machine (issue #49):
# bench_moe --kernels over every kernel of a generated folder, per scenario, for the cover
# bench/moe_cover.py picks.
#
#   here (Lua):    bench/run_moe_sweep_device.sh --prepare DIR [GLOBS]
#   on the device: OUT=$OUT bench/run_moe_sweep_device.sh DIR [SCENARIO:M-LIST ...]   (carry DIR)
#
# --prepare writes the candidates with marlin-gen --space full (the GPU machine has no Lua):
# GLOBS (comma-separated; default below: of the keys the scenarios run (MOE_SWEEP_KEYS, globs;
# default the three), every mma tile at the stage count nearest 4 plus the deep pipelines of
# the 8- and 16-row tiles, and every wgmma tile of 64 rows or more at the stage count nearest
# 8, ~270 + ~30 kernels for the three).
# The device run builds libmgen and bench_moe from DIR for the GPU's architecture only
# (MGEN_GENERATE=OFF, build folder ${BUILD_DIR:-build-moe-sweep}), then one bench_moe per
# scenario (default: every scenario at M 1,16,64,256,1024,4096, no skew), each under
# `timeout` (MOE_SWEEP_LIMIT seconds, default 150), rows to $OUT/moe-sweep-SCENARIO.csv as
# they come (a cut run keeps its rows). Build and run log: $OUT/moe-sweep.log.
# The keys no default scenario runs: MOE_SWEEP_KEYS='*_moe_bf16_u4b8_g128_*,*_moe_f16_fe2m1_g32_*,
# *_moe_bf16_fe2m1_g16_*' for --prepare, then the scenarios deepseek-bf16, gptoss-f16 and
# deepseek-nvfp4-bf16 named on the device (bench_moe runs them only when named).
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--prepare" ]; then
  dir=${2:?usage: run_moe_sweep_device.sh --prepare DIR [GLOBS]}
  gen=${MARLIN_GEN:-build/gen/marlin-gen}
  [ -x "$gen" ] || { echo "run_moe_sweep_device: no marlin-gen at $gen (set MARLIN_GEN)"; exit 2; }
  keys=${MOE_SWEEP_KEYS:-'*_moe_f16_u4b8_g128_*,*_moe_bf16_fe2m1_g32_*,*_moe_f16_fe2m1_g16_*'}
  globs=${3:-}
  if [ -z "$globs" ]; then # stage 4 (3 where 4 does not fit), and 6 / 8 for 8- and 16-row tiles
    all=$("$gen" --space full --kernels "$keys" --list) || exit 1
    globs=$(printf '%s\n' "$all" | awk '
      /_wg[0-9]+_s[0-9]+$/ { # wgmma: tiles of 64 rows and more (an expert with fewer rows is
        # for the mma tiles), the stage count nearest 8 per tile and warpgroup count
        match($0, /_[0-9]+x[0-9]+x[0-9]+_wg[0-9]+_s[0-9]+$/); split(substr($0, RSTART + 1), f, "_")
        split(f[1], dims, "x"); if (dims[1] + 0 < 64) next
        s = substr(f[3], 2) + 0; key = $0; sub(/_[0-9]+x[0-9]+x[0-9]+_wg.*/, "", key)
        id = key "_" f[1] "_" f[2]; dd = (s >= 8) ? s - 8 : 8 - s + 0.5
        if (!(id in best) || dd < bestd[id]) { best[id] = $0; bestd[id] = dd }
        next }
      { match($0, /_[0-9]+x[0-9]+x[0-9]+_s[0-9]+_w[0-9]+_/); t = substr($0, RSTART, RLENGTH)
        split(t, f, "_"); tile = f[2]; s = substr(f[3], 2) + 0; w = f[4]
        key = $0; sub(/_[0-9]+x[0-9]+x[0-9]+_s.*/, "", key); id = key "_" tile "_" w
        d = (s >= 4) ? s - 4 : 4 - s + 0.5
        if (!(id in best) || d < bestd[id]) { best[id] = $0; bestd[id] = d }
        if (tile ~ /^(8|16)x/ && (s == 6 || s == 8)) deep[$0] = 1 }
      END { for (i in best) print best[i]; for (n in deep) print n }' | sort -u | paste -sd,)
  fi
  rm -rf "$dir"
  "$gen" --space full --kernels "$globs" --shards 64 --out "$dir" || exit 1
  echo "run_moe_sweep_device: $(grep -c _moe_ "$dir/manifest.tsv") moe kernels in $dir"
  exit 0
fi

dir=${1:?usage: run_moe_sweep_device.sh DIR [SCENARIO:M-LIST ...]}
shift
out=${OUT:-bench}
build=${BUILD_DIR:-build-moe-sweep}
log=$out/moe-sweep.log
mkdir -p "$out" || exit 1
export PATH=/usr/local/cuda/bin:$PATH
[ -f "$dir/manifest.tsv" ] || { echo "run_moe_sweep_device: no $dir/manifest.tsv (--prepare it; carry it)"; exit 2; }
caps=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader) || exit 1
arch=$(printf '%s\n' "$caps" | sed -n '1{s/[ .]//g;p}')
start=$(date +%s)
{ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
    -DMGEN_GENERATE=OFF -DMGEN_PREGENERATED="$(cd "$dir" && pwd)" \
    -DMGEN_NVCC_JOBS="${MGEN_NVCC_JOBS:-$(nproc)}" &&
  cmake --build "$build" --target bench_moe; } >"$log" 2>&1 ||
  { tail -30 "$log"; exit 1; }
echo "build: $(($(date +%s) - start)) s, $(grep -c _moe_ "$dir/manifest.tsv") moe kernels, sm_$arch" | tee -a "$log"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv >>"$log" 2>&1 || true
[ $# -gt 0 ] || set -- deepseek:1,16,64,256,1024,4096 mixtral:1,16,64,256,1024,4096 \
  qwen3:1,16,64,256,1024,4096 gptoss:1,16,64,256,1024,4096 deepseek-nvfp4:1,16,64,256,1024,4096
status=0
for point in "$@"; do
  scenario=${point%%:*} ms=${point#*:}
  start=$(date +%s)
  timeout "${MOE_SWEEP_LIMIT:-150}" "$build/bench/bench_moe" --scenario "$scenario" --m "$ms" \
    --skew-m 0 --reps 5 --warmup 1 --kernels 'mgen_*' >"$out/moe-sweep-$scenario.csv" 2>>"$log"
  rc=$?
  echo "$scenario: rc=$rc, $(($(wc -l <"$out/moe-sweep-$scenario.csv") - 1)) rows, $(($(date +%s) - start)) s" | tee -a "$log"
  [ "$rc" = 0 ] || status=1
done
exit $status
