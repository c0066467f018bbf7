#!/usr/bin/env bash
# configure_check.sh ROOT [NVCC] -- configures of ROOT on the machines README's quick start
# meets, each with a PATH that holds no nvcc:
# - CMake finds nvcc off PATH (cmake/MgenFindNvcc.cmake, included by ROOT/CMakeLists.txt before
#   check_language(CUDA)), as CUDA's installers leave it in /usr/local/cuda/bin. A small project
#   including the module: $CUDA_PATH/bin's nvcc (a stand-in) is taken, with a STATUS line; an
#   nvcc on PATH, -DCMAKE_CUDA_COMPILER and CUDACXX are left to CMake; a cached NOTFOUND is
#   looked for again. With NVCC (this build's CUDA compiler; none: not checked), ROOT configured
#   as README's command 1 does enables CUDA with it, from /usr/local/cuda/bin where NVCC is
#   there (CUDA_PATH unset: the quick start's case), else through CUDA_PATH.
# - ROOT without a CUDA compiler and with MGEN_GENERATE=OFF: its build/bench/mgen_demo exits 1
#   naming CMAKE_CUDA_COMPILER, so README's command 1 never ends in "No such file"; every test
#   of tests/gen/ is registered anyway, reported "Skipped" with the reason (marlin-gen is not
#   built), and scripts/ctest-skips.sh lists them with that reason and fails.
# Exit 77 (skipped) where nvcc shares a directory with cmake or cc (e.g. /usr/bin/nvcc).
. "$(dirname "$0")/../gen/lib.sh"
root=$(cd "$1" && pwd) nvcc=${2:-}
gen=(-G Ninja)
command -v ninja >/dev/null 2>&1 || gen=()

# PATH without any directory that holds an nvcc (cmake, the C compiler and ninja stay).
nopath=""
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -n "$d" ] && [ ! -e "$d/nvcc" ] && nopath+=${nopath:+:}$d
done
PATH=$nopath command -v nvcc >/dev/null 2>&1 && fail "an nvcc is still on the stripped PATH"
for tool in cmake cc bash; do
  if ! PATH=$nopath command -v "$tool" >/dev/null 2>&1; then
    echo "SKIPPED: $tool shares a directory with nvcc here ($(command -v nvcc)): no PATH hides one but not the other"
    exit 77
  fi
done

mkdir -p "$tmp/p" "$tmp/cuda/bin" "$tmp/onpath"
cat >"$tmp/p/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.24)
project(find_nvcc LANGUAGES C)
include("$root/cmake/MgenFindNvcc.cmake")
message(STATUS "chosen: [\${CMAKE_CUDA_COMPILER}]")
EOF
for f in "$tmp/cuda/bin/nvcc" "$tmp/onpath/nvcc"; do
  printf '#!/bin/sh\nexit 1\n' >"$f"
  chmod +x "$f"
done

# configure NAME ENV... -- ARGS...: a fresh configure of the small project.
configure() {
  local name=$1 envs=()
  shift
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  capture env -u CUDACXX -u CUDA_PATH "PATH=$nopath" "${envs[@]}" \
    cmake -S "$tmp/p" -B "$tmp/b-$name" "${gen[@]}" "$@"
  expect_rc 0 "configure ($name)"
}

configure cuda_path CUDA_PATH="$tmp/cuda" --
expect_in "$out" "chosen: [$tmp/cuda/bin/nvcc]" "CUDA_PATH/bin's nvcc, not on PATH"
expect_in "$out" "nvcc is not on PATH; using $tmp/cuda/bin/nvcc" "the STATUS line"
configure on_path CUDA_PATH="$tmp/cuda" "PATH=$tmp/onpath:$nopath" --
expect_in "$out" "chosen: []" "an nvcc on PATH is CMake's to find"
configure given CUDA_PATH="$tmp/cuda" -- -DCMAKE_CUDA_COMPILER=/given/nvcc
expect_in "$out" "chosen: [/given/nvcc]" "-DCMAKE_CUDA_COMPILER wins"
configure cudacxx CUDA_PATH="$tmp/cuda" CUDACXX=/env/nvcc --
expect_in "$out" "chosen: []" "CUDACXX is CMake's to use"
configure notfound CUDA_PATH="$tmp/cuda" -- -DCMAKE_CUDA_COMPILER=CMAKE_CUDA_COMPILER-NOTFOUND
expect_in "$out" "chosen: [$tmp/cuda/bin/nvcc]" "a cached NOTFOUND is looked for again"

