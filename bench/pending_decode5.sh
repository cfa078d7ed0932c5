#!/bin/sh
# bench/pending_decode5.sh (branch decode5, sixteenth session; not run: no device this session): issue 11
# item 3's short decode cases.  Three mechanisms, each default off:
#   attn_decode_fused (examples/attn_decode.tile): split-KV and its combine in one launch, the last program
#     of a (sequence, KV head) merging the partials after atomic_fetch_add (acq_rel, docs/language.md 7);
#   the 'fill' split rule (bench.py decode_splits): floor(slots / (B * HKV)) splits, one full wave;
#   TILEC_SCRATCH_OVER_RING=1: the peeled last tile's staging over the drained ring (102 KiB a program,
#     two programs an SM, against 120 KiB and one).
# 1. correctness: tests/gpu/test_decode.py (fp64 reference, ragged lengths, NaN past the ends, the fused
#    kernel 20 launches a case on re-poisoned scratch: within tolerance, bit-identical, counts back to 0)
#    with the ring switch off and on, and gpu_test_examples on attn_decode_fused alone (against the interpreter
#    at the ragged rounds, its counts zero before each launch) with the switch on;
# 2. bench.py --only decodeforms: B1 L4k, B1 L32k, B8 L8k, B32 L4k, B1 L128k under five forms (pair / fused,
#    waves / fill, ring 0 / 1), back to back and in a CUDA graph, one process; a table last.
# About 100 s warm.
#   here:   tools/carry.sh build        device: run command="sh bench/pending_decode5.sh .carry" carry=[".carry"]
. bench/pending_env.sh
echo "== 1. correctness [$(el) s]"
for r in 0 1; do
  (TILEC_SCRATCH_OVER_RING=$r TILEC_CACHE_DIR=/tmp/cd5t$r timeout 70 python3 tests/gpu/test_decode.py --lib $B/libtilec.so \
    > $L/test_decode_ring$r.log 2>&1; echo "exit $?" >> $L/test_decode_ring$r.log) &
done
# the fused kernel alone (the file's other kernels ran in every earlier gpu_test_examples; the interpreter is the
# slow part): its text from the example into a file of its own
mkdir -p /tmp/exd5 && sed -n '/^\/\/ attn_decode_fused:/,$p' examples/attn_decode.tile > /tmp/exd5/attn_decode_fused.tile
TILEC_SCRATCH_OVER_RING=1 TILEC_CACHE_DIR=/tmp/cd5e timeout 60 $B/tests/gpu_test_examples /tmp/exd5 > $L/examples.log 2>&1
echo "exit $?" >> $L/examples.log
wait
for r in 0 1; do echo "test_decode ring $r: $(grep -E '^test_decode:|^exit' $L/test_decode_ring$r.log | tr '\n' ' ')"; \
  grep -E "^FAIL" $L/test_decode_ring$r.log | head -4; done
echo "gpu_test_examples attn_decode_fused (ring 1): $(grep -c '^PASS' $L/examples.log) PASS, $(grep -c '^FAIL' $L/examples.log) FAIL, $(tail -1 $L/examples.log)"
grep -E "^FAIL" $L/examples.log | head -4
echo "== 2. bench [$(el) s]"
TILEC_CACHE_DIR=/tmp/cd5b timeout 55 python3 bench/bench.py --lib $B/libtilec.so.0.1 --only decodeforms --quick > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -E "WRONG|COUNTS|Error|error" $L/bench.log | head -5
sed -n '/^## decode forms/,/^$/p' $L/bench.log
