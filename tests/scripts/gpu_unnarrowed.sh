#!/usr/bin/env bash
# gpu_unnarrowed.sh BUILD CTEST -- every registered GPU test program runs whole: its ctest entry
# unsets MGEN_TEST_KERNELS and MGEN_TEST_QUICK (tests/gpu/gpu_util.c narrows on them), so a
# developer's environment cannot turn what ctest reports as passed into a subset. Reads
# `ctest --show-only=json-v1`; the placeholders of mgen_skipped_test (sh -c) run no program.
# That ctest reads a copy of BUILD's CTestTestfile.cmake tree: run on BUILD itself it rewrites
# BUILD/Testing/Temporary/LastTest.log, where scripts/ctest-skips.sh reads why the tests of the
# run this test is part of skipped (checked below: the log must be the same after).
. "$(dirname "$0")/../gen/lib.sh"
build=$1 ctest=$2
lastlog=$build/Testing/Temporary/LastTest.log
before=$(cksum <"$lastlog" 2>/dev/null || true)
(cd "$build" && find . -name CTestTestfile.cmake) | while read -r f; do
  mkdir -p "$tmp/testfiles/$(dirname "$f")" && cp "$build/$f" "$tmp/testfiles/$f"
done
"$ctest" --test-dir "$tmp/testfiles" --show-only=json-v1 >"$tmp/tests.json"
[ "$(cksum <"$lastlog" 2>/dev/null || true)" = "$before" ] ||
  fail "the ctest listing rewrote $lastlog (ctest-skips.sh would lose the skip reasons)"
python3 - "$tmp/tests.json" <<'PY'
import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
need = {"MGEN_TEST_KERNELS=unset:", "MGEN_TEST_QUICK=unset:"}
checked, bad = 0, []
for t in tests:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    labels = props.get("LABELS", [])
    cmd = t.get("command") or []
    if "gpu" not in labels or not cmd or cmd[0].endswith("/sh"):
        continue
    if any(c.endswith("python3") or c.endswith(".py") for c in cmd):
        continue  # the Python test does not read them
    checked += 1
    have = set(props.get("ENVIRONMENT_MODIFICATION", []))
    if not need <= have:
        bad.append(f"{t['name']}: ENVIRONMENT_MODIFICATION {sorted(have)} lacks {sorted(need - have)}")
if bad:
    sys.exit("gpu_unnarrowed: GPU tests that a caller's environment can narrow:\n  " + "\n  ".join(bad))
if checked == 0:
    sys.exit("gpu_unnarrowed: no GPU test program is registered (is CUDA off?)")
print(f"gpu_unnarrowed: {checked} GPU test programs run whole")
PY
