#!/usr/bin/env bash
# bench_layer_cli.sh BENCH_LAYER VERSION -- bench_layer's command line without a GPU: the
# cli.h conventions, every refusal (exit 2 before CUDA), the models' GEMM shapes and KV cache
# sizes against issue 50's figures (--print-shapes needs no device), and a valid command line
# ending with exit 1 and a message naming the missing device, having written nothing.
# CUDA_VISIBLE_DEVICES is emptied, so this holds on a GPU machine too.
. "$(dirname "$0")/../gen/lib.sh"
bench=$1 version=$2
export CUDA_VISIBLE_DEVICES=

expect_std_options "$bench" "$version"
expect_usage_error "unknown option '--bogus'" "$bench" --bogus
expect_usage_error "unexpected argument 'extra'" "$bench" --m 1 extra
expect_usage_error "--m needs a number from 1 to 256, not '0'" "$bench" --m 0
expect_usage_error "--m needs a number from 1 to 256, not '257'" "$bench" --m 1,257
expect_usage_error "--m needs a number from 1 to 256, not 'x'" "$bench" --m=x
expect_usage_error "--m needs a comma-separated list" "$bench" --m 1,,16
expect_usage_error "missing value for option '--m'" "$bench" --m
fmts=gc,g32,g64,g128,nvfp4,mxfp4,u4_gc,u4_g32,u4_g64,u4_g128,all
expect_usage_error "--fmt needs one of $fmts, not 'zz'" "$bench" --fmt zz
expect_usage_error "--fmt needs one of $fmts, not 'g16'" "$bench" --fmt g128,g16
expect_usage_error "--fmt needs one of $fmts, not 'u4b8/g128'" "$bench" --fmt u4b8/g128
expect_usage_error "--model needs one of llama3-8b,llama3-70b-tp4,all, not 'llama3-70b'" "$bench" --model llama3-70b
expect_usage_error "--act needs one of f16,bf16,all, not 'f32'" "$bench" --act f32
expect_usage_error "--trigger needs one of start,end,both, not 'middle'" "$bench" --trigger middle
expect_usage_error "--mode needs one of events,graph,both, not 'replay'" "$bench" --mode replay
expect_usage_error "--ctx needs a number from 1 to 131072, not '0'" "$bench" --ctx 0
expect_usage_error "--ctx needs a number from 1 to 131072, not '131073'" "$bench" --ctx 131073
expect_usage_error "--layers needs a number from 1 to 64, not '0'" "$bench" --layers 0
expect_usage_error "--layers needs a number from 1 to 64, not '65'" "$bench" --layers 65
expect_usage_error "--reps needs a number from 1 to 10000, not '0'" "$bench" --reps 0
expect_usage_error "--warmup needs a number from 0 to 10000, not '-1'" "$bench" --warmup=-1
expect_usage_error "option takes no value '--print-shapes=1'" "$bench" --print-shapes=1

# The shapes: issue 50's GEMMs (NxK: out_features x in_features) and the KV cache of --ctx
# tokens, 2 (K, V) x KV heads x 128 x ctx x 2 bytes: 8 heads for 8B, 8 / 4 for 70B at TP 4.
capture "$bench" --print-shapes
expect_rc 0 "bench_layer --print-shapes"
expect_in "$out" "llama3-8b: hidden 4096, qkv 6144x4096, o 4096x4096, gate_up 28672x4096, down 4096x14336, kv cache 4194304 bytes per layer at ctx 1024" "llama3-8b's shapes"
expect_in "$out" "llama3-70b-tp4: hidden 8192, qkv 2560x8192, o 8192x2048, gate_up 14336x8192, down 8192x7168, kv cache 1048576 bytes per layer at ctx 1024" "llama3-70b-tp4's shapes"
[ "$(wc -l <<<"$out")" -eq 2 ] || fail "bench_layer --print-shapes: expected 2 lines, got: $out"
[ -z "$err" ] || fail "bench_layer --print-shapes printed on stderr: $err"
capture "$bench" --print-shapes --model llama3-70b-tp4 --ctx 4096
expect_rc 0 "bench_layer --print-shapes --model llama3-70b-tp4 --ctx 4096"
[ "$out" = "llama3-70b-tp4: hidden 8192, qkv 2560x8192, o 8192x2048, gate_up 14336x8192, down 8192x7168, kv cache 4194304 bytes per layer at ctx 4096" ] ||
  fail "bench_layer --print-shapes --model llama3-70b-tp4 --ctx 4096 printed: $out"

# Valid command lines reach the device check: exit 1, the reason, and no CSV file.
for args in "" "--fmt nvfp4,mxfp4 --act all --m 1,64 --trigger start --mode graph" "--fmt all --model llama3-8b"; do
  # shellcheck disable=SC2086 # split on purpose
  capture "$bench" $args --csv "$tmp/layer.csv"
  expect_rc 1 "bench_layer $args without a device"
  expect_in "$err" "bench_layer: " "bench_layer $args without a device"
  case "$err" in
    *"no CUDA device here"* | *"CUDA cannot start here"*) ;;
    *) fail "bench_layer $args without a device: expected the device named, got: $err" ;;
  esac
  [ ! -e "$tmp/layer.csv" ] || fail "bench_layer $args without a device wrote $tmp/layer.csv"
done
echo "bench_layer_cli: ok"
