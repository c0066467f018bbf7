#!/usr/bin/env bash
# install-deps.sh -- installs, on Debian/Ubuntu (as root), the packages that the build and the
# whole test suite need and that are missing; the CUDA toolkit (nvcc, cuBLAS) must be there
# already. README's quick start and .ci/run both call it, so a user's ctest runs the same tests
# as CI. What each package is for:
#   build-essential cmake ninja-build  the build (CMake >= 3.24); build-essential's g++ also
#                                     builds examples/cpp and the C++ install consumer
#   liblua5.4-dev                     marlin-gen embeds Lua 5.4 (linked statically)
#   lua5.4                            the gen.engine, gen.banks and gen.defaults_current tests
#   xz-utils                          test_cost_sweep and gen.defaults_current read the sweep .xz
#   clang libclang-rt-N-dev           the libFuzzer targets (fuzz.* tests)
#   pkg-config                        install.consumers and examples.build build with pkg-config
#   python3                           the Python package's CPU test and tools.fit_cost_models
#                                     (standard library only: the package, not the command,
#                                     since python3-minimal has a python3 without ctypes or
#                                     unittest, and CMake's FindPython3 would take it)
#   python3-venv                      a virtual environment to install the package's wheel in
#                                     (Debian's own pip refuses system installs, PEP 668)
#   python3-matplotlib                bench/plot_figures.py (scripts.plot_figures redraws
#                                     docs/figures/ and compares them byte for byte)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
missing=()
for pkg in build-essential cmake ninja-build liblua5.4-dev lua5.4 clang xz-utils; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
# A tool that another package provides too (pkgconf): missing only without the command.
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
for pkg in python3 python3-venv python3-matplotlib; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
updated=0
if ((${#missing[@]})); then
  apt-get update -qq
  updated=1
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# libFuzzer ships in the compiler-rt package of clang's own major version.
clang_major=$(clang -dumpversion)
clang_major=${clang_major%%.*}
if ! dpkg -s "libclang-rt-$clang_major-dev" >/dev/null 2>&1; then
  ((updated)) || apt-get update -qq
  apt-get install -y -qq --no-install-recommends "libclang-rt-$clang_major-dev"
fi
cmake_version=$(cmake --version)
cmake_version=${cmake_version#cmake version }
cmake_version=${cmake_version%%$'\n'*}
if [ "$(printf '%s\n3.24\n' "$cmake_version" | sort -V | sed -n 1p)" != 3.24 ]; then
  echo "install-deps: CMake $cmake_version is older than 3.24 (e.g. Ubuntu 22.04's 3.22):" \
       "install a newer one, e.g. 'pip install cmake'" >&2
  exit 1
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x "${CUDA_PATH:-/nonexistent}/bin/nvcc" ] &&
   [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: no nvcc on PATH, in \$CUDA_PATH/bin or in /usr/local/cuda/bin (where CMake" \
       "looks): only the generator and the CPU tests will build (install the CUDA toolkit" \
       ">= 12.0 for the library, or configure with -DCMAKE_CUDA_COMPILER=/path/to/nvcc)" >&2
fi
