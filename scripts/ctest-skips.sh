#!/usr/bin/env bash
# ctest-skips.sh LOG BUILD_DIR [LABEL] -- after a ctest run: which tests skipped and why, and
# whether that is allowed. ctest exits 0 when tests skip (exit code 77), and when a label selects
# no test at all, so its exit status alone reads a skip as a pass.
#
#   ctest --test-dir build ... 2>&1 | tee ctest.log; scripts/ctest-skips.sh ctest.log build gpu
#
# LOG is that run's output (stdout and stderr). Prints one line per skipped test, "  NAME:
# REASON" (the reason: the test's first output line that says "skip", else its last line, from
# BUILD_DIR/Testing/Temporary/LastTest.log, which is that run's if no ctest ran since), then
# fails (exit 1) if no test ran, or if a test skipped that does not carry LABEL (no LABEL: any
# skipped test fails). .ci/run passes gpu (a machine without a GPU skips those, and only those);
# tests/gpu/run_verify_device.sh passes none (on the GPU machine every test must run).
# Environment: CTEST, the ctest to ask for LABEL's tests (default ctest).
set -euo pipefail
log=${1:?usage: ctest-skips.sh LOG BUILD_DIR [LABEL]}
build=${2:?usage: ctest-skips.sh LOG BUILD_DIR [LABEL]}
label=${3:-}
[ -r "$log" ] || { echo "ctest-skips: cannot read $log" >&2; exit 2; }

# The summary: "N% tests passed, F tests failed out of T" ("N% tests passed out of T" under -V
# where none failed), then the tests that did not run, one "<tab> ID - NAME (Skipped)" (or
# Disabled) line each.
total=$(sed -En 's/^[0-9]+% tests passed(, [0-9]+ tests? failed)? out of ([0-9]+)$/\2/p' "$log")
if [ -z "$total" ] || [ "$total" = 0 ]; then
  echo "ctest-skips: FAIL: no test ran (ctest printed no summary of a run; see $log)" >&2
  exit 1
fi
mapfile -t skipped < <(awk '
  /^The following tests did not run:/ { inside = 1; next }
  inside && /^\t *[0-9]+ - .* \((Skipped|Disabled)\)$/ {
    sub(/^\t *[0-9]+ - /, ""); sub(/ \((Skipped|Disabled)\)$/, ""); print; next }
  { inside = 0 }' "$log")
if ((${#skipped[@]} == 0)); then
  echo "ctest-skips: $total tests ran, none skipped"
  exit 0
fi

# The reasons first: `ctest -N` below rewrites LastTest.log.
lastlog=$build/Testing/Temporary/LastTest.log
reasons=()
for name in "${skipped[@]}"; do
  reason=""
  if [ -r "$lastlog" ]; then
    reason=$(awk -v name="$name" '
      /^[0-9]+\/[0-9]+ Test: / { sub(/^[0-9]+\/[0-9]+ Test: /, ""); mine = ($0 == name); out = 0; next }
      mine && /^Output:$/ { out = 1; getline; next }
      mine && out && /^<end of output>$/ { out = 0; mine = 0; next }
      mine && out && NF { last = $0; if (first == "" && tolower($0) ~ /skip/) first = $0 }
      END { print (first != "" ? first : last) }' "$lastlog")
  fi
  reasons+=("${reason:-no reason printed}")
done
allowed=()
if [ -n "$label" ]; then
  listing=$("${CTEST:-ctest}" --test-dir "$build" -N -L "^$label\$")
  mapfile -t allowed < <(sed -n 's/^ *Test *#[0-9]*: //p' <<<"$listing")
fi
bad=0
echo "ctest-skips: ${#skipped[@]} of $total tests skipped:"
for i in "${!skipped[@]}"; do
  name=${skipped[i]} ok=0
  for a in "${allowed[@]}"; do [ "$a" = "$name" ] && ok=1; done
  if ((ok)); then
    echo "  $name ($label): ${reasons[i]}"
  else
    echo "  $name: ${reasons[i]}  <- must not skip here"
    bad=$((bad + 1))
  fi
done
if ((bad)); then
  echo "ctest-skips: FAIL: $bad test(s) skipped that must run here${label:+ (only $label tests may skip)}" >&2
  exit 1
fi
