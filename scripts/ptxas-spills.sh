#!/usr/bin/env bash
# ptxas-spills.sh LOG... -- which kernels a build spilled to local memory, from its log. ptxas
# says so only when asked, and a spill in a kernel's main loop or stream-K sum costs time that no
# test sees (bench/notes/v63.md: a default wgmma tile 8% slower than its twin, 166 bytes spilled).
#
#   cmake -S . -B build-audit -G Ninja -DCMAKE_BUILD_TYPE=Release \
#     -DCMAKE_CUDA_FLAGS="-Xptxas -warn-spills -Xptxas -warn-lmem-usage"
#   cmake --build build-audit 2>&1 | tee audit.log; scripts/ptxas-spills.sh audit.log
#
# Prints one line per kernel that ptxas reported, "NAME<tab>STORES<tab>LOADS<tab>STACK" (bytes of
# spill stores, spill loads and stack frame; each the largest over the architectures one nvcc
# call compiled it for), the most spill stores first, then "ptxas-spills: N kernels spill, M more
# use a stack frame". NAME is the kernel's configuration (mgen_...): the first name of the mangled
# symbol. With --fail exits 1 where any kernel spills; exits 2 on a usage error or an unreadable
# LOG, and where no LOG line comes from ptxas at all and --expect-ptxas is given (a log of a build
# that compiled nothing proves nothing).
set -euo pipefail
fail=0 expect=0
logs=()
for a in "$@"; do
  case $a in
    --fail) fail=1 ;;
    --expect-ptxas) expect=1 ;;
    -*) echo "ptxas-spills: unknown option $a" >&2; exit 2 ;;
    *) logs+=("$a") ;;
  esac
done
[ ${#logs[@]} -gt 0 ] || { echo "usage: ptxas-spills.sh [--fail] [--expect-ptxas] LOG..." >&2; exit 2; }
for f in "${logs[@]}"; do
  if [ ! -r "$f" ] || [ ! -f "$f" ]; then echo "ptxas-spills: cannot read $f" >&2; exit 2; fi
done

tab=$(printf '\t')
table=$(mktemp)
trap 'rm -f "$table"' EXIT
# kernel(): the symbol's first name, _ZN<length><name>..., or the whole symbol where it is not
# mangled so.
awk -v expect="$expect" '
  function kernel(sym,   n, rest) {
    if (match(sym, /^_ZN[0-9]+/)) {
      n = substr(sym, 4, RLENGTH - 3) + 0
      rest = substr(sym, RLENGTH + 1)
      if (n > 0 && n <= length(rest)) return substr(rest, 1, n)
    }
    return sym
  }
  function symbol(line,   s) {
    s = line
    sub(/^[^\047]*\047/, "", s)
    sub(/\047.*$/, "", s)
    return s
  }
  function bytes(line, what,   s) {  # the number before " bytes <what>"
    s = line
    if (!match(s, "[0-9]+ bytes " what)) return -1
    s = substr(s, RSTART)
    return s + 0
  }
  /ptxas/ { seen = 1 }
  /ptxas warning *: Registers are spilled to local memory in function \047/ {
    k = kernel(symbol($0)); names[k] = 1
    v = bytes($0, "spill stores"); if (v > st[k]) st[k] = v
    v = bytes($0, "spill loads"); if (v > ld[k]) ld[k] = v
    next
  }
  /ptxas warning *: Local memory used for function \047/ {
    k = kernel(symbol($0)); names[k] = 1
    s = $0; sub(/.*size of stack frame: */, "", s); v = s + 0
    if (v > fr[k]) fr[k] = v
  }
  END {
    if (expect && !seen) {
      print "ptxas-spills: no line of these logs comes from ptxas (did the build compile any kernel?)" > "/dev/stderr"
      exit 2
    }
    for (k in names) printf "%s\t%d\t%d\t%d\n", k, st[k] + 0, ld[k] + 0, fr[k] + 0
  }
' "${logs[@]}" >"$table" || exit $?
sort -t "$tab" -k2,2nr -k1,1 "$table"
spill=$(awk -F '\t' '$2 + $3 > 0' "$table" | wc -l)
stack=$(awk -F '\t' '$2 + $3 == 0' "$table" | wc -l)
echo "ptxas-spills: $spill kernels spill, $stack more use a stack frame"
[ "$fail" = 1 ] && [ "$spill" -gt 0 ] && exit 1
exit 0
