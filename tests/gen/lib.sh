# lib.sh -- shared by the test scripts (sourced): strict mode, a temp dir, checks.
#
# Strict mode has two traps that made tests fail with an empty log, so:
# - a failing command that set -e stops on must say which (the ERR trap below; -E: also inside
#   functions), so no test fails silently;
# - never pipe a producer into a consumer that stops reading early (`cmd | head`, `| grep -q`):
#   under pipefail the producer's SIGPIPE (exit 141) fails the script. Capture into a file or a
#   variable first, then look at it.
set -eEuo pipefail
trap 'echo "FAIL: ${BASH_SOURCE[0]##*/}:$LINENO: \`$BASH_COMMAND\` exited with status $?" >&2' ERR

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mgen-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# One line per file under $1 (except $2, if given): path, inode, mtime (ns), size, checksum.
# Equal states mean no file was rewritten, renamed over, added or removed.
tree_state() {
  (cd "$1" && find . -type f ! -path "./${2:-.none}" -printf '%P %i %T@ %s\n' | sort &&
    find . -type f ! -path "./${2:-.none}" -print0 | sort -z | xargs -0 -r cksum)
}

# Runs a command, capturing stdout, stderr and the exit status in $out, $err and $rc.
capture() {
  "$@" >"$tmp/stdout" 2>"$tmp/stderr" && rc=0 || rc=$? # a list: neither set -e nor ERR fire
  out=$(cat "$tmp/stdout")
  err=$(cat "$tmp/stderr")
}

# no_gpu_agreed WHAT: WHAT (a program) said it found no GPU; a GPU it missed would read as a
# skip, so nvidia-smi must list none either (else fail).
no_gpu_agreed() {
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >"$tmp/smi" 2>&1 &&
     grep -q '^GPU ' "$tmp/smi"; then
    fail "$1 but nvidia-smi lists: $(cat "$tmp/smi")"
  fi
}

# expect_rc N DESCRIPTION: the last capture exited with N.
expect_rc() {
  [ "$rc" -eq "$1" ] || fail "$2: exit status $rc, expected $1; stderr: $err"
}

# expect_in TEXT NEEDLE DESCRIPTION: TEXT contains NEEDLE (fixed string).
expect_in() {
  case "$1" in
    *"$2"*) ;;
    *) fail "$3: expected '$2' in: $1" ;;
  esac
}

# The command-line conventions of marlin-gen, marlin-tune and the bench programs (cli.h).
# expect_std_options PROGRAM VERSION: --help and -h print "usage: <name>" on stdout and nothing
# on stderr, --version prints "<name> VERSION"; all exit 0 (name: PROGRAM's basename).
expect_std_options() {
  local name=${1##*/} option
  for option in --help -h; do
    capture "$1" "$option"
    expect_rc 0 "$name $option"
    expect_in "$out" "usage: $name" "$name $option"
    [ -z "$err" ] || fail "$name $option: printed on stderr: $err"
  done
  capture "$1" --version
  expect_rc 0 "$name --version"
  [ "$out" = "$name $2" ] || fail "$name --version printed '$out', expected '$name $2'"
}

# expect_usage_error NEEDLE PROGRAM ARGS...: runs it; exit 2, nothing on stdout, and on stderr
# "<name>: NEEDLE" and "Try '<name> --help'.".
expect_usage_error() {
  local needle=$1 name=${2##*/}
  shift
  capture "$@"
  local what="$name ${*:2}"
  expect_rc 2 "$what"
  [ -z "$out" ] || fail "$what: printed on stdout: $out"
  expect_in "$err" "$name: $needle" "$what"
  expect_in "$err" "Try '$name --help'." "$what"
}

# with_bad FIXTURES BAD TARGET DIR: a copy of FIXTURES/templates in DIR whose TARGET is
# FIXTURES/bad/BAD (a .patch: applied to the copy instead).
with_bad() {
  cp -r "$1/templates" "$4"
  case $2 in
    *.patch) (cd "$4" && git apply "$1/bad/$2") ;;
    *) cp "$1/bad/$2" "$4/$3" ;;
  esac
}

# expect_error WHAT EXPECTED: the last capture exited 1 with "marlin-gen: EXPECTED" as its
# first stderr line.
expect_error() {
  expect_rc 1 "$1"
  [ "$(head -n 1 <<<"$err")" = "marlin-gen: $2" ] ||
    fail "$1: stderr is: $err"$'\n'"expected: marlin-gen: $2"
}

# check_bad BAD TARGET EXPECTED [COMMAND...]: with_bad into $tmp/caseN (N counts the calls, in
# $n; the folder in $dir), then COMMAND (default $mgen) --templates it --out $tmp/newN must fail
# as expect_error says and create no $tmp/newN. Reads $mgen and $fixtures.
check_bad() {
  local bad=$1 target=$2 expected=$3
  shift 3
  (($#)) || set -- "$mgen"
  n=$((${n:-0} + 1))
  dir="$tmp/case$n"
  with_bad "$fixtures" "$bad" "$target" "$dir"
  capture "$@" --templates "$dir" --out "$tmp/new$n"
  expect_error "$bad" "$expected"
  [ ! -e "$tmp/new$n" ] || fail "$bad: created the output directory"
}
