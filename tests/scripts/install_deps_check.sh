#!/usr/bin/env bash
# install_deps_check.sh ROOT -- scripts/install-deps.sh asks apt-get for what the tests need and
# the machine lacks, run against stub dpkg, apt-get, clang and cmake (nothing is installed):
# - a fresh machine gets every package, python3, python3-venv and python3-matplotlib among them
#   (the Python CPU tests; the wheel installed in a virtual environment; scripts.plot_figures);
# - a machine with only python3-minimal's `python3` command (no ctypes, no unittest: the CPU test
#   would fail, not skip) still gets the python3 package and python3-venv;
# - a machine with everything gets no apt-get call at all.
. "$(dirname "$0")/../gen/lib.sh"
root=$1
script=$root/scripts/install-deps.sh
every="build-essential cmake ninja-build liblua5.4-dev lua5.4 clang xz-utils python3 python3-venv
python3-matplotlib libclang-rt-16-dev"

# machine NAME INSTALLED COMMANDS: a stub PATH where dpkg knows the packages INSTALLED and the
# commands COMMANDS (besides the stubs and the shell's tools) exist; runs the script there and
# leaves apt-get's calls, one a line, in $tmp/NAME/apt.
machine() {
  local dir=$tmp/$1 c
  mkdir -p "$dir/bin"
  tr ' ' '\n' <<<"$2" >"$dir/installed"
  : >"$dir/apt"
  for c in sed sort tr cat grep; do ln -s "$(command -v "$c")" "$dir/bin/$c"; done
  printf '#!%s\n[ "$1" = -s ] && grep -qxF -- "$2" %q\n' "$BASH" "$dir/installed" >"$dir/bin/dpkg"
  printf '#!%s\necho "$*" >>%q\n' "$BASH" "$dir/apt" >"$dir/bin/apt-get"
  printf '#!%s\necho 16.0.6\n' "$BASH" >"$dir/bin/clang"
  printf '#!%s\necho "cmake version 3.25.1"\n' "$BASH" >"$dir/bin/cmake"
  for c in $3; do printf '#!%s\n' "$BASH" >"$dir/bin/$c"; done
  chmod +x "$dir"/bin/*
  capture env PATH="$dir/bin" CUDA_PATH="$dir" "$BASH" "$script"
  expect_rc 0 "install-deps.sh on the $1 machine"
}
# installs NAME: the packages the script's apt-get install calls named, sorted, one a line.
installs() { sed -n 's/^install .* -qq --no-install-recommends //p' "$tmp/$1/apt" | tr ' ' '\n' | sort; }

machine fresh "" ""
for pkg in $every pkg-config; do
  grep -qxF -- "$pkg" <(installs fresh) || fail "a fresh machine does not get $pkg: $(installs fresh | tr '\n' ' ')"
done

python_pkgs="python3 python3-venv"
machine minimal "${every//$python_pkgs/}" "python3 pkg-config"
got=$(installs minimal | tr '\n' ' ')
[ "$got" = "python3 python3-venv " ] ||
  fail "a machine with python3-minimal's python3 only should get python3 python3-venv, got: $got"

machine complete "$every" "python3 pkg-config"
[ ! -s "$tmp/complete/apt" ] || fail "a complete machine still calls apt-get: $(cat "$tmp/complete/apt")"
echo "install_deps_check: fresh, python3-minimal and complete machines ok"
