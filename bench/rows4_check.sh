#!/bin/sh
# bench/rows4_check.sh CARRY: the GPU check branch rows4 owes (bench/RESULTS.md, branch rows4): the
# final defaults' own forms (rope.tile at BT=1 BH=32, the grid order on, the fallback's blocks at >= 4
# groups) through tests/gpu/rows.sh stage 1 at ragged sizes, beside bench.py --only fused for swiglu
# and rope.  CARRY holds b/ (libtilec.so.0.1, libtilec.so, tilec) and root/ (examples/, bench/,
# tests/gpu/rows.sh of the branch); run on the device as `sh CARRY/root/bench/rows4_check.sh CARRY`.
C=$(cd "${1:?usage: rows4_check.sh CARRY}" && pwd); B=$C/b
export LD_LIBRARY_PATH=$B TILEC_LIBRARY=$B/libtilec.so PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp}
cd $C/root
( TILEC_CACHE_DIR=/tmp/c-rows4 ROWS_STAGE_LIST=1 timeout 50 sh tests/gpu/rows.sh $B > $OUT/rows.log 2>&1; echo "rows rc $?" >> $OUT/rows.log ) &
TILEC_CACHE=0 TILEC_CACHE_DIR=/tmp/c-bench4 FUSED_ONLY=swiglu,rope timeout 50 python3 bench/bench.py --lib $B/libtilec.so.0.1 --only fused --quick > $OUT/bench_rows4.log 2>&1
echo "bench rc $?"
wait
grep -E "FAIL|rows.sh:|rows rc" $OUT/rows.log | tail -8
grep -E "^fused .*copy BW" $OUT/bench_rows4.log | sed -E 's/ \(eager.*err/ err/'
