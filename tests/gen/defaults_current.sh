#!/usr/bin/env bash
# defaults_current.sh LUA ROOT -- templates/mma/defaults.lua (the default kernel set) is what
# bench/sweep_select.lua picks from the committed sweeps its header names (its "inputs:" line,
# files in bench/results/, and its cover tolerance): run again on them, the selection must come out
# the same. Refresh with `lua5.4 bench/sweep_select.lua --wgmma templates/wgmma/defaults.lua
# bench/results/SWEEP.csv.xz ... > templates/mma/defaults.lua`, the sweeps in the order of that header
# line (a new one last). Where those sweeps hold Hopper-family kernels and the run picks some,
# templates/wgmma/defaults.lua must be that run's --wgmma file too; where it picks none, the
# wgmma file is not the sweep's (it says so in its header) and is not compared.
. "$(dirname "$0")/lib.sh"
lua=$1 root=$2

cd "$root" || fail "no $root"
header=$(sed -n 's/^-- Cover tolerance \([0-9]*\)%; inputs: \(.*\)\.$/\1 \2/p' templates/mma/defaults.lua)
[ -n "$header" ] || fail "templates/mma/defaults.lua has no '-- Cover tolerance N%; inputs: ...' line"
read -r pct inputs <<<"${header//,/}"
files=()
for f in $inputs; do files+=("bench/results/$f"); done
"$lua" bench/sweep_select.lua --tol "$(awk -v p="$pct" 'BEGIN { print p / 100 }')" \
  --wgmma "$tmp/wgmma_defaults.lua" "${files[@]}" \
  >"$tmp/defaults.lua" 2>"$tmp/log" || fail "sweep_select.lua failed: $(cat "$tmp/log")"
diff templates/mma/defaults.lua "$tmp/defaults.lua" ||
  fail "templates/mma/defaults.lua is not the sweep's selection; refresh it (see this script)"
if [ -f "$tmp/wgmma_defaults.lua" ]; then
  diff templates/wgmma/defaults.lua "$tmp/wgmma_defaults.lua" ||
    fail "templates/wgmma/defaults.lua is not the sweep's selection; refresh it (see this script)"
fi
echo "defaults_current: ok (${#files[@]} sweeps, $(tail -1 "$tmp/log"))"
