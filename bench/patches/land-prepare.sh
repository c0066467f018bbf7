#!/usr/bin/env bash
# land-prepare.sh OUT -- here (Lua, the generator built): what bench/patches/land-device.sh needs
# on the GPU machine to check the waiting patches before they land, into OUT (an ignored folder
# of the checkout, e.g. .scratch/land; carry it):
#   OUT/tree.tar.xz     the landing tree: this checkout + LANDING's patches in order, generated/
#                       refreshed (bench/tree_prepare.sh; without bench/results/)
#   OUT/route-base.cu   runtime/src/moe/moe_kernels.cu with every patch but the last (the route
#                       A/B's base: the last patch changes only the route kernel and its tests)
#   OUT/mutants.tar.xz  tests/gpu/mutants/prepare.sh's output over the landing tree
#   OUT/cpu-check.log   the landing tree's CPU tests, built and run here (nothing on the GPU
#                       machine reads it; CPU_CHECK=0 skips them)
# Environment: MARLIN_GEN (default build/gen/marlin-gen).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: land-prepare.sh OUT}
# shellcheck source=bench/patches/landing.sh
. bench/patches/landing.sh
[ ${#LANDING[@]} -gt 0 ] || { echo "land-prepare: no patch waits (bench/patches/landing.sh)" >&2; exit 2; }
gen=$(realpath "${MARLIN_GEN:-build/gen/marlin-gen}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
MARLIN_GEN=$gen bench/tree_prepare.sh "${LANDING[@]}" "$tmp/tree"
# The route before the last patch: that patch's part of the one file, taken back.
moe=runtime/src/moe/moe_kernels.cu last=$(realpath "${LANDING[-1]}")
mkdir -p "$tmp/base/$(dirname "$moe")" && cp "$tmp/tree/$moe" "$tmp/base/$moe"
(cd "$tmp/base" && GIT_DIR=/nonexistent GIT_CEILING_DIRECTORIES="$tmp" git apply -R --include="$moe" "$last")
cp "$tmp/base/$moe" "$out/route-base.cu"
(cd "$tmp/tree" && MARLIN_GEN=$gen tests/gpu/mutants/prepare.sh "$tmp/mutants" >/dev/null)
# The tree's CPU tests, here (CPU_CHECK=0 skips them; 6.3 min on 2 cores): a landing that breaks
# one (a table hash the README quotes, a defaults check) stops here, before a device call is
# spent on it. sm_90 only; bench/results/ (left out of the carried tree) is linked in for the
# tests that read the committed CSVs and taken out before the tree is packed.
if [ "${CPU_CHECK:-1}" != 0 ]; then
  ln -s "$PWD/bench/results" "$tmp/tree/bench/results"
  rc=0
  { cmake -S "$tmp/tree" -B "$tmp/cpu" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DMGEN_GENERATE=OFF && cmake --build "$tmp/cpu" &&
      PYTHONDONTWRITEBYTECODE=1 ctest --test-dir "$tmp/cpu" -L cpu -j "$(nproc)" --output-on-failure; } \
    >"$out/cpu-check.log" 2>&1 || rc=$?
  rm "$tmp/tree/bench/results"
  if [ "$rc" != 0 ]; then
    echo "land-prepare: the tree's CPU tests failed ($out/cpu-check.log):" >&2
    grep -A30 "tests FAILED" "$out/cpu-check.log" >&2 || tail -20 "$out/cpu-check.log" >&2
    exit 1
  fi
  echo "land-prepare: $(grep -o '[0-9]*% tests passed.*' "$out/cpu-check.log") (the tree's CPU tests)"
fi
tar -C "$tmp/tree" -cJf "$out/tree.tar.xz" .
tar -C "$tmp" -cJf "$out/mutants.tar.xz" mutants
du -h "$out"/*
