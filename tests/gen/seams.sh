#!/usr/bin/env bash
# seams.sh MARLIN_GEN SOURCE_ROOT -- a kernel family reads only its own folder, the common
# partials and the format partials: every kernel of the committed snapshot (generated/kernels)
# includes "<folder>/..." only from its own family's folder or formats/, and every
# templates/<family>/*.lua requires only its own modules or the shared ones (formats,
# formats.*, common.*, default_set, devices). A family borrowing another's partials fails here,
# as does an engine (gen/lua) that names a family or an access kind a family declares, and a
# family spelling a device's shared memory (templates/devices.lua's). (CONTRIBUTING.md's family
# bullet: tests/scripts/readme_adding.sh.)
. "$(dirname "$0")/lib.sh"
root=$2
families=$(cd "$root/templates" && for s in */spec.lua; do echo "${s%/spec.lua}"; done)
[ -n "$families" ] || fail "no templates/<family>/spec.lua under $root"

n=0
for f in "$root"/generated/kernels/*.cu; do
  name=${f##*/}
  family=$(sed -n 's/^\/\/ k\.family *= "\(.*\)"$/\1/p' "$f")
  [ -n "$family" ] || fail "$name: no k.family in its banner"
  sed -n 's/^#include "\([^"/]*\)\/.*"$/\1/p' "$f" | sort -u >"$tmp/folders"
  while read -r folder; do
    [ "$folder" = "$family" ] || [ "$folder" = formats ] || [ "$folder" = mgen ] ||
      fail "$name ($family family) includes from $folder/: another family's partials"
  done <"$tmp/folders"
  n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no kernels in $root/generated/kernels"

for family in $families; do
  for lua in "$root/templates/$family"/*.lua; do
    sed -n 's/.*require("\([^"]*\)").*/\1/p' "$lua" >"$tmp/requires"
    while read -r module; do
      case "$module" in
        "$family".* | formats | formats.* | common.* | default_set | devices) ;;
        *) fail "${lua#"$root"/} requires '$module': another family's module" ;;
      esac
    done <"$tmp/requires"
  done
done
# The devices' shared-memory sizes are written once, in templates/devices.lua: no family's
# Lua spells one (as "<KiB> * 1024" or in bytes).
sizes=$(sed -n 's/.*smem_block = \([0-9]*\) \* 1024, smem_sm = \([0-9]*\) \* 1024.*/\1 \2/p' \
  "$root/templates/devices.lua")
[ -n "$sizes" ] || fail "templates/devices.lua: no smem_block / smem_sm rows"
for kib in $sizes; do
  for lua in "$root"/templates/*/*.lua; do
    if grep -nE "(^|[^0-9])($kib \* 1024|$((kib * 1024)))([^0-9]|$)" "$lua" >"$tmp/where"; then
      fail "${lua#"$root"/} spells a device's shared memory ($kib KiB) instead of reading templates/devices.lua: $(cat "$tmp/where")"
    fi
  done
done

# The generator's engine (gen/lua) knows no family: neither a family's name nor an access kind
# a family's shared-memory model declares (templates/<family>/smem.lua, its M.kinds) appears
# in its code (comments aside).
for f in "$root"/gen/lua/*.lua; do sed 's/--.*$//' "$f"; done >"$tmp/engine.lua"
words=$families
for model in "$root"/templates/*/smem.lua; do
  words+=" $(sed -n '/^M\.kinds = {/,/^}/s/^  \([a-z_][a-z0-9_]*\) = {.*/\1/p' "$model")"
done
for w in $words; do
  if grep -qw -- "$w" "$tmp/engine.lua"; then
    grep -nw -- "$w" "$root"/gen/lua/*.lua >"$tmp/where" || true
    fail "gen/lua names '$w', a family or one of its declared access kinds: $(cat "$tmp/where")"
  fi
done
echo "seams: $n kernels, families: $(echo $families); engine names none of: $(echo $words)"
