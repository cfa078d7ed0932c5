#!/bin/sh
# bench/rows8_call2.sh CARRY_DIR: branch rows8's second call: persistent row CTAs that prefetch their own next
# tile into L2 (TILEC_ROW_STREAM_L2=1, stages=2) against the default and the register ring (stages=2).
set -u
C=$(cd "${1:-.carry-rows8}" && pwd); B=$C/b; T=$C/tree; L=${OUT:-/tmp/rows8}; mkdir -p "$L"
export LD_LIBRARY_PATH=$B PYTHONUNBUFFERED=1
cd "$T"
FUSED_ONLY=softmax FUSED_COLS=32768 FUSED_SWEEP="softmax f32 2048x32768" FUSED_TAGS="ROW_STREAM_L2,stages=2 (row" TILEC_CACHE_DIR=/tmp/c-l2 timeout 60 \
  python3 bench/bench.py --lib $B/libtilec.so --only fused --quick > $L/l2.log 2>&1
echo "bench exit $?"
grep -E "^fused: copy" $L/l2.log; grep -E "^fused .*of copy BW" $L/l2.log | sed 's/ (eager .*//; s/ of a same-size copy, [0-9]* GB.s)/)/' | cut -c1-170
