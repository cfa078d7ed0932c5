#!/bin/sh
# bench/pending_kpitch.sh (branch kpitch, seventeenth session; not run: no device this session): the
# cp.async ring's 8- / 4-byte copies for a tensor whose row pitch is 8- or 4-byte aligned, not 16
# (TILEC_NARROW_COPY=1, lib/codegen/emit_narrow_copy.c, opt-in; docs/pipelines.md "Narrow copies").
# 1. correctness, the switch on and off: tests/gpu/test_narrow_copy.py (fp64 reference, NaN-poisoned
#    storage and outputs, K = 4100 / 4098 / 4097 / 4099 / 100, offset views, M = 5 / 61 / 130 / 300, gemm and
#    linear + GELU), beside gpu_test_alignment under TILEC_NARROW_COPY=1 (every example kernel against
#    the interpreter on odd layouts; its pitch+4-offset4 / pitch+2-offset2 cases take the narrow copies)
#    and compute-sanitizer memcheck / racecheck of `tilec run` at K = 4100 / 4098 under the switch.
# 2. bench/kpitch_probe.py: 61x4000x4100, 128x4096x4100, 4096x4096x4100, the switch off / on beside
#    cuBLAS, and A copied to a 16-byte pitch then the TMA kernel.  About 100 s warm.
#   here:   tools/carry.sh build        device: run command="sh bench/pending_kpitch.sh .carry" carry=[".carry"]
. bench/pending_env.sh
echo "== 1. correctness [$(el) s]"
TILEC_NARROW_COPY=1 TILEC_CACHE_DIR=/tmp/ckpa timeout 55 $B/tests/gpu_test_alignment examples > $L/alignment.log 2>&1 &
AL=$!
# compute-sanitizer on the no-TMA forms under the switch (tilec run: interpreter vs GPU on compact tensors,
# A's rows 8200 / 8196 bytes): memcheck (no piece reads past A's end), racecheck (the ring's order)
for c in "memcheck 61 4100" "memcheck 300 4098" "racecheck 61 4100"; do set -- $c
  ( TILEC_NARROW_COPY=1 TILEC_CACHE_DIR=/tmp/ckps$1$2 timeout 50 compute-sanitizer --tool $1 $B/tilec run examples/gemm.tile \
      --size M=$2 --size N=200 --size K=$3 --device > $L/san_$1_$2_$3.log 2>&1
    echo "$1 M=$2 N=200 K=$3: rc $? $(grep -E 'SUMMARY|PASS|FAIL' $L/san_$1_$2_$3.log | tr '\n' ' ' | cut -c1-160)" > $L/san_$1_$2_$3.txt ) &
done
TILEC_CACHE_DIR=/tmp/ckpc timeout 55 python3 tests/gpu/test_narrow_copy.py --lib $B/libtilec.so > $L/narrow.log 2>&1
RC=$?
wait $AL; RCA=$?
wait
cat $L/san_*.txt
echo "test_narrow_copy rc $RC: $(tail -1 $L/narrow.log)"
grep -E "^FAIL|Error|error" $L/narrow.log | head -8
echo "gpu_test_alignment (TILEC_NARROW_COPY=1) rc $RCA: $(tail -1 $L/alignment.log)"
grep -E "^FAIL" $L/alignment.log | head -5
echo "== 2. bench [$(el) s]"
TILEC_CACHE_DIR=/tmp/ckpb timeout 50 python3 bench/kpitch_probe.py --rounds 3 > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -E "FAIL|Error|error" $L/bench.log | head -5
grep -E "^\|" $L/bench.log
