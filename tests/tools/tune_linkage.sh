#!/usr/bin/env bash
# tune_linkage.sh MARLIN_TUNE LIBMGEN CC -- marlin-tune links the shared libmgen and carries no
# kernels of its own, so that an install holds each kernel once, in libmgen.so:
# - its NEEDED entries name LIBMGEN's SONAME, and the loader resolves that name to LIBMGEN;
# - it holds no device code (no .nv_fatbin section: nvcc puts every kernel's code there, the
#   runtime's own quantize, pack and import kernels included) and is at most 512 KiB. Why that
#   bound: its own code is ~1,000 lines of C (45 KB built); a copy of libmgen's objects brings
#   the runtime's own device code, ~2 MB in any build (1.96 MB measured, sm80+sm90, with no
#   kernel at all), and each kernel more;
# - it runs, and refuses a libmgen of another release (a stand-in mgen_version_number,
#   LD_PRELOADed, built with CC): the internals it calls there are no ABI.
. "$(dirname "$0")/../gen/lib.sh"
tune=$1 lib=$2 cc=$3

capture readelf -d "$lib"
soname=$(sed -n 's/.*Library soname: \[\(.*\)\]$/\1/p' <<<"$out")
[ -n "$soname" ] || fail "$lib has no SONAME: $out"
capture readelf -d "$tune"
expect_rc 0 "readelf -d $tune"
expect_in "$out" "(NEEDED)             Shared library: [$soname]" "marlin-tune links $soname"

capture ldd "$tune"
resolved=$(sed -n "s/^[[:space:]]*$soname => \([^ ]*\) .*/\1/p" <<<"$out")
[ -n "$resolved" ] && [ "$(realpath "$resolved")" = "$(realpath "$lib")" ] ||
  fail "the loader finds $soname for marlin-tune at '$resolved', not $lib: $out"

capture readelf -S -W "$tune"
expect_rc 0 "readelf -S $tune"
case $out in
  *.nv_fatbin*) fail "marlin-tune holds device code (a .nv_fatbin section): libmgen's objects" \
                     "are linked into it again" ;;
esac
size=$(stat -c %s "$tune")
((size <= 512 * 1024)) || fail "marlin-tune is $size bytes, more than 512 KiB: does it carry" \
                              "libmgen's code again?"

capture "$tune" --version
expect_rc 0 "marlin-tune --version"

# A libmgen.so of another release: its version number differs from the one compiled in.
cat >"$tmp/other.c" <<'EOF'
int mgen_version_number(void) { return 9999; }
EOF
"$cc" -shared -fPIC -o "$tmp/other.so" "$tmp/other.c"
capture env LD_PRELOAD="$tmp/other.so" "$tune" --version
expect_rc 1 "marlin-tune with another release's libmgen"
expect_in "$err" "but loaded libmgen 9999" "marlin-tune names the release it found"
echo "tune_linkage: marlin-tune ($size bytes) links $soname at $resolved, holds no device code"
