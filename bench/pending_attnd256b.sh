#!/bin/sh
# bench/pending_attnd256b.sh (branch attnd256b, twentieth session; not run: no device this session):
# FlashAttention-3's hdim-256 main loop on tilec's D256 fa3 form: no turns between the consumer
# warpgroups (TILEC_ATTN_TURNS=0, emit_ws.c "Turns", default off; FA3's UseSchedulerBarrier is off
# above hdim 128) and O's rescale at the issue (TILEC_ATTN_OVERLAP=3, built in the fifteenth session,
# lost at D128 *inside* the turns; FA3's RescaleOBeforeGemm above hdim 128).  bench/RESULTS.md "branch
# attnd256b" has the prediction.
# 1. correctness against the interpreter, every fa3 kernel compiled without turns: gpu_test_examples'
#    KV_SPLIT variants under TILEC_ATTN_TURNS=0 (fa3 at BN 128 for D 64 / 128 up to (2, 8, 1100), D 256
#    on its 2-stage ring, the default kernel's forms picked at every S, =2; causal 0 / 1, ragged);
#    `tilec run --device`: D256 full on 5 persistent CTAs (24 tiles: phases across tiles with neither
#    warpgroup held back by the other), the same with OVERLAP=3, causal (2, 8, 1100) with OVERLAP=3,
#    D128's form at 4097; racecheck of D256 without turns, full and causal, at S 300.  Every one PASS,
#    0 hazards.
# 2. bench.py --quick beside cuDNN in one process: D256 at S 1k / 4k / 16k, full and causal: A the
#    default, B TURNS=0, C TURNS=0 + OVERLAP=3 (FA3's loop), D OVERLAP=3 alone (the turns kept), timed
#    A B C D D C B A; then D128 S 4k / 16k full, 16k causal: A, B, C, C B A (FA3 keeps its turns there).
# A short table last.  About 100 s warm (45 + 35 + 20).
#   here:   tools/carry.sh build        device: run command="sh bench/pending_attnd256b.sh .carry" carry=[".carry"] timeout_s=180
. bench/pending_env.sh
echo "== 1. correctness [$(el) s]"
mkdir -p /tmp/exe && cp examples/attn.tile /tmp/exe/
TILEC_ATTN_TURNS=0 GPU_TEST_ATTN_VARIANTS=KV_SPLIT TILEC_CACHE_DIR=/tmp/tfe timeout -k 10 70 $B/tests/gpu_test_examples /tmp/exe \
  > $L/examples.log 2>&1 &
E=$!
trun() { # tag D causal Z H S [env...]: the fa3 form without turns under tilec run --device against the interpreter
  t=$1 D=$2 c=$3 z=$4 h=$5 s=$6; shift 6
  env TILEC_ATTN_TURNS=0 TILEC_ATTN_WS=fa3 "$@" TILEC_CACHE_DIR=/tmp/tfr$t timeout -k 10 60 $B/tilec run examples/attn.tile \
    --kernel cutlass_attn_fwd -D D=$D -D CAUSAL=$c --size Z=$z --size H=$h --size S=$s --scalar scale=0.0625 --device > $L/run_$t.log 2>&1
  echo "tilec run $t D$D causal $c ($z, $h, $s) TURNS=0 $*: rc $? $(grep -E 'PASS|FAIL' $L/run_$t.log | tr '\n' ' ' | cut -c1-120)" \
    > $L/run_$t.txt
}
san() { # tag causal S: racecheck of D256 fa3 without turns (TMA form, one tile a CTA at H 3)
  TILEC_ATTN_TURNS=0 TILEC_ATTN_WS=fa3 TILEC_CACHE_DIR=/tmp/tfs$1 timeout -k 10 70 compute-sanitizer --tool racecheck $B/tilec run \
    examples/attn.tile --kernel cutlass_attn_fwd -D D=256 -D CAUSAL=$2 --size Z=1 --size H=3 --size S=$3 --scalar scale=0.0625 \
    --device > $L/san_$1.log 2>&1
  echo "racecheck D256 fa3 TURNS=0 causal $2 S$3: rc $? $(grep -E 'SUMMARY|FAIL|PASS' $L/san_$1.log | tr '\n' ' ' | cut -c1-140)" \
    > $L/san_$1.txt
}
san f 0 300 & S1=$!
san c 1 300 & S2=$!
trun persist 256 0 1 3 1000 TILEC_PERSIST_CTAS=5 & R1=$!
trun persist3 256 0 1 3 1000 TILEC_PERSIST_CTAS=5 TILEC_ATTN_OVERLAP=3 & R2=$!
trun causal3 256 1 2 8 1100 TILEC_ATTN_OVERLAP=3 & R3=$!
trun form128 128 0 1 1 4097 & R4=$!
wait $E; echo "examples (KV_SPLIT variants, TURNS=0) rc $? [$(el) s]: $(tail -1 $L/examples.log)"
grep -E "^FAIL" $L/examples.log | head -5
wait $S1 $S2 $R1 $R2 $R3 $R4; cat $L/run_*.txt $L/san_*.txt
echo "== 2. bench [$(el) s]"
A=cutlass_attn_fwd; Bk="$A@TILEC_ATTN_TURNS=0"; Ck="$A@TILEC_ATTN_TURNS=0@TILEC_ATTN_OVERLAP=3"; Dk="$A@TILEC_ATTN_OVERLAP=3"
BENCH_ATTN_NO_TRITON=1 TILEC_CACHE_DIR=/tmp/tfb timeout -k 10 60 python3 bench/bench.py --lib $B/libtilec.so.0.1 --quick --only attn \
  --attn-cases 256:1024:0,256:1024:1,256:4096:0,256:4096:1,256:16384:0,256:16384:1 \
  --attn-kernels "$A,$Bk,$Ck,$Dk,$Dk,$Ck,$Bk,$A" > $L/bench256.log 2>&1
echo "bench D256 rc $? [$(el) s]"
BENCH_ATTN_NO_TRITON=1 TILEC_CACHE_DIR=/tmp/tfb2 timeout -k 10 40 python3 bench/bench.py --lib $B/libtilec.so.0.1 --quick \
  --only attn --attn-cases 128:4096:0,128:16384:0,128:16384:1 --attn-kernels "$A,$Bk,$Ck,$Ck,$Bk,$A" > $L/bench128.log 2>&1
echo "bench D128 rc $? [$(el) s]"
grep -hE "FAILED|Error|error" $L/bench256.log $L/bench128.log | head -5
echo "== table: x cuDNN (same run; rel. err last): A default, B TILEC_ATTN_TURNS=0, C B + TILEC_ATTN_OVERLAP=3, D OVERLAP=3 alone"
grep -hE "\| cuDNN \|" $L/bench256.log $L/bench128.log | awk -F' [|] ' '{printf "%-62s %-18s %7s %16s %7s %8s\n", $1, $2, $3, $4, $7, $8}'
