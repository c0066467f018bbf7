#!/usr/bin/env bash
# install_test.sh BUILD SOURCE_DIR HEADER -- `cmake --install BUILD` into a temporary prefix
# works, and projects outside this one build, link and run against what it installed:
# - the library: libmgen.so.X.Y.Z with SONAME libmgen.so.X.Y that exports exactly the
#   functions HEADER (mgen.h) marks MGEN_API and the internal ones marlin-tune needs, which the
#   headers of runtime/src mark MGEN__TOOLS_API (no ABI), or libmgen.a where MGEN_SHARED=OFF;
# - find_package(MarlinGen) + mgen::runtime from a project declared `LANGUAGES C` (consumer.c),
#   one declared `LANGUAGES CXX` (consumer.cpp), and one with CUDA enabled; each link line has
#   one CUDA runtime (never cudart_static beside libcudart.so);
# - pkg-config --cflags --libs mgen with the C compiler alone (consumer.c);
# - mgen.pc, the CMake package and marlin-tune are installed, and marlin-tune runs on the
#   prefix's libmgen.so.
# The consumers run with the prefix's library; without a GPU they exit 77 after their CPU
# checks, which counts as a pass here (the link is what is tested: the run proves the loader
# finds everything). Needs cmake, pkg-config (scripts/install-deps.sh) and a C/C++ compiler.
. "$(dirname "$0")/../gen/lib.sh"
build=$1 src=$2 header=$3
prefix=$tmp/prefix
gen=(-G Ninja)
command -v ninja >/dev/null 2>&1 || gen=()

capture cmake --install "$build" --prefix "$prefix"
expect_rc 0 "cmake --install $build"
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:[A-Z]*=//p' "$build/CMakeCache.txt")
shared=$(sed -n 's/^MGEN_SHARED:BOOL=//p' "$build/CMakeCache.txt")
[ -n "$libdir" ] && [ -n "$shared" ] || fail "no CMAKE_INSTALL_LIBDIR/MGEN_SHARED in $build"
for f in include/mgen/mgen.h include/mgen/mgen_kernel.h "$libdir/pkgconfig/mgen.pc" \
         "$libdir/cmake/MarlinGen/MarlinGenConfig.cmake" bin/marlin-tune; do
  [ -f "$prefix/$f" ] || fail "cmake --install did not install $f"
done

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' "$build/CMakeCache.txt")
if [ "$shared" = ON ]; then
  so=$prefix/$libdir/libmgen.so.$version
  [ -f "$so" ] || fail "no $so"
  soname=${version%.*}
  capture readelf -d "$so"
  expect_in "$out" "Library soname: [libmgen.so.$soname]" "SONAME of $so"
  [ "$(readlink "$prefix/$libdir/libmgen.so")" = "libmgen.so.$soname" ] &&
    [ "$(readlink "$prefix/$libdir/libmgen.so.$soname")" = "libmgen.so.$version" ] ||
    fail "libmgen.so -> libmgen.so.$soname -> libmgen.so.$version links are wrong"
  # The ABI is the header's MGEN_API functions; besides them only marlin-tune's MGEN__TOOLS_API
  # internals (runtime/src/base/tools_api.h); no other mgen__*, no kernel launchers.
  sed -n 's/^MGEN_API .*[ *]\(mgen_[a-z0-9_]*\)(.*/\1/p' "$header" >"$tmp/api"
  [ "$(wc -l <"$tmp/api")" -gt 10 ] || fail "found no MGEN_API functions in $header"
  cat "$(dirname "$header")"/../../src/*/*.h >"$tmp/internal.h"
  sed -n 's/^MGEN__TOOLS_API .*[ *]\(mgen__[a-z0-9_]*\)(.*/\1/p' "$tmp/internal.h" >>"$tmp/api"
  sort "$tmp/api" >"$tmp/declared"
  nm -D --defined-only "$so" >"$tmp/nm"
  awk '$2 ~ /^[TDBRVW]$/ {print $3}' "$tmp/nm" | sort >"$tmp/exported"
  diff "$tmp/declared" "$tmp/exported" >"$tmp/abi.diff" ||
    fail "libmgen.so exports (>) other functions than mgen.h's MGEN_API and MGEN__TOOLS_API (<):"$'\n'"$(
      cat "$tmp/abi.diff")"
