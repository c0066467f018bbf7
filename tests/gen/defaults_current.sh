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
# sweep_select.lua writes OUT/<family>/defaults.lua into folders that must exist
family_dirs() {
  local spec family
  for spec in templates/*/spec.lua; do
    family=${spec#templates/}
    mkdir -p "$1/${family%/spec.lua}"
  done
}
family_dirs "$tmp/out"
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
# templates/mma/defaults_w4a8.lua (the sm89 W4A8 keys the wgmma family does not take): its
# f16 lists are sweep_select.lua's picks for those keys from the runs its comments name (one
# run of them all: each key's rows come from one of them; the run writes every key of them,
# only the file's are compared); bf16's are derived in the file.
w4a8=templates/mma/defaults_w4a8.lua
mapfile -t sweeps < <(grep -o 'bench/results/[a-z0-9-]*\.csv\.xz' "$w4a8" | awk '!seen[$0]++')
[ "${#sweeps[@]}" -gt 0 ] || fail "$w4a8 names no bench/results/*.csv.xz"
sweep="${sweeps[*]}"
family_dirs "$tmp/w4a8"
"$lua" bench/sweep_select.lua --out "$tmp/w4a8" "${sweeps[@]}" 2>"$tmp/log_w4a8" ||
  fail "sweep_select.lua on $sweep failed: $(cat "$tmp/log_w4a8")"
cat >"$tmp/cmp_w4a8.lua" <<'LUA'
  local file, picked = dofile(arg[1]), dofile(arg[2])
  local compared = 0
  for key, names in pairs(file) do
    if not key:match("^bf16_") then
      local want = picked[key] or {}
      if table.concat(names, " ") ~= table.concat(want, " ") then
        io.stderr:write(key .. ": the file has " .. table.concat(names, ", ") ..
                        "; the sweep picks " .. table.concat(want, ", ") .. "\n")
        os.exit(1)
      end
      compared = compared + 1
    end
  end
  if compared == 0 then io.stderr:write("no key compared\n"); os.exit(1) end
LUA
"$lua" "$tmp/cmp_w4a8.lua" "$w4a8" "$tmp/w4a8/mma/defaults.lua" 2>"$tmp/cmp_w4a8" ||
  fail "$w4a8 is not $sweep's selection: $(cat "$tmp/cmp_w4a8")"
echo "defaults_current: ok (${#files[@]} sweeps, $(tail -1 "$tmp/log")); $w4a8 ok"
