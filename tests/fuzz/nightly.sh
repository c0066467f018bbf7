#!/usr/bin/env bash
# nightly.sh [BUILD_DIR] [RUNS] -- the nightly-size fuzzing run: every target of
# tests/fuzz for RUNS executions each (default 10^7; run.sh --grow), merging the inputs that
# add coverage into tests/fuzz/corpus/TARGET. Commit the grown corpus afterwards. Stops at the
# first finding (BUILD_DIR/crash-*, leak-*, timeout-* or oom-*: reproduce with
# `BUILD_DIR/TARGET FILE`). Default BUILD_DIR: build-fuzz. Hours on 2 cores.
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
build=${1:-build-fuzz}
runs=${2:-10000000}
for target in fuzz_cache fuzz_cache_io fuzz_import fuzz_tune_args fuzz_gen_decode fuzz_gen_templates; do
  echo "=== $target: $runs executions"
  "$src/run.sh" "$build" "$target" "$runs" --grow
done
echo "nightly: every target ran $runs executions; corpus grown in $src/corpus (commit it)"
