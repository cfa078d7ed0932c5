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
status=0
k=0
for name in $(grep -o '^define void @[A-Za-z0-9_]*' "$W/old.ll" | sed 's/.*@//'); do
  threads=$(grep -o "ptr @$name, !\"maxntidx\", i32 [0-9]*" "$W/old.ll" | awk '{print $NF}')
  # the CTAs of the config (X Y pairs), else rt.c's default
  ctas=$(python3 -c "import json,sys; k=json.load(open(sys.argv[1]))['kernels'][sys.argv[2]]; print(' '.join(f'{x} {y}' for x, y in k.get('ctas', [])))" "$W/cfg.json" "$name")
  grid=$(python3 -c "import json,sys; k=json.load(open(sys.argv[1]))['kernels'][sys.argv[2]]; print(*k.get('grid', [3, 3]))" "$W/cfg.json" "$name")
  export TRACE_GRID="$grid"
  "$W/old.bin" $k $threads $ctas > "$W/old.trace"; "$W/new.bin" $k $threads $ctas > "$W/new.trace"
  if cmp -s "$W/old.trace" "$W/new.trace"; then r=SAME; else r=DIFF; status=1; fi
  echo "$ex $cfg [$*] $name: $r ($(grep -c '^A' "$W/old.trace") asm calls, $(grep -c '^S' "$W/old.trace") shared stores, $threads threads x CTAs ${ctas:-0 0 1 1 2 0})"
  # KEEP_TRACES=PREFIX: keep the traces and the stub ids of each build (PREFIX.KERNEL.{old,new}[.stubs])
  if [ -n "$KEEP_TRACES" ]; then
    for v in old new; do cp "$W/$v.trace" "$KEEP_TRACES.$name.$v"; cp "$W/$v.host.ll.stubs" "$KEEP_TRACES.$name.$v.stubs"; done
  fi
  k=$((k + 1))
done
exit $status
