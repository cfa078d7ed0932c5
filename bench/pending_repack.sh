#!/bin/sh
# bench/pending_repack.sh (branch repack, eighteenth session; not run: no device this session): the
# launcher's copy of a read-only operand into a 16-byte pitch (TILEC_PITCH_REPACK=1,
# lib/api/pitch_repack.c, opt-in; docs/runtime.md "Pitch repack"), the TMA kernel then run on the copy.
# 1. correctness, the switch on and off: tests/gpu/test_pitch_repack.py (fp64 reference, NaN-poisoned
#    storage and outputs, gemm at K = 4100 / 4098 / 4102, an offset A, a misaligned B, an aligned
#    control, M = 1 / 61 / 128 / 4096; attention with K's rows 136 bytes apart in one copy and per
#    slice; the program log must name the copy), beside compute-sanitizer memcheck of `tilec run` at
#    300x200x4100 under the switch (interpreter vs GPU; the TMA kernel reads the copy).
# 2. bench/kpitch_probe.py --modes off,repack,pad: 61x4000x4100, 128x4096x4100, 4096x4096x4100 beside
#    cuBLAS: the default (the no-TMA form), the switch on (copy + TMA kernel, the copy timed), and the
#    probe's own pad (gemm alone; copy + gemm).  About 90 s warm.
#   here:   tools/carry.sh build        device: run command="sh bench/pending_repack.sh .carry" carry=[".carry"]
. bench/pending_env.sh
echo "== 1. correctness [$(el) s]"
( TILEC_PITCH_REPACK=1 TILEC_CACHE_DIR=/tmp/crps timeout -k 10 50 compute-sanitizer --tool memcheck $B/tilec run \
    examples/gemm.tile --size M=300 --size N=200 --size K=4100 --device > $L/san_memcheck.log 2>&1
  echo "memcheck M=300 N=200 K=4100 (TILEC_PITCH_REPACK=1): rc $? $(grep -E 'SUMMARY|PASS|FAIL|mismatch' \
    $L/san_memcheck.log | tr '\n' ' ' | cut -c1-200)" > $L/san.txt ) &
TILEC_CACHE_DIR=/tmp/crp timeout -k 10 55 python3 tests/gpu/test_pitch_repack.py --lib $B/libtilec.so > $L/repack.log 2>&1
RC=$?
wait
cat $L/san.txt
echo "test_pitch_repack rc $RC: $(tail -1 $L/repack.log)"
grep -E "^FAIL|Error|error" $L/repack.log | head -8
grep -E "M=4096 N=520 K=4100 A pitch 4100" $L/repack.log | head -2
echo "== 2. bench [$(el) s]"
TILEC_CACHE_DIR=/tmp/crp timeout -k 10 50 python3 bench/kpitch_probe.py --rounds 3 --modes off,repack,pad > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -E "FAIL|Error|error" $L/bench.log | head -5
grep -E "^\|" $L/bench.log
echo "[all: $(el) s]"
