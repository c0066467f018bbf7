#!/usr/bin/env bash
# run.sh -- builds one fuzz target with clang and runs it for a fixed number of executions.
#
#   tests/fuzz/run.sh BUILD_DIR TARGET RUNS [--grow]
#
# TARGET: a target of tests/fuzz/CMakeLists.txt (fuzz_cache, fuzz_cache_io, fuzz_import,
# fuzz_tune_args, fuzz_gen_decode, fuzz_gen_templates). The committed seeds
# (tests/fuzz/corpus/TARGET) are copied into BUILD_DIR/corpus_TARGET, where libFuzzer adds what
# it finds; a finding leaves BUILD_DIR/crash-* (or leak-, timeout-, oom-) and fails the run.
# Without --grow the run is reproducible (-seed=1: ctest's fuzz.* tests). With --grow the seed
# is random and afterwards the inputs that add coverage are merged into tests/fuzz/corpus/TARGET
# (libFuzzer -merge=1), ready to commit (tests/fuzz/nightly.sh does this for every target).
# Environment: MGEN_CLANG (default clang), MGEN_CUDA_ROOT (the CUDA toolkit the runtime targets
# compile against, if CMake would not find it). Needs libFuzzer (Debian: clang +
# libclang-rt-N-dev).
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
usage="usage: run.sh BUILD_DIR TARGET RUNS [--grow]"
build=${1:?$usage}
target=${2:?$usage}
runs=${3:?$usage}
grow=${4:-}
[ -d "$src/corpus/$target" ] || { echo "run.sh: no corpus $src/corpus/$target: unknown target '$target'" >&2; exit 2; }
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_C_COMPILER="${MGEN_CLANG:-clang}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo ${MGEN_CUDA_ROOT:+-DCUDAToolkit_ROOT="$MGEN_CUDA_ROOT"} \
  >/dev/null
cmake --build "$build" --target "$target" >/dev/null
build=$(cd "$build" && pwd) # absolute: the runs below cd into it (nightly.sh passes build-fuzz)

# Per target: its dictionary, and its stdout/stderr closed where it prints per input (libFuzzer
# keeps its own reports and the sanitizers' on a duplicate of stderr).
dict=$src/$target.dict
[ "$target" = fuzz_cache_io ] && dict=$src/fuzz_cache.dict
options=(-max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "-dict=$dict")
case "$target" in
  fuzz_tune_args | fuzz_gen_decode) options+=(-close_fd_mask=3) ;;
esac
work=$build/corpus_$target
mkdir -p "$work"
cp "$src/corpus/$target"/* "$work/"
cd "$build"
if [ "$grow" = --grow ]; then
  "./$target" "${options[@]}" -runs="$runs" "$work"
  # Only inputs that add coverage go into the committed corpus.
  "./$target" "${options[@]}" -merge=1 "$src/corpus/$target" "$work"
else
  "./$target" "${options[@]}" -runs="$runs" -seed=1 "$work"
fi
