#!/bin/sh
# bench/pending_attnshort.sh (branch attnshort, seventeenth session; not run: no device this session):
# causal attention grids whose last heads (about two waves of CTAs) run heaviest row block first across
# them, so the grid ends with light blocks (TILEC_ATTN_ORDER=1: route_pipeline, lib/codegen/attn_order.c;
# opt-in; bench/RESULTS.md "branch attnshort" has the prediction).
# 1. correctness with the switch on, against the interpreter: gpu_test_examples' ORDER variants of
#    cutlass_attn_fwd (D 64 / 128 / 256 x causal 0 / 1 at the ragged sizes; span 2: the last 2 of 3 heads
#    at (1, 3, 127); span 20: the last 3 of 16 heads at (2, 8, 1100) = 9 x 16 CTAs, also on fa3's one-trip
#    form), beside `tilec run --device` of the default kernel at D128 causal S 2100 (its fa3 form,
#    compiled under the switch), S 1100, and D256 causal.
# 2. bench.py --quick: the S 1k / 4k causal rows at D 64 / 128 / 256 with the default (A), =1 (B), =264
#    (C: one wave at two programs an SM) and =4096 (D: about every head, the L2 test), timed
#    A B C D A B C D beside cuDNN and FA2 in one process, and the D128 S1k / S4k full rows (the same PTX
#    under the switch: the noise).  TILEC_LATE_FORMS=0 so D128 S4k's fa3 form compiles while bench.py
#    holds the switch set (a late form's thread could read the environment after bench.py restored it).
# A short table last.  About 110 s warm (45 s + 65 s at most).
#   here:   tools/carry.sh build        device: run command="sh bench/pending_attnshort.sh .carry" carry=[".carry"] timeout_s=180
. bench/pending_env.sh
echo "== 1. correctness, TILEC_ATTN_ORDER on [$(el) s]"
mkdir -p /tmp/ex_ao && cp examples/attn.tile /tmp/ex_ao/
# (three in parallel, beside the example rounds: at most 45 s in all)
for a in "128 2 3 2100 20" "256 2 8 1000 1" "128 1 3 1100 1"; do set -- $a
  ( TILEC_ATTN_ORDER=$5 TILEC_CACHE_DIR=/tmp/aor$1$4 timeout 40 $B/tilec run examples/attn.tile --kernel cutlass_attn_fwd -D D=$1 \
      -D CAUSAL=1 --size Z=$2 --size H=$3 --size S=$4 --scalar scale=0.088 --device > $L/run_$1_$4.log 2>&1
    echo "tilec run ORDER=$5 D$1 causal Z$2 H$3 S$4: rc $? $(grep -E 'PASS|FAIL' $L/run_$1_$4.log | tr '\n' ' ' | cut -c1-140)" \
      > $L/run_$1_$4.txt ) &
done
GPU_TEST_ATTN_VARIANTS=ORDER TILEC_CACHE_DIR=/tmp/aoe timeout 45 $B/tests/gpu_test_examples /tmp/ex_ao > $L/examples.log 2>&1
echo "examples (ORDER variants) rc $? [$(el) s]: $(tail -1 $L/examples.log)"
grep -E "^FAIL" $L/examples.log | head -5
wait; cat $L/run_*.txt
echo "== 2. bench [$(el) s]"
K="cutlass_attn_fwd,cutlass_attn_fwd@TILEC_ATTN_ORDER=1,cutlass_attn_fwd@TILEC_ATTN_ORDER=264,cutlass_attn_fwd@TILEC_ATTN_ORDER=4096"
TILEC_LATE_FORMS=0 BENCH_ATTN_NO_TRITON=1 TILEC_CACHE_DIR=/tmp/aob timeout 65 python3 bench/bench.py --lib $B/libtilec.so.0.1 --quick \
  --only attn --attn-cases 128:1024:1,128:4096:1,256:1024:1,256:4096:1,64:1024:1,64:4096:1,128:1024:0,128:4096:0 \
  --attn-kernels "$K,$K" > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -E "\| cuDNN \|" $L/bench.log | awk -F' [|] ' '{printf "%-52s %-18s %7s %16s %7s %8s\n", $1, $2, $3, $4, $7, $8}'
grep -E "FAILED|Error|error" $L/bench.log | head -5
