#!/usr/bin/env bash
# limits.sh MARLIN_GEN FIXTURES -- specs and templates run under an instruction and a memory
# limit: an endless loop (in a spec, in a spec function that catches the limit's error with
# pcall, in a template) or an allocating loop ends in exit 1 with a message naming the file,
# and writes nothing. Small limits keep the test fast; --help names both options and their
# defaults, which the real templates stay far below (measured with -v).
. "$(dirname "$0")/lib.sh"
mgen=$1 fixtures=$2
small=(--max-instructions 10000000 --max-memory 64)

# check BAD_FILE TARGET EXPECTED: replacing templates/TARGET with bad/BAD_FILE (a .patch: applying
# it to templates/) ends (well within the ctest timeout) with exit 1 and first stderr line
# "marlin-gen: EXPECTED" (lib.sh's check_bad).
check() { check_bad "$1" "$2" "$3" timeout 60 "$mgen" "${small[@]}"; }

loop="instruction limit of 10000000 reached (an endless loop? --max-instructions N raises it)"
check loop.spec.lua fixture/spec.lua "templates/fixture/spec.lua:3: $loop"
check loop_pcall.spec.patch fixture/spec.lua "templates/fixture/spec.lua:4: $loop"
check loop.cu.tpl fixture/kernel.cu.tpl "templates/fixture/kernel.cu.tpl:3: $loop"
memory="memory limit of 64 MiB reached (--max-memory MB raises it)"
check alloc.spec.lua fixture/spec.lua "templates/fixture/spec.lua: $memory"
check alloc.cu.tpl fixture/kernel.cu.tpl "templates/fixture/kernel.cu.tpl: $memory"

# The fixture runs within the small limits; 0 means no limit.
"$mgen" "${small[@]}" --templates "$fixtures/templates" --out "$tmp/ok"
"$mgen" --max-instructions 0 --max-memory 0 --templates "$fixtures/templates" --out "$tmp/ok0"
capture "$mgen" -v --templates "$fixtures/templates" --out "$tmp/ok_v"
expect_in "$err" "marlin-gen: Lua peak memory" "-v reports the use"

for bad in -1 x 1e3 1048577; do
  expect_usage_error "--max-memory needs a number of MiB" "$mgen" --max-memory "$bad"
done
for bad in -1 x 1.5; do
  expect_usage_error "--max-instructions needs a number" "$mgen" --max-instructions="$bad"
done
capture "$mgen" --help
expect_in "$out" "--max-memory MB" "--help"
expect_in "$out" "--max-instructions N" "--help"
echo "limits: $n cases ok"
