#!/bin/sh
# bench/pending_attn8.sh (branch attn8, fifteenth session; not run: no device this session): fa3's q by TMA
# (TILEC_ATTN_Q_TMA=1, lib/codegen/emit_q_tma.c, default off; =2: "q empty" in the last iteration) against the
# interpreter and under racecheck, then D128 S 1k / 2k / 4k full and causal in one process: the two-program
# kernel (TILEC_ATTN_FORM=0), fa3 (BN 128), fa3 + q (=1) and fa3 + q (=2), timed A B C D A B C D (attn7 saw
# 3-6 % from a handle's position), beside cuDNN.
# About 100 s warm (the sanitizers and the four runs beside the example rounds); its limits 75 + 80 s.
#   here:   tools/carry.sh build        device: run command="sh bench/pending_attn8.sh .carry" carry=[".carry"]
. bench/pending_env.sh
echo "== 1. correctness [$(el) s]"
# racecheck: one CTA a tile at S 300 (9 tiles, the last rows ragged), and H 140 S 128 (140 tiles on 132 SMs:
# 8 persistent CTAs take two, so q's slot is refilled under the first tile's end: the q empty / q full turn)
san() { # causal Z H S [mode]: racecheck of fa3 + q (TMA form) under tilec run, against the interpreter
  TILEC_ATTN_WS=fa3 TILEC_ATTN_Q_TMA=${5:-1} TILEC_CACHE_DIR=/tmp/c8s$1$3${5:-1} timeout -k 10 60 compute-sanitizer --tool racecheck $B/tilec run \
    examples/attn.tile --kernel cutlass_attn_fwd -D D=128 -D BN=128 -D CAUSAL=$1 --size Z=$2 --size H=$3 --size S=$4 \
    --scalar scale=0.088 --device > $L/san_$1_$3_$4_${5:-1}.log 2>&1
  echo "racecheck fa3+q=${5:-1} D128 causal $1 Z$2 H$3 S$4: rc $? $(grep -E 'SUMMARY|FAIL|PASS' $L/san_$1_$3_$4_${5:-1}.log | tr '\n' ' ' | cut -c1-160)" > $L/san_$1_$3_$4_${5:-1}.txt
}
san 0 1 3 300 & S1=$!
san 1 1 3 300 & S2=$!
san 0 1 140 128 & S3=$!
san 0 1 140 128 2 & S4=$!
# (GPU_TEST_VARIANTS_ONLY: the variants alone, not the plain rounds of every kernel first) the fa3 variants (BN 128 and the example's BN, D 64 / 128,
# causal 0 / 1, 4097, (2, 8, 1100)) and the form picked at every S (TILEC_ATTN_FORM_MIN_S=1), with the switch
# on (it is in the cache key; D64 and the non-fa3 kernels do not take it: PTX identical, lit ws-fa3-q-tma)
mkdir -p /tmp/ex8 && cp examples/attn.tile /tmp/ex8/
# (the four runs in parallel, beside the examples: in a row they were 160 s of the script's 110)
for m in 1 2; do for c in 0 1; do
  ( TILEC_ATTN_WS=fa3 TILEC_ATTN_Q_TMA=$m TILEC_CACHE_DIR=/tmp/c8r$m$c timeout -k 10 50 $B/tilec run examples/attn.tile --kernel cutlass_attn_fwd \
      -D D=128 -D BN=128 -D CAUSAL=$c --size Z=2 --size H=8 --size S=1100 --scalar scale=0.088 --device --explain > $L/run_$m$c.log 2>&1
    echo "tilec run fa3+q=$m D128 causal $c (2, 8, 1100): rc $? $(grep -E 'PASS|FAIL' $L/run_$m$c.log | tr '\n' ' ' | cut -c1-160) [q by TMA notes: $(grep -c 'q by TMA (TILEC' $L/run_$m$c.log)]" \
      > $L/run_$m$c.txt ) &
done; done
# =2 (the fa3 variants only) beside it
GPU_TEST_VARIANTS_ONLY=1 GPU_TEST_ATTN_VARIANTS=fa3 TILEC_ATTN_Q_TMA=2 TILEC_CACHE_DIR=/tmp/c8e2 timeout -k 10 75 $B/tests/gpu_test_examples /tmp/ex8 \
  > $L/examples2.log 2>&1 &
E2=$!
GPU_TEST_VARIANTS_ONLY=1 GPU_TEST_ATTN_VARIANTS=fa3,ATTN_FORM TILEC_ATTN_Q_TMA=1 TILEC_CACHE_DIR=/tmp/c8e timeout -k 10 75 $B/tests/gpu_test_examples /tmp/ex8 \
  > $L/examples.log 2>&1
RC=$?
wait; cat $L/run_??.txt $L/san_*.txt
echo "examples (=1, fa3 + form variants) rc $RC: $(tail -1 $L/examples.log)"
echo "examples (=2, fa3 variants): $(tail -1 $L/examples2.log)"
grep -E "^FAIL" $L/examples.log $L/examples2.log | head -5
echo "== 2. bench [$(el) s]"
K="cutlass_attn_fwd@TILEC_ATTN_FORM=0,cutlass_attn_fwd@TILEC_ATTN_WS=fa3:BN=128,cutlass_attn_fwd@TILEC_ATTN_WS=fa3@TILEC_ATTN_Q_TMA=1:BN=128"
K="$K,cutlass_attn_fwd@TILEC_ATTN_WS=fa3@TILEC_ATTN_Q_TMA=2:BN=128"
BENCH_ATTN_NO_TRITON=1 TILEC_CACHE_DIR=/tmp/c8b timeout -k 10 80 python3 bench/bench.py --lib $B/libtilec.so.0.1 --only attn \
  --attn-cases 128:1024:0,128:1024:1,128:2048:0,128:2048:1,128:4096:0,128:4096:1 --attn-kernels "$K,$K" > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -E "\| cuDNN \|" $L/bench.log | awk -F' [|] ' '{printf "%-62s %-20s %7s %16s %7s %8s\n", $1, $2, $3, $4, $7, $8}'
grep -E "FAILED|Error|error" $L/bench.log | head -5
echo "[all: $(el) s]"
