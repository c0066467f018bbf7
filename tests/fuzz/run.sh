#!/usr/bin/env bash
# run.sh -- builds one of the cache fuzzers with clang and runs it for a bounded time.
#
#   tests/fuzz/run.sh BUILD_DIR [SECONDS] [TARGET]
#
# TARGET: fuzz_cache (default; the parser; ctest's fuzz.cache_parser) or fuzz_cache_io (load,
# merge and save; fuzz.cache_io). The seeds (tests/fuzz/corpus) are copied into
# BUILD_DIR/corpus_TARGET, where libFuzzer adds what it finds; a crash leaves BUILD_DIR/crash-*
# and fails the run. Environment: MGEN_CLANG (default clang), MGEN_CUDA_ROOT (the CUDA toolkit
# fuzz_cache_io compiles against, if CMake would not find it). Needs libFuzzer (Debian: clang +
# libclang-rt-N-dev).
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: run.sh BUILD_DIR [SECONDS] [TARGET]}
seconds=${2:-60}
target=${3:-fuzz_cache}
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_C_COMPILER="${MGEN_CLANG:-clang}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo ${MGEN_CUDA_ROOT:+-DCUDAToolkit_ROOT="$MGEN_CUDA_ROOT"} \
  >/dev/null
cmake --build "$build" --target "$target" >/dev/null
mkdir -p "$build/corpus_$target"
cp "$src"/corpus/* "$build/corpus_$target/"
cd "$build"
"./$target" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
  -dict="$src/fuzz_cache.dict" -print_final_stats=1 "corpus_$target"
