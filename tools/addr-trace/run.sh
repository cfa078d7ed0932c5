#!/bin/bash
# run.sh OLD_TILEC NEW_TILEC EXAMPLE CONFIG [tilec options]: the address traces
# of two tilec builds on one example (docs/testing.md, "Address traces").
# Each tilec runs with LD_LIBRARY_PATH=its directory (copy libtilec.so.0.1
# next to a saved binary).  Needs clang-19.  Prints SAME or DIFF per kernel.
set -e
old=$1; new=$2; ex=$3; cfg=$4; shift 4
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
python3 "$here/configs.py" "$cfg" "$W/cfg.json"
for v in old new; do
  bin=$old; [ $v = new ] && bin=$new
  LD_LIBRARY_PATH=$(dirname "$bin") "$bin" "$root/examples/$ex.tile" "$@" -g0 -O0 --emit=llvm -o "$W/$v.ll"
  python3 "$here/xform.py" "$W/$v.ll" "$W/$v.host.ll" "$W/cfg.json"
  clang-19 -O1 -w "$W/$v.host.ll" "$here/rt.c" -lm -o "$W/$v.bin"
done
threads=$(grep -o 'maxntidx", i32 [0-9]*' "$W/old.ll" | head -1 | awk '{print $NF}')
nk=$(grep -c '^define void @' "$W/old.ll")
status=0
for k in $(seq 0 $((nk - 1))); do
  "$W/old.bin" $k $threads > "$W/old.trace"; "$W/new.bin" $k $threads > "$W/new.trace"
  if cmp -s "$W/old.trace" "$W/new.trace"; then r=SAME; else r=DIFF; status=1; fi
  echo "$ex $cfg [$*] kernel $k: $r ($(grep -c '^A' "$W/old.trace") asm calls, $(grep -c '^S' "$W/old.trace") shared stores, $threads threads x 3 CTAs)"
done
exit $status
