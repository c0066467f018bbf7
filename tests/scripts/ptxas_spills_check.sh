#!/usr/bin/env bash
# ptxas_spills_check.sh ROOT -- scripts/ptxas-spills.sh on a build log of known answers (lines
# as nvcc 13 prints them under -Xptxas -warn-spills -Xptxas -warn-lmem-usage): the kernel's name
# from the mangled symbol's length prefix (names end in digits, the next name starts with
# them), the largest bytes over a kernel's two architectures, a kernel that only uses a stack
# frame, the order, the summary, --fail, and exit 2 on bad input.
. "$(dirname "$0")/../gen/lib.sh"
root=$1
ps=$root/scripts/ptxas-spills.sh

k1=mgen_sm80_f16_u4_g128_64x256x128_s2_w4_sw3x4x4
k2=mgen_sm90a_f16_u4_g128_128x128x64_wg2_s6
k3=mgen_sm80_bf16_u4b8_gc_64x128x128_s2_w4_sw3x4x4
sym() { echo "_ZN${#1}$1${#2}${2}E16mgen_launch_args"; }
log=$tmp/build.log
{
  echo "[3/25] Building CUDA object runtime/CMakeFiles/mgen_kernels_mma.dir/__/generated/shards/mma_00.cu.o"
  echo "ptxas warning : Local memory used for function '$(sym $k1 ${k1}_kernel)', size of stack frame: 48 bytes"
  echo "ptxas warning : Registers are spilled to local memory in function '$(sym $k1 ${k1}_kernel)', 48 bytes spill stores, 48 bytes spill loads"
  echo "ptxas warning : Local memory used for function '$(sym $k1 ${k1}_kernel)', size of stack frame: 72 bytes"
  echo "ptxas warning : Registers are spilled to local memory in function '$(sym $k1 ${k1}_kernel)', 68 bytes spill stores, 60 bytes spill loads"
  echo "ptxas warning : Local memory used for function '$(sym $k2 ${k2}_kernel)', size of stack frame: 32 bytes"
  echo "ptxas warning : Registers are spilled to local memory in function '$(sym $k2 ${k2}_kernel)', 166 bytes spill stores, 92 bytes spill loads"
  echo "ptxas warning : Local memory used for function '$(sym $k3 ${k3}_kernel)', size of stack frame: 24 bytes"
  echo "ptxas warning : Local memory used for function 'plain_kernel', size of stack frame: 8 bytes"
  echo "ptxas info    : Used 168 registers, used 2 barriers"
} >"$log"

capture bash "$ps" "$log"
expect_rc 0 "a log with spills, without --fail"
want=$(printf '%s\t166\t92\t32\n%s\t68\t60\t72\n%s\t0\t0\t24\n%s\t0\t0\t8\n%s' \
  "$k2" "$k1" "$k3" plain_kernel "ptxas-spills: 2 kernels spill, 2 more use a stack frame")
[ "$out" = "$want" ] || fail "the table: got
$out
want
$want"
capture bash "$ps" --fail "$log"
expect_rc 1 "--fail where kernels spill"

# A log whose kernels do not spill (a stack frame alone is not a spill).
grep -v "spilled" "$log" >"$tmp/nospill.log"
capture bash "$ps" --fail --expect-ptxas "$tmp/nospill.log"
expect_rc 0 "--fail where no kernel spills"
expect_in "$out" "ptxas-spills: 0 kernels spill, 4 more use a stack frame" "the summary without spills"

# Bad input: no log, an unreadable one, an unknown option, a log that ptxas never wrote to.
capture bash "$ps"
expect_rc 2 "no log"
capture bash "$ps" "$tmp/missing.log"
expect_rc 2 "a missing log"
expect_in "$err" "cannot read $tmp/missing.log" "the missing log's message"
capture bash "$ps" --werror "$log"
expect_rc 2 "an unknown option"
echo "[1/1] Linking C executable gen/marlin-gen" >"$tmp/empty.log"
capture bash "$ps" --expect-ptxas "$tmp/empty.log"
expect_rc 2 "--expect-ptxas on a log without ptxas"
capture bash "$ps" "$tmp/empty.log"
expect_rc 0 "the same log without --expect-ptxas"
expect_in "$out" "ptxas-spills: 0 kernels spill, 0 more use a stack frame" "the empty summary"
echo "ptxas_spills_check: ok"