# ROOT as README's command 1 configures it, with nvcc off PATH: CUDA is enabled.
if [ -n "$nvcc" ]; then
  if [ "$nvcc" = /usr/local/cuda/bin/nvcc ]; then
    where="/usr/local/cuda/bin" envs=()
  else
    where="CUDA_PATH" envs=("CUDA_PATH=$(dirname "$(dirname "$nvcc")")")
  fi
  capture env -u CUDACXX -u CUDA_PATH "PATH=$nopath" "${envs[@]}" cmake -S "$root" \
    -B "$tmp/b-cuda" "${gen[@]}" -DMGEN_GENERATE=OFF
  expect_rc 0 "configure $root with nvcc off PATH ($where)"
  expect_in "$out" "nvcc is not on PATH; using $nvcc" "$root finds nvcc in $where"
  expect_in "$out" "The CUDA compiler identification is NVIDIA" "$root enables CUDA"
  [[ $out != *"Building the generator and CPU tests only"* ]] || fail "$root built without CUDA: $out"
  echo "configure_check: $root found $nvcc off PATH through $where"
else
  echo "configure_check: this build has no CUDA compiler: finding the real toolkit is not checked"
fi

# ROOT without a CUDA compiler (an empty CMAKE_CUDA_COMPILER: CMake looks for none).
capture env -u CUDACXX -u CUDA_PATH "PATH=$nopath" cmake -S "$root" -B "$tmp/b-root" "${gen[@]}" \
  -DCMAKE_CUDA_COMPILER= -DMGEN_GENERATE=OFF
expect_rc 0 "configure $root without CUDA"
expect_in "$out" "Building the generator and CPU tests only" "the configure says what it builds"
capture env "PATH=$nopath" cmake --build "$tmp/b-root" --target mgen_demo
expect_rc 0 "build mgen_demo without CUDA"
capture "$tmp/b-root/bench/mgen_demo"
expect_rc 1 "mgen_demo of a build without CUDA"
expect_in "$err" "-DCMAKE_CUDA_COMPILER=/path/to/nvcc" "mgen_demo says what to set"
expect_in "$err" "no CUDA compiler" "mgen_demo says why"

# Its gen.* tests: every mgen_gen_test of tests/gen/CMakeLists.txt, a placeholder that skips.
mapfile -t names < <(sed -n 's/^mgen_gen_test(\([a-z_]*\) .*/gen.\1/p' "$root/tests/gen/CMakeLists.txt")
((${#names[@]} >= 8)) || fail "found only ${#names[@]} mgen_gen_test lines in tests/gen/CMakeLists.txt"
regex="^($(IFS='|'; echo "${names[*]}"))\$"
capture ctest --test-dir "$tmp/b-root" -R "$regex"
expect_rc 0 "ctest of the gen.* placeholders"
printf '%s\n' "$out" >"$tmp/ctest.log"
for name in "${names[@]}"; do
  [[ $out =~ [0-9]+\ -\ ${name//./\\.}\ \(Skipped\) ]] || fail "$name is not reported Skipped: $out"
done
capture bash "$root/scripts/ctest-skips.sh" "$tmp/ctest.log" "$tmp/b-root"
expect_rc 1 "ctest-skips.sh on skipped cpu tests"
for name in "${names[@]}"; do
  expect_in "$out" "  $name: SKIPPED: marlin-gen is not built (MGEN_GENERATE=OFF" "ctest-skips.sh's line"
done
echo "configure_check: nvcc off PATH found; the module leaves given compilers alone; without" \
  "CUDA mgen_demo says what to set; with MGEN_GENERATE=OFF the ${#names[@]} gen tests skip, saying why"