else
  [ -f "$prefix/$libdir/libmgen.a" ] || fail "MGEN_SHARED=OFF: no $libdir/libmgen.a installed"
fi
# The installed program runs from the prefix (its --help needs no GPU), on the prefix's library.
capture "$prefix/bin/marlin-tune" --version
expect_rc 0 "installed marlin-tune --version"
if [ "$shared" = ON ]; then
  capture ldd "$prefix/bin/marlin-tune"
  found=$(sed -n "s/^[[:space:]]*libmgen.so.$soname => \([^ ]*\) .*/\1/p" <<<"$out")
  [ -n "$found" ] && [ "$(realpath "$found")" = "$(realpath "$so")" ] ||
    fail "installed marlin-tune loads libmgen.so.$soname from '$found', not the prefix's: $out"
fi

# A consumer's run: 0, or 77 (no GPU) once its CPU checks passed. CMake consumers find
# libmgen.so by the RUNPATH CMake gives them; the pkg-config one by LD_LIBRARY_PATH.
run_consumer() {
  capture env ${3:+LD_LIBRARY_PATH="$3"} "$1"
  [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || fail "$2: exit status $rc; stdout: $out; stderr: $err"
  expect_in "$out" "kernels, mgen_" "$2 ran its CPU checks"
  echo "$2: $out"
}

# The CUDA consumer gets this build's nvcc: CMake looks for one on PATH only, and CUDA's
# installers leave /usr/local/cuda/bin off PATH (.ci/run runs the tests so).
nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
[ -n "$nvcc" ] || fail "no CMAKE_CUDA_COMPILER in $build"
for langs in C CXX "C;CUDA"; do
  dir=$tmp/cmake-${langs//;/-}
  cuda=()
  [[ $langs == *CUDA* ]] && cuda=("-DCMAKE_CUDA_COMPILER=$nvcc")
  capture cmake -S "$src" -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    "-DCONSUMER_LANGUAGES=$langs" "-DCMAKE_PREFIX_PATH=$prefix" "${cuda[@]}"
  expect_rc 0 "configuring a LANGUAGES $langs consumer with find_package(MarlinGen)"
  capture cmake --build "$dir" --verbose
  expect_rc 0 "building a LANGUAGES $langs consumer against mgen::runtime"
  link=$(grep -E '(^|[ /])(-o consumer|-o [^ ]*/consumer)( |$)' "$tmp/stdout" || true)
  [ -n "$link" ] || fail "no link line for the $langs consumer in: $out"
  # One CUDA runtime: libcudart.so, or (static libmgen.a in a CUDA project) the project's own.
  runtimes=0
  case "$link" in *libcudart.so*) runtimes=$((runtimes + 1)) ;; esac
  case "$link" in *cudart_static*) runtimes=$((runtimes + 1)) ;; esac
  [ "$runtimes" -eq 1 ] || fail "the $langs consumer links $runtimes CUDA runtimes: $link"
  [[ $langs == *CUDA* ]] || expect_in "$link" "libcudart.so" "the $langs consumer's cudart"
  run_consumer "$dir/consumer" "find_package consumer, LANGUAGES $langs"
done

# pkg-config, C compiler only: what `cc $(pkg-config --cflags --libs mgen)` gives must do.
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
capture pkg-config --modversion mgen
expect_rc 0 "pkg-config --modversion mgen"
[ "$out" = "$version" ] || fail "pkg-config says mgen $out; the build is $version"
read -r -a flags <<<"$(pkg-config --cflags --libs mgen)"
capture "${CC:-cc}" -std=c11 -o "$tmp/pc-consumer" "$src/consumer.c" "${flags[@]}"
expect_rc 0 "cc consumer.c \$(pkg-config --cflags --libs mgen)"
run_consumer "$tmp/pc-consumer" "pkg-config consumer" "$prefix/$libdir"
echo "install_test: installed into a temporary prefix; C, C++ and CUDA-enabled find_package" \
     "consumers and a pkg-config consumer built and ran"
