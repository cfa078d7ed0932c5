#!/bin/sh
# bench/pending_rope3.sh: the call rope3 (fifteenth session) owes for TILEC_STAGED_DOUBLE=1 (built after
# its two device calls, not run on a GPU yet; bench/RESULTS.md "branch rope3"): cutlass_attn_rope_fwd with
# two staged slots and no ring barrier in the TMA form, against the interpreter at the ragged sizes
# (gpu_test_examples' staged-double variant), racecheck (D64 / D128, causal and full), then the attnrope
# bench at S 1k / 4k beside the default (the late refill) and TILEC_LATE_REFILL=0.  Predicted:
# staged-double 1.00-1.05x the default at D128, 1.00-1.03x at D64.  About 80 s warm (limits 25 + 60 + 80 s).
#   here:   tools/carry.sh
#   device: run command="sh bench/pending_rope3.sh .carry" carry=[".carry"] timeout_s=240
. bench/pending_env.sh
mkdir -p /tmp/ex_r3 && cp examples/attn_rope.tile /tmp/ex_r3/
# canary: one launch alone first, at the place gpu_test_examples' attn_rope process seemed to stop twice
# (D128 full staged-double, (1, 3, 127): two k-steps) -- most likely the output buffer's lost 4 KB hid
# the rope-producer variant's hang after it (branch pendcheck), but a hang here must not cost the call
echo "== 0. canary: staged-double D128 full (1, 3, 127), 25 s at most [$(el) s]"
TILEC_STAGED_DOUBLE=1 TILEC_CACHE_DIR=/tmp/r3c timeout -k 5 25 $B/tilec run examples/attn_rope.tile --kernel cutlass_attn_rope_fwd \
  -D D=128 -D CAUSAL=0 --size Z=1 --size H=3 --size S=127 --scalar scale=0.088 --device > $L/r3_canary.log 2>&1
RC=$?
echo "canary rc $RC: $(grep -E 'PASS|FAIL|error' $L/r3_canary.log | tr '\n' ' ' | cut -c1-200)"
if [ $RC -eq 124 ] || [ $RC -eq 137 ]; then echo "HANG: staged-double D128 did not finish in 25 s; nothing else launched"; exit 1; fi
echo "== 1. staged-double against the interpreter and racecheck [$(el) s]"
# (the four racecheck runs in parallel: in a row, 4 x 80 s, they held the bench back past the script's limit)
for a in "128 1" "64 0" "64 1" "128 0"; do set -- $a
  ( TILEC_STAGED_DOUBLE=1 TILEC_CACHE_DIR=/tmp/r3s$1$2 timeout -k 10 60 compute-sanitizer --tool racecheck $B/tilec run examples/attn_rope.tile \
      --kernel cutlass_attn_rope_fwd -D D=$1 -D CAUSAL=$2 --size Z=1 --size H=2 --size S=300 --scalar scale=0.088 --device > $L/r3_san_$1_$2.log 2>&1
    echo "racecheck staged-double D$1 causal $2 S300: rc $? $(grep -E 'SUMMARY|FAIL|PASS' $L/r3_san_$1_$2.log | tr '\n' ' ' | cut -c1-200)" \
      > $L/r3_san_$1_$2.txt ) &
done
GPU_TEST_VARIANTS_ONLY=1 GPU_TEST_ATTN_VARIANTS=STAGED_DOUBLE TILEC_CACHE_DIR=/tmp/r3e timeout -k 10 60 $B/tests/gpu_test_examples /tmp/ex_r3 > $L/r3_examples.log 2>&1
echo "examples rc $? [$(el) s]: $(tail -1 $L/r3_examples.log)"
grep -E "^FAIL" $L/r3_examples.log | head -5
wait; cat $L/r3_san_*.txt
echo "== 2. bench [$(el) s]"
BENCH_ROPE_NO_MMA=1 BENCH_ROPE_FORMS="staged-double,late-refill off" TILEC_CACHE_DIR=/tmp/r3b timeout -k 10 80 python3 bench/bench.py --lib $B/libtilec.so.0.1 \
  --only attnrope --quick --rope-s 1024,4096 > $L/r3_bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -E "^attn rope .* ms;" $L/r3_bench.log | sed -E 's/rel.err.*//'
grep -E "FAILED|Error|error|Traceback" $L/r3_bench.log | head -5
echo "[all: $(el) s]"
