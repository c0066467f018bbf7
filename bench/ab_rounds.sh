# shellcheck shell=bash
# ab_rounds.sh -- sourced by bench/run_ab_device.sh, bench/run_tree_ab_device.sh and
# bench/run_patch_device.sh: what every A/B on the GPU machine does to build and time its variants.
#
#   ab_arch                       the first GPU's compute capability for CMAKE_CUDA_ARCHITECTURES
#   ab_bench                      the A/B's program (BENCH, checked)
#   ab_variants WHO VARIANTS      checks "NAME:DIR ..." (each DIR a marlin-gen output)
#   ab_configure NAME DIR ARCH    configures build-ab-NAME over marlin-gen output DIR (absolute)
#       for ARCH, stdout and stderr to the caller's; one configuration, so that a script that
#       builds tests there first and then the A/B (run_patch_device.sh) compiles the kernels once
#   ab_rounds OUT ROUNDS START NAME=BENCH... -- [options]
#       runs each variant's bench_gemm (or bench_moe: ab_run) ROUNDS times (even rounds in
#       reverse order), collecting OUT/ab.csv (variant, round, then the program's columns) and
#       one log per run; START (date +%s) dates the progress lines. ab_pack_logs OUT packs
#       OUT/ab-*.log into OUT/ab-logs.tar.xz.

ab_arch() {
  local caps
  caps=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader) # all lines, then the first
  printf '%s\n' "$caps" | sed -n '1{s/[ .]//g;p}'
}

ab_configure() {
  cmake -S . -B "build-ab-$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$3" \
    -DMGEN_GENERATE=OFF -DMGEN_PREGENERATED="$2" -DMGEN_NVCC_JOBS="${MGEN_NVCC_JOBS:-$(nproc)}"
}

# ab_bench: the A/B's program, BENCH's (default bench_gemm) if it is one ab_run knows; else a
# message and status 2.
ab_bench() {
  case ${BENCH:-bench_gemm} in
  bench_gemm | bench_moe) echo "${BENCH:-bench_gemm}" ;;
  *) echo "BENCH is bench_gemm or bench_moe, not '$BENCH'" >&2; return 2 ;;
  esac
}

# ab_variants WHO "NAME:DIR ...": status 0 if every entry names a marlin-gen output DIR (its
# manifest.tsv; relative to the repository), else a message for the first that does not
# (prefixed WHO) and status 2: checked before anything builds.
ab_variants() {
  local vd
  for vd in $2; do
    [ "${vd%%:*}" != "$vd" ] && [ -f "${vd#*:}/manifest.tsv" ] ||
      { echo "$1: '$vd' is not NAME:DIR of a marlin-gen output" >&2; return 2; }
  done
}

# ab_run BIN CSV LOG [options]: one run of a variant's program, its CSV into CSV. bench_gemm
# writes it where --csv says and its report on stdout; bench_moe (a BIN named so) writes its CSV
# on stdout.
ab_run() {
  local bin=$1 csv=$2 log=$3
  shift 3
  case ${bin##*/} in
  bench_moe) "$bin" "$@" >"$csv" 2>"$log" ;;
  *) "$bin" --csv "$csv" "$@" >"$log" 2>&1 ;;
  esac
}

ab_rounds() {
  local out=$1 rounds=$2 start=$3 runs=() order reversed round vb name bin
  shift 3
  while [ "$1" != -- ]; do runs+=("$1"); shift; done
  shift
  : >"$out/ab.csv"
  # Even rounds run the variants in reverse order: an A/B of two identical trees (bench/notes/v25.md
  # item 1) read the variant timed second in a round ~0.5% slower, so a fixed order would bias
  # every A/B.
  reversed=$(printf '%s\n' "${runs[@]}" | tac | tr '\n' ' ')
  for round in $(seq 1 "$rounds"); do
    order="${runs[*]}"
    [ $((round % 2)) = 1 ] || order=$reversed
    for vb in $order; do
      name=${vb%%=*} bin=${vb#*=}
      # AB_ABLATION=1: variants that compute wrong values on purpose (an ablation bounds what a
      # part of the kernel costs, timing only) fail bench_gemm's sanity check (exit 1); their
      # rows still count. Any other failure stops the A/B.
      ab_run "$bin" "$out/ab-$name-$round.csv" "$out/ab-$name-$round.log" "$@" || {
        local rc=$?
        if [ "${AB_ABLATION:-0}" = 1 ] && [ "$rc" = 1 ] && [ -s "$out/ab-$name-$round.csv" ] &&
          grep -q 'failed the sanity check' "$out/ab-$name-$round.log"; then
          echo "  $name: sanity check failed as an ablation may (AB_ABLATION=1)"
        else
          tail -5 "$out/ab-$name-$round.log"
          return 1
        fi
      }
      # variant,round, then bench_gemm's header once and its rows
      if [ ! -s "$out/ab.csv" ]; then sed -n '1s/^/variant,round,/p' "$out/ab-$name-$round.csv" >"$out/ab.csv"; fi
      sed "1d;s/^/$name,$round,/" "$out/ab-$name-$round.csv" >>"$out/ab.csv"
      rm -f "$out/ab-$name-$round.csv"
      echo "round $round $name: $(($(date +%s) - start)) s"
    done
  done
}

# The GPU machine's tool brings back at most 8 files from $OUT: the logs go into one archive.
ab_pack_logs() {
  (cd "$1" && tar cJf ab-logs.tar.xz --remove-files -- ab-*.log) || true
}
