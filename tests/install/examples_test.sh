#!/usr/bin/env bash
# examples_test.sh MODE BUILD EXAMPLES -- examples/c and examples/cpp build against an install
# of BUILD exactly as their README.md says: `cmake --install BUILD` into a temporary prefix,
# then the first ```sh block of each README runs in a copy of the example's folder with PREFIX
# set to that prefix (continued lines joined); its one `./` line is the program's run:
#   build (cpu): the other lines succeed (pkg-config, or CMake's find_package), and the program,
#     run where CUDA sees no device (CUDA_VISIBLE_DEVICES=""), exits 1 with "no CUDA GPU here"
#     on stderr: the binary loads and fails clearly;
#   run (gpu): the program exits 0 with "ok" (its own check against the CPU passed); where it
#     says there is no GPU and nvidia-smi lists none either, exit 77 (skipped).
# Needs cmake, pkg-config and the C and C++ compilers (scripts/install-deps.sh).
. "$(dirname "$0")/../gen/lib.sh"
mode=$1 build=$2 examples=$3
case $mode in
  build | run) ;;
  *) fail "usage: examples_test.sh build|run BUILD EXAMPLES" ;;
esac
export PREFIX=$tmp/prefix
capture cmake --install "$build" --prefix "$PREFIX"
expect_rc 0 "cmake --install $build"

# readme_block FILE: FILE's first ```sh block, continued lines joined, one command a line.
readme_block() {
  awk '/^```sh$/ { on = 1; next } on && /^```$/ { exit } on' "$1" >"$tmp/block.raw"
  sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$tmp/block.raw"
}

no_gpu=0
for name in c cpp; do
  dir=$tmp/$name
  cp -r "$examples/$name" "$dir"
  readme_block "$dir/README.md" >"$tmp/$name.block"
  grep -v '^\./' "$tmp/$name.block" >"$tmp/$name.build" || true
  grep '^\./' "$tmp/$name.block" >"$tmp/$name.run" || true
  [ -s "$tmp/$name.build" ] && [ "$(wc -l <"$tmp/$name.run")" -eq 1 ] ||
    fail "examples/$name/README.md: its sh block needs build lines and one ./ line:" \
         "$(cat "$tmp/$name.block")"
  capture bash -ec 'cd "$1" && . "$2"' _ "$dir" "$tmp/$name.build"
  expect_rc 0 "examples/$name: README.md's build lines ($(tr '\n' ';' <"$tmp/$name.build"))"
  run=$(cat "$tmp/$name.run")
  if [ "$mode" = build ]; then
    capture env CUDA_VISIBLE_DEVICES= bash -c 'cd "$1" && eval "$2"' _ "$dir" "$run"
    expect_rc 1 "examples/$name: $run without a GPU"
    expect_in "$err" "no CUDA GPU here" "examples/$name: $run without a GPU says so"
    echo "examples/$name: built; without a GPU: $err"
    continue
  fi
  capture bash -c 'cd "$1" && eval "$2"' _ "$dir" "$run"
  if [ "$rc" -eq 1 ] && [[ $err == *"no CUDA GPU here"* ]]; then
    no_gpu_agreed "examples/$name says '$err'"
    no_gpu=$((no_gpu + 1))
    continue
  fi
  expect_rc 0 "examples/$name: $run (stdout: $out)"
  expect_in "$out" "ok" "examples/$name: $run"
  echo "$out"
done
if ((no_gpu == 2)); then
  echo "SKIPPED: no CUDA GPU here"
  exit 77
fi
((no_gpu == 0)) || fail "one example found no GPU, the other ran"
echo "examples_test ($mode): examples/c and examples/cpp built against the install as their" \
     "READMEs say"
