#!/usr/bin/env bash
# run_anchor_rounds_device.sh -- #51's comparison with CUTLASS's Hopper mixed-input GEMM in
# rounds, in one GPU-machine call: ROUNDS times (default 3) CUTLASS's harness (anchors/cutlass,
# its prebuilt binary; cp -r ../shared/anchors anchors and carry it) and bench_gemm over the
# same points, one after the other, the first of the pair alternating; then
# bench/anchor_rounds.py's per-point medians. Long compute-bound launches on an H100 run at the
# clock the power cap leaves, so one pass of each can move a point 10-15% (bench/notes/v69.md).
#
#   OUT=$OUT bench/run_anchor_rounds_device.sh [--act f16,bf16] [--shapes K:N,...] [--ms M,...]
#                                              [--bar X]
#
# Defaults: --act f16, the anchors' 8 shapes, --ms 512,1024,2048,4096. --shapes takes the
# anchors' K:N (bench_gemm gets them as its NxK). --bar goes to anchor_rounds.py (exit 1 below
# it). Builds bench_gemm where BUILD_DIR (default build) lacks it. Writes $OUT/rounds/
# (mgen-roundI.csv, cutlass-roundI/ and logs) and prints anchor_rounds.py's table. CUTLASS_RUN
# names another runner of the anchor's command line (tests/scripts/anchor_rounds_check.sh's
# stand-in; default anchors/cutlass/build_and_run.sh).
# Exits 2 on a usage error (before anything runs), 1 if a step fails or the bar is missed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
acts=f16 shapes="" ms=512,1024,2048,4096 bar=()
usage() { echo "usage: run_anchor_rounds_device.sh [--act f16,bf16] [--shapes K:N,...] [--ms M,...] [--bar X]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || usage
  case $1 in
  --act) acts=$2 ;;
  --shapes) shapes=$2 ;;
  --ms) ms=$2 ;;
  --bar) bar=(--bar "$2") ;;
  *) usage ;;
  esac
  shift 2
done
[[ $acts =~ ^(f16|bf16)(,(f16|bf16))?$ ]] || { echo "run_anchor_rounds_device: --act $acts: f16, bf16 or both" >&2; exit 2; }
[[ $ms =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "run_anchor_rounds_device: --ms $ms: a list of integers" >&2; exit 2; }
[[ -z $shapes || $shapes =~ ^[0-9]+:[0-9]+(,[0-9]+:[0-9]+)*$ ]] ||
  { echo "run_anchor_rounds_device: --shapes $shapes: K:N,... as the anchors take them" >&2; exit 2; }
rounds=${ROUNDS:-3}
[ ${#bar[@]} = 0 ] || [[ ${bar[1]} =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
  { echo "run_anchor_rounds_device: --bar ${bar[1]}: a positive number" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]?$ ]] || { echo "run_anchor_rounds_device: ROUNDS=$rounds: 1 to 99" >&2; exit 2; }
anchor=${CUTLASS_RUN:-anchors/cutlass/build_and_run.sh}
[ -x "$anchor" ] || { echo "run_anchor_rounds_device: no $anchor (cp -r ../shared/anchors anchors; carry it)" >&2; exit 2; }
out=${OUT:-bench}/rounds
build=${BUILD_DIR:-build}
mkdir -p "$out" || exit 1
export PATH=/usr/local/cuda/bin:$PATH

# The anchors spell FP16 fp16 and shapes K:N; bench_gemm f16 and NxK.
cut_acts=$(tr , '\n' <<<"$acts" | sed 's/^f16$/fp16/' | paste -sd, -)
shape_args=() gemm_shapes=()
if [ -n "$shapes" ]; then
  IFS=, read -r -a kn <<<"$shapes"
  nk=()
  for s in "${kn[@]}"; do nk+=("${s#*:}x${s%:*}"); done
  shape_args=(--shapes "$shapes")
  gemm_shapes=(--shapes "$(IFS=,; echo "${nk[*]}")")
fi

if [ ! -x "$build/bench/bench_gemm" ]; then
  BUILD_DIR=$build bench/run_device.sh --build-only >"$out/build.log" 2>&1 ||
    { echo "run_anchor_rounds_device: the build failed ($out/build.log)"; tail -20 "$out/build.log"; exit 1; }
fi
run_anchor() {
  OUT=$out/cutlass-round$1 "$anchor" --no-build -- --acts "$cut_acts" "${shape_args[@]}" --ms "$ms" \
    --no-check >"$out/cutlass-round$1.log" 2>&1 ||
    { echo "run_anchor_rounds_device: round $1: CUTLASS's harness failed ($out/cutlass-round$1.log)"; return 1; }
}
run_mgen() {
  "$build/bench/bench_gemm" --act "$acts" --fmt g128 "${gemm_shapes[@]}" --m "$ms" \
    --csv "$out/mgen-round$1.csv" >"$out/mgen-round$1.log" 2>&1 ||
    { echo "run_anchor_rounds_device: round $1: bench_gemm failed ($out/mgen-round$1.log)"; return 1; }
}
mcsv=() acsv=()
for ((r = 1; r <= rounds; r++)); do
  start=$SECONDS
  if ((r % 2)); then run_anchor "$r" && run_mgen "$r"; else run_mgen "$r" && run_anchor "$r"; fi || exit 1
  echo "round $r: $((SECONDS - start)) s"
  mcsv+=("$out/mgen-round$r.csv") acsv+=("$out/cutlass-round$r/cutlass_mixed.csv")
done
python3 bench/anchor_rounds.py --mgen "$(IFS=,; echo "${mcsv[*]}")" --anchor "$(IFS=,; echo "${acsv[*]}")" \
  --ms "$ms" "${bar[@]}"
