#!/usr/bin/env bash
# cli_tools.sh MARLIN_TUNE BENCH_GEMM BENCH_HOST MGEN_DEMO VERSION BENCH_FLOOR BENCH_TUNE_METHOD
# -- the command line of
# marlin-tune and the bench programs (runtime/tools/cli.h) on a machine without a GPU: --help,
# --version, NxK weight shapes, bounded values, and exit codes (0 ok, 1 runtime error, 2 usage
# error). CUDA_VISIBLE_DEVICES is emptied, so a program that reaches CUDA fails with 1 even on
# a GPU machine: every exit 2 below shows that the usage error was found before CUDA.
. "$(dirname "$0")/../gen/lib.sh"
tune=$1 bench=$2 host=$3 demo=$4 version=$5 floor=$6 method=$7
export CUDA_VISIBLE_DEVICES=
unset MGEN_CACHE

# The options every program has.
for program in "$tune" "$bench" "$host" "$demo" "$method"; do
  expect_std_options "$program" "$version"
  expect_usage_error "unknown option '--bogus'" "$program" --bogus
  expect_usage_error "unknown option '-x'" "$program" -x
  expect_usage_error "option takes no value '--version=1'" "$program" --version=1
done

# marlin-tune: NxK shapes (the old N,K is refused, naming the notation), --reps within
# mgen_ctx_set_tune's range, every value checked before a context exists.
cache=$tmp/t.cache
shape_hint="shape needs NxK (N = out_features, K = in_features), not"
expect_usage_error "$shape_hint '12288,4096'" "$tune" 12288,4096 -o "$cache"
expect_usage_error "$shape_hint '4096x'" "$tune" 4096x -o "$cache"
expect_usage_error "$shape_hint '0x4096'" "$tune" 0x4096 -o "$cache"
expect_usage_error "--reps needs a number from 1 to 10000, not '99999'" "$tune" --reps 99999 4096x4096 -o "$cache"
expect_usage_error "--reps needs a number from 1 to 10000, not '99999'" "$tune" --reps=99999 4096x4096 -o "$cache"
expect_usage_error "--reps needs a number from 1 to 10000, not '0'" "$tune" 4096x4096 --reps=0 -o "$cache"
expect_usage_error "missing value for option '--reps'" "$tune" 4096x4096 -o "$cache" --reps
expect_usage_error "missing value for option '-o'" "$tune" 4096x4096 -o
expect_usage_error "unknown option '--rep'" "$tune" --rep 5 4096x4096 -o "$cache"
expect_usage_error "option takes no value '--replace=1'" "$tune" --replace=1 4096x4096 -o "$cache"
expect_usage_error "--fmt needs one of gc,g32,g64,g128,nvfp4,mxfp4,u4_gc,u4_g32,u4_g64,u4_g128,all (or a key such as u4b8/g128), not 'g16'" "$tune" --fmt g128,g16 4096x4096 -o "$cache"
expect_usage_error "--fmt needs one of gc,g32,g64,g128,nvfp4,mxfp4,u4_gc,u4_g32,u4_g64,u4_g128,all (or a key such as u4b8/g128), not 'fe2m1/g32/nvfp4'" "$tune" --fmt fe2m1/g32/nvfp4 4096x4096 -o "$cache"
expect_usage_error "--m needs a comma-separated list" "$tune" --m 1,,2 4096x4096 -o "$cache"
expect_usage_error "--m needs a number from 1 to" "$tune" --m=0 4096x4096 -o "$cache"
expect_usage_error "--act needs one of f16,bf16,e4m3,e4m3bf16, not 'bf17'" "$tune" --act=bf17 4096x4096 -o "$cache"
# --act e4m3 (W4A8): weights in the e4m3 layout (u4b8, u4, MXFP4); a format named that is not
# packed in it is a usage error, one that "all" brings is left out (exit 1 here: past the parser).
expect_usage_error "--act e4m3 (W4A8) tunes weights in the e4m3 layout; not packed in it: 'f16/fe2m1/g16/nvfp4'" \
  "$tune" --act e4m3 --fmt g128,nvfp4 4096x4096 -o "$cache"
expect_usage_error "--act e4m3bf16 (W4A8) tunes weights in the e4m3 layout; not packed in it: 'bf16/fe2m1/g16/nvfp4'" "$tune" --act e4m3bf16 --fmt all,nvfp4 4096x4096 -o "$cache"
for a8 in e4m3 e4m3bf16; do
  capture "$tune" --act $a8 --fmt all 4096x4096 -o "$cache" --m 1
  expect_rc 1 "marlin-tune --act $a8 --fmt all"
