#!/usr/bin/env bash
# run.sh -- builds the cache-parser fuzzer with clang and runs it for a bounded time.
#
#   tests/fuzz/run.sh BUILD_DIR [SECONDS]        (default 60; ctest runs it as fuzz.cache_parser)
#
# The seeds (tests/fuzz/corpus) are copied into BUILD_DIR/corpus, where libFuzzer adds what it
# finds; a crash leaves BUILD_DIR/crash-* and fails the run. Environment: MGEN_CLANG (default
# clang). Needs libFuzzer (Debian: clang + libclang-rt-14-dev).
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: run.sh BUILD_DIR [SECONDS]}
seconds=${2:-60}
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_C_COMPILER="${MGEN_CLANG:-clang}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" >/dev/null
mkdir -p "$build/corpus"
cp "$src"/corpus/* "$build/corpus/"
cd "$build"
./fuzz_cache -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
  -dict="$src/fuzz_cache.dict" -print_final_stats=1 corpus
