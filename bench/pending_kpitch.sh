#!/bin/sh
# bench/pending_kpitch.sh (branch kpitch, seventeenth session; not run: no device this session): the
# cp.async ring's 8- / 4-byte copies for a tensor whose row pitch is 8- or 4-byte aligned, not 16
# (TILEC_NARROW_COPY=1, lib/codegen/emit_narrow_copy.c, opt-in; docs/pipelines.md "Narrow copies").
# 1. correctness, the switch on and off: tests/gpu/test_narrow_copy.py (fp64 reference, NaN-poisoned
#    storage and outputs, K = 4100 / 4098 / 4097 / 4099 / 100, offset views, M = 5 / 61 / 130 / 300, gemm and
#    linear + GELU), beside gpu_test_alignment under TILEC_NARROW_COPY=1 (every example kernel against
#    the interpreter on odd layouts; its pitch+4-offset4 / pitch+2-offset2 cases take the narrow copies).
# 2. bench/kpitch_probe.py: 61x4000x4100, 128x4096x4100, 4096x4096x4100, the switch off / on beside
#    cuBLAS, and A copied to a 16-byte pitch then the TMA kernel.  About 100 s warm.
#   here:   tools/carry.sh build        device: run command="sh bench/pending_kpitch.sh .carry" carry=[".carry"]
. bench/pending_env.sh
echo "== 1. correctness [$(el) s]"
TILEC_NARROW_COPY=1 TILEC_CACHE_DIR=/tmp/ckpa timeout 55 $B/tests/gpu_test_alignment examples > $L/alignment.log 2>&1 &
AL=$!
TILEC_CACHE_DIR=/tmp/ckpc timeout 55 python3 tests/gpu/test_narrow_copy.py --lib $B/libtilec.so > $L/narrow.log 2>&1
RC=$?
wait $AL; RCA=$?
echo "test_narrow_copy rc $RC: $(tail -1 $L/narrow.log)"
grep -E "^FAIL|Error|error" $L/narrow.log | head -8
echo "gpu_test_alignment (TILEC_NARROW_COPY=1) rc $RCA: $(tail -1 $L/alignment.log)"
grep -E "^FAIL" $L/alignment.log | head -5
echo "== 2. bench [$(el) s]"
TILEC_CACHE_DIR=/tmp/ckpb timeout 50 python3 bench/kpitch_probe.py --rounds 3 > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -E "FAIL|Error|error" $L/bench.log | head -5
grep -E "^\|" $L/bench.log
