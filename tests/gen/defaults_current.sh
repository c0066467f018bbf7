#!/usr/bin/env bash
# defaults_current.sh LUA ROOT -- each family's default kernel set (templates/<family>/
# defaults.lua) is what bench/sweep_select.lua picks from the committed sweeps the mma file's
# header names (its "inputs:" line, files in bench/results/, and its cover tolerance): run again
# on them, the selection must come out the same. Refresh with `lua5.4 bench/sweep_select.lua
# --out templates bench/results/SWEEP.csv.xz ...`, the sweeps in the order of that header line
# (a new one last). A family whose kernels the run picks must have that run's file; one it picks
# none of keeps a file that is not the sweep's (it says so in its header) and is not compared.
. "$(dirname "$0")/lib.sh"
lua=$1 root=$2

cd "$root" || fail "no $root"
header=$(sed -n 's/^-- Cover tolerance \([0-9]*\)%; inputs: \(.*\)\.$/\1 \2/p' templates/mma/defaults.lua)
[ -n "$header" ] || fail "templates/mma/defaults.lua has no '-- Cover tolerance N%; inputs: ...' line"
read -r pct inputs <<<"${header//,/}"
files=()
for f in $inputs; do files+=("bench/results/$f"); done
for spec in templates/*/spec.lua; do
  family=${spec#templates/}
  mkdir -p "$tmp/out/${family%/spec.lua}"
done
"$lua" bench/sweep_select.lua --tol "$(awk -v p="$pct" 'BEGIN { print p / 100 }')" \
  --out "$tmp/out" "${files[@]}" 2>"$tmp/log" || fail "sweep_select.lua failed: $(cat "$tmp/log")"
[ -f "$tmp/out/mma/defaults.lua" ] || fail "sweep_select.lua picked no mma kernel"
for picked in "$tmp"/out/*/defaults.lua; do
  [ -f "$picked" ] || continue
  family=${picked%/defaults.lua}
  family=${family##*/}
  diff "templates/$family/defaults.lua" "$picked" ||
    fail "templates/$family/defaults.lua is not the sweep's selection; refresh it (see this script)"
done
echo "defaults_current: ok (${#files[@]} sweeps, $(tail -1 "$tmp/log"))"
