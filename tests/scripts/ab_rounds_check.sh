#!/usr/bin/env bash
# ab_rounds_check.sh ROOT -- bench/ab_rounds.sh's ab_rounds, what run_ab_device.sh and
# run_tree_ab_device.sh do once their variants are built, with stand-in bench_gemm programs (no
# GPU): the rounds' rows land in ab.csv under their variant and round, even rounds in reverse
# order; a variant whose bench_gemm fails stops the A/B (exit 1), except, with AB_ABLATION=1, a
# failure of the sanity check alone (bench_gemm exit 1, its CSV written): an ablation's wrong
# values on purpose.
. "$(dirname "$0")/../gen/lib.sh"
root=$1

# A stand-in bench_gemm: writes a one-row CSV to --csv's path with its own time, then exits with
# RC after printing MSG (bench_gemm's words for a failed sanity check, or any other failure).
stand_in() { # NAME TIME RC MSG
  cat >"$tmp/$1" <<SH
#!/usr/bin/env bash
while [ \$# -gt 0 ]; do [ "\$1" = --csv ] && csv=\$2; shift; done
printf 'gpu,act,fmt,kernel,M,K,N,mgen_us\nG,f16,u4b8_g128,k,1,64,64,$2\n' >"\$csv"
echo "$4" >&2
exit $3
SH
  chmod +x "$tmp/$1"
}
stand_in good 10 0 ""
stand_in ablated 5 1 "bench_gemm: 1 rows failed the sanity check"
stand_in broken 7 1 "bench_gemm: cudaMalloc failed"

# Two rounds of base (the good stand-in) against NEW, in a shell whose environment `env` ENV...
# sets: ab_rounds reads AB_ABLATION from it.
rounds() { # NEW ENV...
  local new=$1
  shift
  capture env "$@" bash -c ". '$root/bench/ab_rounds.sh'; ab_rounds '$tmp/out' 2 0 base='$tmp/good' new='$new' -- --m 1"
}

mkdir "$tmp/out"
rounds "$tmp/good" -u AB_ABLATION
expect_rc 0 "two good variants"
want="variant,round,gpu,act,fmt,kernel,M,K,N,mgen_us
base,1,G,f16,u4b8_g128,k,1,64,64,10
new,1,G,f16,u4b8_g128,k,1,64,64,10
new,2,G,f16,u4b8_g128,k,1,64,64,10
base,2,G,f16,u4b8_g128,k,1,64,64,10"
[ "$(cat "$tmp/out/ab.csv")" = "$want" ] || fail "ab.csv of two good variants:"$'\n'"$(cat "$tmp/out/ab.csv")"

# Without AB_ABLATION a failed sanity check stops the A/B.
rounds "$tmp/ablated" -u AB_ABLATION
expect_rc 1 "a variant failing the sanity check, AB_ABLATION unset"
expect_in "$out" "failed the sanity check" "the failing variant's log tail"

# With AB_ABLATION=1 its rows count, with a line saying so.
rounds "$tmp/ablated" AB_ABLATION=1
expect_rc 0 "an ablated variant with AB_ABLATION=1"
expect_in "$out" "new: sanity check failed as an ablation may (AB_ABLATION=1)" "the ablation's line"
rows=$(grep -c '^new,' "$tmp/out/ab.csv")
[ "$rows" = 2 ] || fail "AB_ABLATION=1 kept $rows rows of the ablated variant, expected 2"
expect_in "$(cat "$tmp/out/ab.csv")" "new,1,G,f16,u4b8_g128,k,1,64,64,5" "the ablated variant's time"

# Any other failure still stops it, AB_ABLATION or not.
rounds "$tmp/broken" AB_ABLATION=1
expect_rc 1 "a variant failing otherwise, AB_ABLATION=1"
expect_in "$out" "cudaMalloc failed" "the broken variant's log tail"
# bench_moe (a variant program named so) writes its CSV on stdout, its messages on stderr: the
# rows land in ab.csv as bench_gemm's do, the messages in the run's log; a failure stops the A/B.
moe_stand_in() { # DIR TIME RC
  mkdir -p "$tmp/$1"
  cat >"$tmp/$1/bench_moe" <<SH
#!/usr/bin/env bash
for a in "\$@"; do [ "\$a" = --csv ] && { echo "bench_moe: unknown option --csv" >&2; exit 2; }; done
printf 'scenario,m,part,kernel,us,graph_us\nqwen3,1,gate_up,k,$2,1\n'
echo "bench_moe: ran \$*" >&2
exit $3
SH
  chmod +x "$tmp/$1/bench_moe"
}
moe_stand_in moe-base 8 0
moe_stand_in moe-new 6 0
moe_stand_in moe-broken 6 1
capture bash -c ". '$root/bench/ab_rounds.sh'; ab_rounds '$tmp/out' 2 0 base='$tmp/moe-base/bench_moe' new='$tmp/moe-new/bench_moe' -- --m 1"
expect_rc 0 "two bench_moe variants"
want="variant,round,scenario,m,part,kernel,us,graph_us
base,1,qwen3,1,gate_up,k,8,1
new,1,qwen3,1,gate_up,k,6,1
new,2,qwen3,1,gate_up,k,6,1
base,2,qwen3,1,gate_up,k,8,1"
[ "$(cat "$tmp/out/ab.csv")" = "$want" ] || fail "ab.csv of two bench_moe variants:"$'\n'"$(cat "$tmp/out/ab.csv")"
expect_in "$(cat "$tmp/out/ab-new-1.log")" "bench_moe: ran --m 1" "bench_moe's stderr in its log"
capture bash -c ". '$root/bench/ab_rounds.sh'; ab_rounds '$tmp/out' 2 0 base='$tmp/moe-base/bench_moe' new='$tmp/moe-broken/bench_moe' -- --m 1"
expect_rc 1 "a failing bench_moe variant"
echo "ab_rounds_check: ok"
