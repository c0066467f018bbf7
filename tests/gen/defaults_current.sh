#!/usr/bin/env bash
# defaults_current.sh LUA ROOT -- templates/mma/defaults.lua (the default kernel set) is what
# bench/sweep_select.lua picks from the committed sweeps: bench/sweep-h200.csv.xz (every
# configuration), bench/sweep-h200-decode8.csv.xz (the 8-row swapped tiles, M <= 16) and
# bench/sweep-h200-decode-v23.csv.xz (every 8- and 16-row configuration, the 256-deep ones
# included, M <= 128, on v22's templates; its times replace the older ones of those kernels).
# Refresh with:
#   lua5.4 bench/sweep_select.lua bench/sweep-h200.csv.xz bench/sweep-h200-decode8.csv.xz \
#     bench/sweep-h200-decode-v23.csv.xz > templates/mma/defaults.lua
. "$(dirname "$0")/lib.sh"
lua=$1 root=$2

cd "$root" || fail "no $root"
"$lua" bench/sweep_select.lua bench/sweep-h200.csv.xz bench/sweep-h200-decode8.csv.xz \
  bench/sweep-h200-decode-v23.csv.xz >"$tmp/defaults.lua" 2>"$tmp/log" ||
  fail "sweep_select.lua failed: $(cat "$tmp/log")"
diff templates/mma/defaults.lua "$tmp/defaults.lua" ||
  fail "templates/mma/defaults.lua is not the sweep's selection; refresh it (see this script)"
echo "defaults_current: ok ($(tail -1 "$tmp/log"))"
