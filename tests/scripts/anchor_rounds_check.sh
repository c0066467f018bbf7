#!/usr/bin/env bash
# anchor_rounds_check.sh ROOT -- bench/anchor_rounds.py (an anchor's time over marlin-gen's,
# the median of rounds per point) and bench/run_anchor_rounds_device.sh (the rounds, in one
# GPU-machine call): v69's committed H100 rounds give v69's figures (bench/notes/v69.md item
# 3) and miss #51's 1.05 where v69 says; hand-made CSVs give known answers (the fastest
# marlin-gen row of a point, the median over rounds, a point one round lacks); bad input exits 2
# with a message; the device script, with stand-ins for bench_gemm and CUTLASS's harness,
# alternates which runs first, passes the anchors' K:N shapes to bench_gemm as NxK and the
# anchors' fp16 spelling, and exits 2 on bad arguments before it runs anything.
. "$(dirname "$0")/../gen/lib.sh"
root=$1
ar=$root/bench/anchor_rounds.py
v=$root/bench/results/anchor-rounds-h100-v69
list() { # list PREFIX: the three rounds' CSVs of v69, comma-separated
  echo "$v/$1-round1.csv.xz,$v/$1-round2.csv.xz,$v/$1-round3.csv.xz"
}

# The real rounds: f16 u4b8 g128 on (K, N) = (28672, 8192), (8192, 8192), (8192, 57344).
capture python3 "$ar" --mgen "$(list mgen)" --anchor "$(list cutlass)" --bar 1.05
expect_rc 1 "v69's rounds against #51's 1.05"
expect_in "$out" "| f16 | u4b8_g128 | 1024 | 0.993 (3) | 0.999 0.955 0.994 |" "v69's M = 1024 row"
expect_in "$out" "| f16 | u4b8_g128 | 2048 | 0.999 (3) | 1.005 0.996 1.007 |" "v69's M = 2048 row"
expect_in "$out" "| f16 | u4b8_g128 | 4096 | 1.093 (3) | 1.086 1.138 1.041 |" "v69's M = 4096 row"
expect_in "$out" "furthest below: f16 u4b8_g128 M 1024 (K 8192, N 57344) 0.946 (0.938 0.946 0.952)" \
  "the worst point and its rounds"
expect_in "$out" "below the bar 1.050: f16 u4b8_g128 M 1024: 0.993; f16 u4b8_g128 M 2048: 0.999" \
  "the Ms below the bar"
capture python3 "$ar" --mgen "$(list mgen)" --anchor "$(list cutlass)" --bar 0.99 --ms 2048,4096
expect_rc 0 "v69's M 2048-4096 against 0.99"
[[ "$out" != *"| 1024 |"* ]] || fail "--ms 2048,4096 printed M = 1024"

# Known answers. Round 1: the point's two marlin-gen rows (the faster, 100 us, counts) against
# 100 us; round 2 120 / 100; round 3 90 / 100: median 1.0. A second point (M = 64) only in
# round 2, at 2.0.
m1=$tmp/m1.csv m2=$tmp/m2.csv m3=$tmp/m3.csv a1=$tmp/a1.csv a2=$tmp/a2.csv a3=$tmp/a3.csv
mrow() { echo "g,$1,u4b8_g128,k,$2,4096,4096,$3"; }
arow() { echo "cutlass_mixed,$1,u4b8_g128,$2,4096,4096,$3,1"; }
mh="gpu,act,fmt,kernel,M,K,N,mgen_us" ah="system,act,fmt,M,K,N,us,cublas_us"
{ echo "$mh"; mrow f16 1024 130; mrow f16 1024 100; } >"$m1"
{ echo "$mh"; mrow f16 1024 100; mrow f16 64 10; } >"$m2"
{ echo "$mh"; mrow f16 1024 100; } >"$m3"
{ echo "$ah"; arow fp16 1024 100; } >"$a1"
{ echo "$ah"; arow fp16 1024 120; arow fp16 64 20; } >"$a2"
{ echo "$ah"; arow fp16 1024 90; } >"$a3"
capture python3 "$ar" --mgen "$m1,$m2,$m3" --anchor "$a1,$a2,$a3" --bar 1.0
expect_rc 0 "the hand-made rounds against 1.0"
expect_in "$out" "| f16 | u4b8_g128 | 64 | 2.000 (1) | - 2.000 - |" "a point of one round"
expect_in "$out" "| f16 | u4b8_g128 | 1024 | 1.000 (1) | 1.000 1.200 0.900 |" "the median of three rounds"
capture python3 "$ar" --mgen "$m1,$m2,$m3" --anchor "$a1,$a2,$a3" --bar 1.01
expect_rc 1 "the hand-made rounds against 1.01"
expect_in "$out" "below the bar 1.010: f16 u4b8_g128 M 1024: 1.000" "the M below 1.01"

