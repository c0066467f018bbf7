#!/usr/bin/env bash
# device_steps.sh -- sourced by the device scripts of bench/patches/ (land-device.sh,
# w4a8-device.sh): their step runner and their OUT packing. The sourcing script sets
# `out` (its log folder) and `status` (0; a failed run sets it to 1).
# shellcheck disable=SC2034,SC2154 # out and status are the sourcing script's

# run NAME LOG COMMAND...: the command's rc, its seconds and the log's summary lines.
run() {
  local name=$1 log=$out/$2 start rc
  shift 2
  start=$(date +%s)
  "$@" >"$log" 2>&1
  rc=$?
  echo "$name: rc=$rc $(($(date +%s) - start)) s"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|kernels tested|routes equal|checks|tests passed|quantize = import|FAIL" \
    "$log" | tail -4
  [ "$rc" = 0 ] || status=1
}

# pack NAME: everything in OUT into OUT/NAME.tar.xz (the device tool brings back at most 8 files).
pack() {
  (cd "$out" && files=(*) && [ -e "${files[0]}" ] && tar cJf "$1.tar.xz" --remove-files -- "${files[@]}") || true
}
