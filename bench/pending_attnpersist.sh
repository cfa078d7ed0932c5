#!/bin/sh
# bench/pending_attnpersist.sh (branch attnpersist, seventeenth session; not run: no device this session):
# full (not causal) wgmma attention without a producer warpgroup made persistent, the next tile's first
# K/V stage and its q by TMA issued at the main loop's exit under this tile's epilogue
# (TILEC_ATTN_PERSIST=1: route_pipeline, lib/codegen/tile_prefetch.c, emit_q_tma.c; opt-in; =3 the
# stage alone, =2 persistent alone; bench/RESULTS.md "branch attnpersist" has the prediction).
# 1. correctness with the switch on, against the interpreter: gpu_test_examples' PERSIST variants of
#    cutlass_attn_fwd (=1 at D 64 / 128 / 256, =3 and =2 at D 64 / 128, causal 0 / 1, at the ragged sizes
#    up to (2, 8, 1100), 5 CTAs so each runs several tiles: TILEC_PERSIST_CTAS, the launch's cap), beside
#    `tilec run --device` at D128 full (2, 8, 1100) on 7 CTAs and D256 full (2, 3, 1000) on 5; bench.py's
#    rows (step 2) check =1 at the CTAs that fit (2048 tiles on 264 / 132) against SDPA in fp32.
# 2. bench.py --quick: D128 / D256 full at S 1k / 4k with the default (A), =1 (B), =3 (C), =2 (D), timed
#    A B C D A B C D beside cuDNN and FA2 in one process (D128 S4k: the launch picks the fa3 form for all
#    four, a warp-specialized kernel the switch leaves alone: the noise).  TILEC_LATE_FORMS=0 so D128's fa3
#    form compiles while bench.py holds the switch set.
# A short table last.  About 100 s warm (55 s + 55 s at most).
#   here:   tools/carry.sh build        device: run command="sh bench/pending_attnpersist.sh .carry" carry=[".carry"] timeout_s=180
. bench/pending_env.sh
echo "== 1. correctness, TILEC_ATTN_PERSIST on [$(el) s]"
mkdir -p /tmp/ex_ap && cp examples/attn.tile /tmp/ex_ap/
# (two in parallel, beside the example rounds: at most 55 s in all)
for a in "128 2 8 1100 7" "256 2 3 1000 5"; do set -- $a
  ( TILEC_ATTN_PERSIST=1 TILEC_PERSIST_CTAS=$5 TILEC_CACHE_DIR=/tmp/apr$1$4 timeout 50 $B/tilec run examples/attn.tile \
      --kernel cutlass_attn_fwd -D D=$1 --size Z=$2 --size H=$3 --size S=$4 --scalar scale=0.088 --device > $L/run_$1_$4.log 2>&1
    echo "tilec run PERSIST=1 CTAS=$5 D$1 full Z$2 H$3 S$4: rc $? $(grep -E 'PASS|FAIL' $L/run_$1_$4.log | tr '\n' ' ' | cut -c1-140)" \
      > $L/run_$1_$4.txt ) &
done
GPU_TEST_ATTN_VARIANTS=PERSIST TILEC_CACHE_DIR=/tmp/ape timeout 55 $B/tests/gpu_test_examples /tmp/ex_ap > $L/examples.log 2>&1
echo "examples (PERSIST variants) rc $? [$(el) s]: $(tail -1 $L/examples.log)"
grep -E "^FAIL" $L/examples.log | head -5
wait; cat $L/run_*.txt
echo "== 2. bench [$(el) s]"
K="cutlass_attn_fwd,cutlass_attn_fwd@TILEC_ATTN_PERSIST=1,cutlass_attn_fwd@TILEC_ATTN_PERSIST=3,cutlass_attn_fwd@TILEC_ATTN_PERSIST=2"
TILEC_LATE_FORMS=0 BENCH_ATTN_NO_TRITON=1 TILEC_CACHE_DIR=/tmp/apb timeout 55 python3 bench/bench.py --lib $B/libtilec.so.0.1 --quick \
  --only attn --attn-cases 128:1024:0,256:1024:0,128:4096:0,256:4096:0 \
  --attn-kernels "$K,$K" > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -E "\| cuDNN \|" $L/bench.log | awk -F' [|] ' '{printf "%-52s %-18s %7s %16s %7s %8s\n", $1, $2, $3, $4, $7, $8}'
grep -E "FAILED|Error|error" $L/bench.log | head -5