done
expect_usage_error "--preset needs one of llama-7b," "$tune" --preset llama-1b -o "$cache"
expect_usage_error "--device needs a number from 0 to" "$tune" --device -1 4096x4096 -o "$cache"
expect_usage_error "no cache file" "$tune" 4096x4096
expect_usage_error "no shapes" "$tune" -o "$cache"
expect_usage_error "missing value for option '--show'" "$tune" --show
# --show FILE and --show=FILE reach tune_show.c (which fails with 1 on a missing file).
for show in "--show $tmp/missing.cache" "--show=$tmp/missing.cache"; do
  # shellcheck disable=SC2086 # split on purpose
  capture "$tune" $show
  expect_rc 1 "marlin-tune $show"
  expect_in "$err" "$tmp/missing.cache" "marlin-tune $show"
done
# --json goes with --show, --show takes no shapes, and --progress and --quiet exclude each other.
expect_usage_error "--json goes with --show FILE: '--json'" "$tune" --json 4096x4096 -o "$cache"
expect_usage_error "--show FILE takes no shapes to tune, not '4096x4096'" "$tune" \
  --show "$tmp/missing.cache" 4096x4096
expect_usage_error "--progress and --quiet exclude each other, not both with '--quiet'" \
  "$tune" --progress --quiet 4096x4096 -o "$cache"
for flags in --progress --quiet "--quiet --quiet"; do
  # shellcheck disable=SC2086 # split on purpose
  capture "$tune" $flags 4096x4096 -o "$cache" --m 1
  expect_rc 1 "marlin-tune $flags without a device (past the parser)"
done
# Valid arguments reach CUDA: here a runtime error (1), and no cache file is written.
capture "$tune" 4096x4096 -o "$cache" --m 1 --reps 5
expect_rc 1 "marlin-tune 4096x4096 without a device"
[ ! -e "$cache" ] || fail "marlin-tune without a device wrote $cache"
# The output path is checked before CUDA, so before any tuning (the first save comes after a
# shape's keys are tuned): exit 1 naming the path and why, with only stat and access.
expect_save_refused() { # PATH WHY [ARGS...]
  local path=$1 why=$2
  shift 2
  capture "$tune" 4096x4096 --m 1 -o "$path" "$@"
  expect_rc 1 "marlin-tune -o $path $*"
  expect_in "$err" "marlin-tune: cannot save to $path: $why" "marlin-tune -o $path $*"
  case "$err" in *mgen_ctx_create*) fail "marlin-tune -o $path reached CUDA: $err" ;; esac
}
expect_save_refused "$tmp" "is a directory"
expect_save_refused /dev/null "is not a regular file"
expect_save_refused "$tmp/none/t.cache" "its directory $tmp/none does not exist"
[ ! -e "$tmp/none" ] || fail "marlin-tune -o $tmp/none/t.cache created $tmp/none"
mkdir "$tmp/ro"
chmod 555 "$tmp/ro"
printf 'mgen-cache 1\n' >"$tmp/unreadable.cache"
chmod 200 "$tmp/unreadable.cache"
if [ ! -w "$tmp/ro" ]; then # not as root, who may write anywhere
  expect_save_refused "$tmp/ro/t.cache" "its directory $tmp/ro is not writable"
  expect_save_refused "$tmp/unreadable.cache" "cannot be read to merge into"
  # --replace does not read the file: past the check, to CUDA.
  capture "$tune" 4096x4096 --m 1 -o "$tmp/unreadable.cache" --replace
  expect_rc 1 "marlin-tune --replace -o an unreadable file"
  expect_in "$err" "mgen_ctx_create" "marlin-tune --replace -o an unreadable file"
else
  echo "cli_tools: as root: the unwritable-directory and unreadable-file cases did not run"
fi
# --fmt takes every format of the format table (templates/formats.lua), by short name or key,
# and all; each is a valid argument (exit 1 here, past the parser), not a usage error (2).
for fmt in gc g32 g64 g128 nvfp4 mxfp4 u4_gc u4_g32 u4_g64 u4_g128 all u4b8/gc u4b8/g32 u4b8/g64 \
           u4b8/g128 fe2m1/g16/nvfp4 fe2m1/g32/mxfp4 u4/gc u4/g128 g128,nvfp4,mxfp4 g128,u4_g128; do
  capture "$tune" --fmt "$fmt" --act bf16 4096x4096 -o "$cache" --m 1
  expect_rc 1 "marlin-tune --fmt $fmt"
