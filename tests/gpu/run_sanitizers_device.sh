#!/usr/bin/env bash
# run_sanitizers_device.sh -- compute-sanitizer's four tools (memcheck, synccheck, initcheck,
# racecheck) over every kernel of the default table and over the packing, quantize and import
# kernels, on the GPU machine; one summary line per tool x group in ${OUT:-verify}/sanitizers.txt
# (kernels tested, errors, exit status, seconds) and one log per step beside it, packed into
# sanitizer-logs.tar.xz at the end (the GPU machine's tool brings back at most 8 files).
#
#   tests/gpu/run_sanitizers_device.sh [-j N] [GROUP...]  (default: every group, in the order below)
#   tests/gpu/run_sanitizers_device.sh --list              (each group's name and globs, one a line)
#   tests/gpu/run_sanitizers_device.sh --kernels GROUP[:I/N] (what that group or part would test:
#                                      its globs or its kernels, comma-separated; runs nothing)
#
# -j N runs up to N (group, tool) pairs at once after the build, each a process of its own (with
# several GPUs visible, pair i on GPU i mod count; with one, they share it). The tools spend most
# of their time on the host and in launch overhead of small quick-shape launches, so the GPU is
# mostly idle under one of them: `-j 12` put every group into one 10-minute call up to
# 2026-11-28; with the u4 and moe groups (19) it takes two or three calls of a few groups each
# (the summary's rows stay in group and tool order; each row's seconds are its own, the last
# line gives the run's).
#
# Groups: the GEMM kernels by family and weight format (test_gemm_gpu --quick with
# MGEN_TEST_KERNELS = the group's globs; tests/scripts/sanitizer_groups.sh checks that every
# kernel of generated/manifest.tsv is in exactly one group and that a group holds one family),
# and `prepare`: test_pack_gpu --quick, test_import_gpu --quick, test_import_u4_gpu --quick and
# test_quantize_act_gpu --quick (mgen_pack, mgen_pack_fp4, mgen_quantize, the importers'
# kernels, mgen_quantize_act).
#
# racecheck runs test_gemm_gpu --race (one shape, M = 7 and 100, on a context of 3 SMs so that
# the wgmma blocks reach their ring passes and the mma tiles still split columns): on the
# quick set it costs 20-40 s per wgmma kernel on an H200; racecheck checks shared memory inside
# a block, which those cases exercise; a moe group test_moe_gpu --race (one case, A gathered and
# sorted, half of it over 2 SMs; with the quick cases two wgmma moe kernels passed the 240 s step
# limit unfinished, 2026-12-05). The other tools run --quick.
# Time: the default table has ~190 kernels; one group after another they do not fit one
# 10-minute device call with the build (~40 s). With -j 12 they do (H200, 2026-11-25: the 24
# pairs over 193 kernels in 189 s after the build; the longest, initcheck and racecheck of the
# mma fe2m1 group, ~155 s; 2026-11-27, 280 kernels: racecheck of that group, 58 kernels, passed
# 290 s unfinished, so it is two groups now, one per activation type; 2026-11-28, 124 wgmma
# kernels from the sweep of the family's whole space: its groups split by format too, as the
# mma ones). Without -j, split the
# groups over calls (the build is kept between calls on a warm machine; a fresh one builds again).
# Every step runs under `timeout` (MGEN_SANITIZER_STEP_LIMIT, default 360 s), and no step
# starts past the run's budget (MGEN_SANITIZER_BUDGET, default 560 s from the start): a step
# left out is written as "no-time" in the summary, so a hang or a slow tool costs a call only
# its own rows.
#
# Environment: OUT (default verify), BUILD_DIR (default build; configured when missing, with
# sm_80 + sm_90), COMPUTE_SANITIZER (default: the one on PATH, else the toolkit's),
# MGEN_SANITIZER_PARTS (default 1): each GEMM group's kernels (its globs matched against
# generated/manifest.tsv) dealt round-robin into that many parts, each part a (group, tool)
# pair of its own, its rows named GROUP:I/N -- racecheck of a 40-kernel wgmma group alone
# takes ~7 minutes, so with -j the parts are what spreads it over the CPU's cores;
# MGEN_SANITIZER_ONLY (globs, comma-separated): of each group only the kernels that also match
# one of these (the kernels a template change touched; a group left empty runs nothing);
# MGEN_SANITIZER_TOOLS (comma-separated, default all four): only these tools (e.g. racecheck,
# to finish a run whose other tools passed).
# Exits 0 when every step ran and was clean, 2 on a usage error, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