# Bad input: exit 2 and a one-line message, never a traceback.
bad() { # bad DESCRIPTION MESSAGE: the last capture exited 2 with MESSAGE
  expect_rc 2 "$1"
  [[ "$err" == anchor_rounds.py:* && "$err" != *Traceback* ]] || fail "$1: stderr '$err'"
  expect_in "$err" "$2" "$1: the message"
}
capture python3 "$ar" --mgen "$m1,$m2" --anchor "$a1"
bad "rounds of unequal count" "2 marlin-gen CSVs but 1 anchor CSVs"
{ cat "$a1"; echo "vllm-marlin,fp16,u4b8_g128,1024,4096,4096,50,1"; } >"$tmp/all.csv"
capture python3 "$ar" --mgen "$m1" --anchor "$tmp/all.csv"
bad "an anchor CSV of two systems" "rows of cutlass_mixed, vllm-marlin: name one with --system"
capture python3 "$ar" --mgen "$m1" --anchor "$tmp/all.csv" --system vllm-marlin
expect_rc 0 "--system picks one"
expect_in "$out" "| f16 | u4b8_g128 | 1024 | 0.500 (1) | 0.500 |" "vLLM's row"
{ echo "$ah"; arow fp16 64 20; } >"$tmp/a64.csv"
capture python3 "$ar" --mgen "$m1" --anchor "$tmp/a64.csv"
bad "no point in common" "no point is in both"
sed 's/,100$/,fast/' "$m1" >"$tmp/nan.csv"
capture python3 "$ar" --mgen "$tmp/nan.csv" --anchor "$a1"
bad "a time that is not a number" "nan.csv:3: mgen_us, M, K or N is not a number"
sed 's/,100,1$/,0,1/' "$a1" >"$tmp/zero.csv"
capture python3 "$ar" --mgen "$m1" --anchor "$tmp/zero.csv"
bad "a zero time" "zero.csv:2: us, M, K or N is not positive"
sed 's/fp16/fp8/' "$a1" >"$tmp/fp8.csv"
capture python3 "$ar" --mgen "$m1" --anchor "$tmp/fp8.csv"
bad "an act the table does not know" "act 'fp8' is none of f16, fp16, bf16"
cut -d, -f1-7 "$m1" >"$tmp/cut.csv"
capture python3 "$ar" --mgen "$tmp/cut.csv" --anchor "$a1"
bad "a CSV without a time column" "cut.csv: no column mgen_us"
{ cat "$a1"; arow fp16 1024 80; } >"$tmp/twice.csv"
capture python3 "$ar" --mgen "$m1" --anchor "$tmp/twice.csv"
bad "a point twice in one anchor CSV" "twice.csv:3: a second row of point"
capture python3 "$ar" --mgen "$tmp/missing.csv" --anchor "$a1"
bad "a CSV that does not exist" "missing.csv"
capture python3 "$ar" --mgen "$m1" --anchor "$a1" --bar -1
bad "a negative bar" "--bar -1: not positive"
capture python3 "$ar" --mgen "$m1" --anchor "$a1" --ms 1,x
bad "an M that is not a number" "--ms 1,x: not a list of integers"
capture python3 "$ar" --mgen "$m1" --anchor "$a1" --bogus 1
bad "an unknown option" "unknown argument --bogus"
capture python3 "$ar" --mgen "$m1" --anchor
bad "an option without its value" "--anchor needs a value"

