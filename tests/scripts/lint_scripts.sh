#!/usr/bin/env bash
# lint_scripts.sh ROOT -- the project's shell scripts keep the two rules of tests/gen/lib.sh:
# 1. no `producer | head` or `| grep -q` / `| grep -m` (under pipefail the producer may die of
#    SIGPIPE, exit 141: gen.determinism failed that way in 9 of 15 runs, with an empty log);
# 2. a script that sources lib.sh and fails on a command says which command failed.
. "$(dirname "$0")/../gen/lib.sh"
root=$1

# Rule 1, over every script (comments skipped).
mapfile -t scripts < <(cd "$root" && find .ci tests bench -name '*.sh' -o -path .ci/run | sort)
((${#scripts[@]} > 5)) || fail "found only ${#scripts[@]} scripts under $root: wrong root?"
bad=""
for s in "${scripts[@]}"; do
  hits=$(grep -nE '\|[[:space:]]*(head|grep[[:space:]]+(-[a-zA-Z]*[qm]))' "$root/$s" |
    grep -vE '^[0-9]+:[[:space:]]*#' || true)
  [ -z "$hits" ] || bad+="$s: $hits"$'\n'
done
[ -z "$bad" ] || fail "pipes into an early-exiting reader (capture first, then read):"$'\n'"$bad"

# The rule-1 check itself finds the pattern it is for.
printf 'x=$(yes %s head -n 1)\n' '|' >"$tmp/bad.sh"
grep -qE '\|[[:space:]]*(head|grep[[:space:]]+(-[a-zA-Z]*[qm]))' "$tmp/bad.sh" ||
  fail "the pattern does not match a known bad line"

# Rule 2: a failing command in a script that sources lib.sh is named on stderr.
cat >"$tmp/failing.sh" <<SCRIPT
. "$(cd "$(dirname "$0")/../gen" && pwd)/lib.sh"
helper() { false; }
ls /nonexistent-mgen-dir >/dev/null 2>&1
SCRIPT
capture bash "$tmp/failing.sh"
expect_rc 2 "a failing ls under lib.sh"
expect_in "$err" "ls /nonexistent-mgen-dir" "the ERR trap names the failing command"
printf '. "%s/lib.sh"\nhelper() { false; }\nhelper\n' "$(cd "$(dirname "$0")/../gen" && pwd)" \
  >"$tmp/in_function.sh"
capture bash "$tmp/in_function.sh"
expect_rc 1 "a failing command inside a function"
expect_in "$err" "false" "the ERR trap fires inside functions (set -E)"
echo "lint_scripts: ${#scripts[@]} scripts ok"