# ---------------------------------------------------------------- the groups (from the manifest)
# One GEMM group per (family, op, act, wfmt) of the committed table (generated/manifest.tsv),
# named FAMILY-ACT-WFMT for dense and FAMILY-OP-ACT-WFMT for another op (family-first: the
# partition test checks the family against the manifest's column), its globs the kernel names
# up to the format (mgen_<arch token>[_<op>]_<act>_<wfmt>_*), in the order families, then ops,
# formats and types, first appear; then the packing programs' group, prepare. A new family,
# op or format gets its groups from the table it adds kernels to. A dense group runs
# test_gemm_gpu, a moe group test_moe_gpu.
group_order=()
declare -A group_globs=()
while IFS=$'\t' read -r g globs; do
  group_order+=("$g")
  group_globs[$g]=$globs
done < <(awk -F'\t' '
  /^#/ { next }
  $1 == "name" { for (i = 1; i <= NF; i++) col[$i] = i; next }
  NF > 1 {
    f = $col["family"]; a = $col["act"]; w = $col["wfmt"]; o = $col["op"]
    if (!(f in fseen)) { fseen[f] = 1; fam[++nf] = f }
    if (!(o in oseen)) { oseen[o] = 1; ops[++no] = o }
    if (!(w in wseen)) { wseen[w] = 1; wf[++nw] = w }
    if (!(a in aseen)) { aseen[a] = 1; act[++na] = a }
    split($col["name"], part, "_")
    opf = o == "dense" ? "" : o "-"; opn = o == "dense" ? "" : o "_"
    glob = part[1] "_" part[2] "_" opn a "_" w "_*"; key = f "-" opf a "-" w
    if (!((key, glob) in gseen)) {
      gseen[key, glob] = 1
      sep = (key in globs) ? "," : ""
      globs[key] = globs[key] sep glob
    }
  }
  END {
    for (i = 1; i <= nf; i++) for (h = 1; h <= no; h++) for (j = 1; j <= nw; j++) for (k = 1; k <= na; k++) {
      key = fam[i] "-" (ops[h] == "dense" ? "" : ops[h] "-") act[k] "-" wf[j]
      if (key in globs) print key "\t" globs[key]
    }
  }' generated/manifest.tsv)
[ ${#group_order[@]} -gt 0 ] || { echo "run_sanitizers_device.sh: no kernels in generated/manifest.tsv" >&2; exit 2; }
group_order+=(prepare)
group_globs[prepare]=''
tools=(memcheck synccheck initcheck racecheck)
if [ -n "${MGEN_SANITIZER_TOOLS:-}" ]; then # a subset, in the order above
  IFS=, read -ra asked <<<"$MGEN_SANITIZER_TOOLS"
  for t in "${asked[@]}"; do
    [[ " ${tools[*]} " == *" $t "* ]] ||
      { echo "run_sanitizers_device.sh: MGEN_SANITIZER_TOOLS: no tool '$t' (${tools[*]})" >&2; exit 2; }
  done
  kept=()
  for t in "${tools[@]}"; do [[ ",$MGEN_SANITIZER_TOOLS," == *",$t,"* ]] && kept+=("$t"); done
  ((${#kept[@]})) || { echo "run_sanitizers_device.sh: MGEN_SANITIZER_TOOLS names no tool" >&2; exit 2; }
  tools=("${kept[@]}")
fi

jobs=1
if [ "${1:-}" = -j ]; then
  [[ "${2:-}" =~ ^[1-9][0-9]?$ ]] || { echo "run_sanitizers_device.sh: -j needs a count 1..99" >&2; exit 2; }
  jobs=$2
  shift 2
fi
if [ "${1:-}" = --list ]; then
  for g in "${group_order[@]}"; do printf '%s\t%s\n' "$g" "${group_globs[$g]}"; done
  exit 0
fi
show=""
if [ "${1:-}" = --kernels ]; then
  if ! [[ "${2:-}" =~ ^[a-z0-9-]+(:[1-9][0-9]?/[1-9][0-9]?)?$ ]] || [ -z "${group_globs[${2%%:*}]+set}" ]; then
    echo "run_sanitizers_device.sh: --kernels needs GROUP or GROUP:I/N (groups: ${group_order[*]})" >&2
    exit 2
  fi
  show=$2
  shift 2
fi
selected=("$@")
[ ${#selected[@]} -gt 0 ] || selected=("${group_order[@]}")
for g in "${selected[@]}"; do
  [ -n "${group_globs[$g]+set}" ] || {
    echo "run_sanitizers_device.sh: unknown group '$g' (groups: ${group_order[*]})" >&2
    exit 2
  }
done

parts=${MGEN_SANITIZER_PARTS:-1}
[[ "$parts" =~ ^[1-9][0-9]?$ ]] || { echo "run_sanitizers_device.sh: MGEN_SANITIZER_PARTS must be 1..99" >&2; exit 2; }
if ((parts > 1)); then # GROUP -> GROUP:1/N .. GROUP:N/N (prepare stays whole)
  split=()
  for g in "${selected[@]}"; do
    if [ "$g" = prepare ]; then split+=("$g"); continue; fi
    for ((p = 1; p <= parts; p++)); do split+=("$g:$p/$parts"); done
  done
  selected=("${split[@]}")
fi

# kernels_of GROUP[:I/N]: the group's globs, or for a part its share of the manifest's kernels
# that the globs select (every N-th from the I-th, comma-separated; empty when none).
# matches_any NAME GLOB...: NAME matches one of the globs (as test_gemm_gpu's fnmatch does).
matches_any() {
  local name=$1 pattern
  shift
  for pattern in "$@"; do
    # shellcheck disable=SC2053 # a glob, matched as one
    [[ "$name" == $pattern ]] && return 0
  done
  return 1
}

kernels_of() {
  local g=${1%%:*} part=${1#*:} kernel i=0 list=() patterns only=()
  if [ "$part" = "$1" ]; then
    if [ -z "${MGEN_SANITIZER_ONLY:-}" ]; then
      printf '%s' "${group_globs[$g]}"
      return
    fi
    part=1/1
  fi
  IFS=, read -ra patterns <<<"${group_globs[$g]}"
  [ -z "${MGEN_SANITIZER_ONLY:-}" ] || IFS=, read -ra only <<<"$MGEN_SANITIZER_ONLY"
  while IFS=$'\t' read -r kernel _; do
    case "$kernel" in '#'* | name | '') continue ;; esac
    # MGEN_SANITIZER_ONLY: skip the kernels none of its globs match
    if ((${#only[@]})) && ! matches_any "$kernel" "${only[@]}"; then continue; fi
    matches_any "$kernel" "${patterns[@]}" || continue
    (((i % ${part#*/}) + 1 == ${part%/*})) && list+=("$kernel")
    i=$((i + 1))
  done <generated/manifest.tsv
  local IFS=,
  printf '%s' "${list[*]}"
}

if [ -n "$show" ]; then
  kernels_of "$show"
  echo
  exit 0
fi

out=${OUT:-verify}
build=${BUILD_DIR:-build}
budget=${MGEN_SANITIZER_BUDGET:-560}
step_limit=${MGEN_SANITIZER_STEP_LIMIT:-360}
cs=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
mkdir -p "$out"
summary=$out/sanitizers.txt
deadline=$((SECONDS + budget))
status=0 last_rc=0

# ---------------------------------------------------------------- steps
row() { # row TOOL GROUP KERNELS ERRORS RC SECONDS: one summary line, written at once
  printf '%-10s %-24s %7s %7s %8s %7s\n' "$@" >>"$summary"
  printf '%-10s %-24s %7s %7s %8s %7s\n' "$@"
}

# step TOOL GROUP LOG COMMAND...: runs COMMAND under timeout (the step limit, or what is left
# of the budget), then writes its row: kernels from test_gemm_gpu's or test_moe_gpu's "N
# kernels tested" line ("-" for other programs), errors summed over the sanitizer's SUMMARY
# lines (racecheck: the hazards; "?" when none was printed: a crash, a timeout or a failure
# before the tool ran).
step() {
  local tool=$1 group=$2 log=$out/$3 left limit start rc kernels errors
  shift 3
  left=$((deadline - SECONDS))
  if ((left < 30)); then
    row "$tool" "$group" - - no-time 0
    status=1 last_rc=no-time
    return
  fi
  limit=$((left - 10 < step_limit ? left - 10 : step_limit))
  start=$SECONDS
  timeout -k 10 "$limit" "$@" >"$log" 2>&1
  rc=$?
  kernels=$(sed -n 's/^test_\(gemm\|moe\)_gpu: \([0-9]*\) kernels tested.*/\2/p' "$log")
  if [ "$tool" = build ] || [[ "$group" == prepare* ]]; then kernels=-; fi
  errors=$(sed -n -e 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' \
    -e 's/.*RACECHECK SUMMARY: \([0-9]*\) hazard.*/\1/p' "$log" |
    awk '{ s += $1 } END { print NR ? s : "?" }')
  [ "$tool" = build ] && errors=-
  row "$tool" "$group" "${kernels:-?}" "$errors" "$rc" $((SECONDS - start))
  [ "$rc" = 0 ] || status=1
  last_rc=$rc
}

{
  echo "# run_sanitizers_device.sh ${selected[*]}: $(date -u +%FT%TZ)"
  echo "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi")"
  echo "# $("$cs" --version 2>&1 | tail -n 1)"
  echo "# rc: 0 clean; 1 sanitizer errors or a failed check (see the log); 77 no GPU;"
  echo "#     124/137 timed out; no-time: not started, the budget was spent"
} >"$summary"
row tool group kernels errors rc seconds

# MGEN_LINEINFO: the reports name source lines (a build without it is reconfigured: the
# kernels compile again, once)
if [ ! -f "$build/CMakeCache.txt" ]; then
  step build configure configure.log cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES="80;90" -DMGEN_NVCC_JOBS="$(nproc)" -DMGEN_LINEINFO=ON
else
  step build configure configure.log cmake -S . -B "$build" -DMGEN_LINEINFO=ON
fi
step build build build.log cmake --build "$build" --target test_gemm_gpu test_pack_gpu test_import_gpu \
  test_import_u4_gpu test_moe_gpu test_quantize_act_gpu
if [ "$last_rc" != 0 ]; then
  echo "run_sanitizers_device.sh: the build failed ($out/build.log); nothing sanitized" | tee -a "$summary"
  exit 1
fi

run_group() { # run_group GROUP [TOOL...]: its tools (default: all four), one after another
  local g=$1 tool cmd prog
  shift
  local which=("$@")
  ((${#which[@]})) || which=("${tools[@]}")
  for tool in "${which[@]}"; do
    cmd=("$cs" --tool "$tool" --error-exitcode 1)
    [ "$tool" = racecheck ] && cmd+=(--racecheck-report hazard) # each hazard, not the analysis
    if [ "$g" = prepare ]; then
      for prog in test_pack_gpu test_import_gpu test_import_u4_gpu test_quantize_act_gpu; do
        step "$tool" "prepare/$prog" "sanitize_${tool}_$prog.log" "${cmd[@]}" \
          "$build/tests/$prog" --quick
      done
    else
      local mode=--quick
      [ "$tool" = racecheck ] && mode=--race
      local kernels
      kernels=$(kernels_of "$g")
      if [ -z "$kernels" ]; then # a part with no kernel: nothing to run, and nothing wrong
        row "$tool" "$g" 0 - - 0
        continue
      fi
      prog=test_gemm_gpu
      [[ "$g" == *-moe-* ]] && prog=test_moe_gpu # (its --race: one case, two A modes)
      MGEN_TEST_KERNELS=$kernels step "$tool" "$g" "sanitize_${tool}_${g//[:\/]/_}.log" \
        "${cmd[@]}" "$build/tests/$prog" "$mode"
    fi
  done
}

if ((jobs == 1)); then
  for g in "${selected[@]}"; do run_group "$g"; done
else
  # One worker per (group, tool), up to `jobs` at once: the tools of a group are independent
  # runs of one test program. Workers write their rows to a file of their own (merged below in
  # group, then tool order) and report their status by exit code; `step` already bounds each
  # one by the shared deadline.
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU') || gpus=0
  ((gpus > 0)) || gpus=1
  whole=$summary
  declare -A pids=()
  i=0
  for g in "${selected[@]}"; do
    for tool in "${tools[@]}"; do
      while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
      (
        summary=$out/rows_$i.txt status=0
        : >"$summary"
        if ((gpus > 1)); then export CUDA_VISIBLE_DEVICES=$((i % gpus)); fi
        run_group "$g" "$tool" >/dev/null
        exit $status
      ) &
      pids[$i]=$!
      i=$((i + 1))
    done
  done
  for ((j = 0; j < i; j++)); do
    wait "${pids[$j]}" || status=1
    cat "$out/rows_$j.txt" >>"$whole" && rm -f "$out/rows_$j.txt"
  done
  summary=$whole
  cat "$summary"
  echo "# -j $jobs: ${#selected[@]} groups x ${#tools[@]} tools in $SECONDS s" | tee -a "$summary"
fi
# The GPU machine's tool brings back at most 8 files from $OUT: the step logs go into one archive.
(cd "$out" && tar cJf sanitizer-logs.tar.xz --remove-files -- *.log) 2>/dev/null || true
echo "summary: $summary (the step logs in sanitizer-logs.tar.xz beside it); exit $status"
exit $status