done
capture "$tune" --help
expect_in "$out" "nvfp4, mxfp4: fe2m1 schemes" "marlin-tune --help names the fe2m1 formats"
expect_in "$out" "u4_gc,u4_g32,u4_g64,u4_g128: u4 groups" "marlin-tune --help names the u4 formats"

# bench_gemm: --shapes NxK,...; lists and numbers.
expect_usage_error "--shapes needs NxK (N = out_features, K = in_features), not '4096'" "$bench" --shapes 4096,4096
expect_usage_error "--shapes needs NxK" "$bench" --shapes=4096x4096,57344x
expect_usage_error "unknown option '--bogus'" "$bench" --shapes 4096x4096,57344x8192 --bogus
expect_usage_error "--fmt needs one of gc,g32,g64,g128,nvfp4,mxfp4,u4_gc,u4_g32,u4_g64,u4_g128,all, not 'zz'" "$bench" --fmt all,zz
expect_usage_error "--act needs one of f16,bf16,all,e4m3,e4m3bf16, not 'f32'" "$bench" --act f32
expect_usage_error "--reps needs a number from 1 to" "$bench" --reps 0
expect_usage_error "--warmup needs a number from 0 to" "$bench" --warmup=-1
expect_usage_error "--m needs a comma-separated list" "$bench" --m 1,,16
expect_usage_error "unexpected argument 'extra'" "$bench" --quick extra
expect_usage_error "--cold needs a number from 1 to 32" "$bench" --cold 0
expect_usage_error "--cold needs a number from 1 to 32" "$bench" --cold 33
capture "$bench" --quick --shapes 4096x4096 --m 1 --act=f16 --fmt=g128 --cold 16
expect_rc 1 "bench_gemm --cold 16 without a device"
expect_in "$err" "bench_gemm: " "bench_gemm --cold without a device"
capture "$bench" --quick --shapes 4096x4096 --m 1 --act=f16 --fmt=g128
expect_rc 1 "bench_gemm with valid options without a device"
expect_in "$err" "bench_gemm: " "bench_gemm without a device"

# bench_host and mgen_demo.
expect_usage_error "--calls needs a number from 1 to" "$host" --calls x
expect_usage_error "--batches needs a number from 1 to" "$host" --batches=0
expect_usage_error "missing value for option '--calls'" "$host" --calls
expect_usage_error "unexpected argument 'extra'" "$host" --calls 5 extra
expect_usage_error "--m needs a number from 1 to 4096" "$host" --m 0
expect_usage_error "--bytes needs a number from 16 to" "$floor" --bytes x
expect_usage_error "--graph needs a number from 1 to 1000" "$floor" --graph 0
expect_usage_error "unexpected operand 'extra'" "$floor" extra
capture "$floor" --reps 1
expect_rc 1 "bench_floor without a device"
expect_in "$err" "bench_floor: " "bench_floor without a device"
expect_usage_error "--kernels needs two kernel names, A,B; got ''" "$method"
expect_usage_error "--kernels needs two kernel names, A,B; got 'a'" "$method" --kernels a
expect_usage_error "--kernels needs a comma-separated list of at most 2 items" "$method" --kernels a,b,c
long=$(printf 'k%.0s' $(seq 128))
expect_usage_error "--kernels: an item of its list is longer than 127 characters" "$method" --kernels a,$long
# Real kernel names (~45-50 characters) are parsed: the run gets as far as the device.
capture "$method" --kernels mgen_sm90a_f16_u4b8_g128_64x128x64_wg2_s12,mgen_sm80_bf16_fe2m1_g32_64x256x128_s2_w8_sw3x4x4 --rounds 1
expect_rc 1 "bench_tune_method with kernel names, without a device"
expect_in "$err" "bench_tune_method: " "bench_tune_method with kernel names, without a device"
expect_usage_error "--shape needs NxK" "$method" --kernels a,b --shape 4096,4096
expect_usage_error "--m needs a number from 1 to 4096" "$method" --kernels a,b --m 0
capture "$method" --kernels a,b --rounds 1
expect_rc 1 "bench_tune_method without a device"
expect_in "$err" "bench_tune_method: " "bench_tune_method without a device"
expect_usage_error "M needs a number from 1 to" "$demo" abc
expect_usage_error "M needs a number from 1 to" "$demo" 0
expect_usage_error "unexpected argument '17'" "$demo" 16 17
echo "cli_tools: ok"