# The device script with stand-ins: each logs its turn and arguments and writes 100 us
# (marlin-gen) / 110 us (CUTLASS) for every point it is given.
rd=$root/bench/run_anchor_rounds_device.sh
mkdir -p "$tmp/build/bench"
turns=$tmp/turns.log
cat >"$tmp/build/bench/bench_gemm" <<'STUB'
#!/usr/bin/env bash
echo "bench_gemm $*" >>"$TURNS"
while [ $# -gt 0 ]; do
  case $1 in --act) act=$2 ;; --shapes) shapes=$2 ;; --m) ms=$2 ;; --csv) csv=$2 ;; esac
  shift
done
echo "gpu,act,fmt,kernel,M,K,N,mgen_us" >"$csv"
for a in ${act//,/ }; do for s in ${shapes//,/ }; do for m in ${ms//,/ }; do
  echo "g,$a,u4b8_g128,k,$m,${s#*x},${s%x*},100" >>"$csv"
done; done; done
STUB
cat >"$tmp/cutlass.sh" <<'STUB'
#!/usr/bin/env bash
echo "cutlass $*" >>"$TURNS"
while [ $# -gt 0 ]; do
  case $1 in --acts) acts=$2 ;; --shapes) shapes=$2 ;; --ms) ms=$2 ;; esac
  shift
done
mkdir -p "$OUT"
echo "system,act,fmt,M,K,N,us,cublas_us" >"$OUT/cutlass_mixed.csv"
for a in ${acts//,/ }; do for s in ${shapes//,/ }; do for m in ${ms//,/ }; do
  echo "cutlass_mixed,$a,u4b8_g128,$m,${s%:*},${s#*:},110,1" >>"$OUT/cutlass_mixed.csv"
done; done; done
STUB
chmod +x "$tmp/build/bench/bench_gemm" "$tmp/cutlass.sh"
export TURNS=$turns BUILD_DIR=$tmp/build CUTLASS_RUN=$tmp/cutlass.sh
OUT=$tmp/dev ROUNDS=2 capture bash "$rd" --act f16,bf16 --shapes 28672:8192,4096:12288 --ms 1024,4096 --bar 1.05
expect_rc 0 "the stand-ins' rounds (1.1 everywhere) against 1.05"
expect_in "$out" "| bf16 | u4b8_g128 | 4096 | 1.100 (2) | 1.100 1.100 |" "the stand-ins' bf16 row"
expect_in "$out" "| f16 | u4b8_g128 | 1024 | 1.100 (2) | 1.100 1.100 |" "the stand-ins' f16 row"
mapfile -t t <"$turns"
[ "${#t[@]}" = 4 ] || fail "the stand-ins ran ${#t[@]} times, not 4: ${t[*]}"
[[ ${t[0]} == cutlass* && ${t[1]} == bench_gemm* && ${t[2]} == bench_gemm* && ${t[3]} == cutlass* ]] ||
  fail "the rounds do not alternate which runs first: ${t[*]}"
expect_in "${t[0]}" "--acts fp16,bf16 --shapes 28672:8192,4096:12288 --ms 1024,4096 --no-check" \
  "CUTLASS's arguments"
expect_in "${t[1]}" "--act f16,bf16 --fmt g128 --shapes 8192x28672,12288x4096 --m 1024,4096" \
  "bench_gemm's shapes as NxK"
OUT=$tmp/dev2 ROUNDS=1 capture bash "$rd" --shapes 8192:8192 --ms 1024 --bar 1.2
expect_rc 1 "the stand-ins' round against 1.2"
rm -f "$turns"
for args in "--act fp16" "--shapes 4096x4096" "--ms 1,x" "--bar -1" "--bogus 1" "--ms"; do
  # shellcheck disable=SC2086  # the arguments split on purpose
  OUT=$tmp/bad capture bash "$rd" $args
  expect_rc 2 "run_anchor_rounds_device.sh $args"
done
ROUNDS=0 OUT=$tmp/bad capture bash "$rd"
expect_rc 2 "ROUNDS=0"
CUTLASS_RUN=$tmp/none OUT=$tmp/bad capture bash "$rd"
expect_rc 2 "no anchor harness"
expect_in "$err" "cp -r ../shared/anchors anchors" "the missing anchor's message"
if [ -e "$tmp/bad" ] || [ -e "$turns" ]; then fail "a usage error wrote or ran something"; fi
echo "anchor_rounds_check: v69's figures reproduced, known answers, bad input and the rounds' order checked"
