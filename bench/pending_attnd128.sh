#!/bin/sh
# bench/pending_attnd128.sh (branch attnd128, nineteenth session; not run: no device this session):
# FlashAttention-3's form at D256 with K and V of a ring stage on mbarriers of their own
# (TILEC_ATTN_KV_SPLIT=1, lib/codegen/emit_ws.c "K and V apart", default off; =2 the same form with
# K and V released together), bench/RESULTS.md "branch attnd128" has the prediction.
# 1. correctness against the interpreter: gpu_test_examples' KV_SPLIT variants (fa3 + split at BN 128
#    for D 64 / 128 up to (2, 8, 1100): 144 tiles, a persistent CTA runs two; at the example's BN with
#    D 256 (the 2-stage ring); the default kernel's fa3 forms (D128, D256 under the switch) at every S;
#    =2 at D 256; causal 0 / 1, ragged sizes); `tilec run --device` D256 fa3 + split full on 5
#    persistent CTAs (24 tiles: the phase bits across many tiles), causal (2, 8, 1100), D128's form +
#    split at 4097, D256 fa3 + split + q by TMA full (5 CTAs) and causal; racecheck of D256 fa3 + split
#    full and causal at S 300.  Every one PASS, 0 hazards.
# 2. bench.py --quick beside cuDNN and FA2 in one process: D256 at S 1k / 4k / 16k, full and causal, the
#    default (A), fa3 + split (B), fa3 on the 2-stage ring without the split (C), fa3 + split with q by
#    TMA from the producer (D, TILEC_ATTN_Q_TMA=1: attn8's, never run yet), timed A B C D D C B A;
#    then D128 S 4k full, 16k full and causal (the fa3 form's range), the default (A) against the default
#    with the split in its fa3 form (B, TILEC_LATE_FORMS=0 so the form compiles under the switch), A B B A.
# A short table last.  About 150 s warm (70 + 55 + 30 at most).
#   here:   tools/carry.sh build        device: run command="sh bench/pending_attnd128.sh .carry" carry=[".carry"] timeout_s=200
. bench/pending_env.sh
echo "== 1. correctness [$(el) s]"
mkdir -p /tmp/exd && cp examples/attn.tile /tmp/exd/
GPU_TEST_ATTN_VARIANTS=KV_SPLIT TILEC_CACHE_DIR=/tmp/kve timeout 70 $B/tests/gpu_test_examples /tmp/exd > $L/examples.log 2>&1 &
E=$!
trun() { # tag D causal Z H S [env...]: fa3 + split under tilec run --device against the interpreter
  t=$1 D=$2 c=$3 z=$4 h=$5 s=$6; shift 6
  env TILEC_ATTN_KV_SPLIT=1 "$@" TILEC_CACHE_DIR=/tmp/kvr$t timeout 60 $B/tilec run examples/attn.tile --kernel cutlass_attn_fwd \
    -D D=$D -D CAUSAL=$c --size Z=$z --size H=$h --size S=$s --scalar scale=0.0625 --device > $L/run_$t.log 2>&1
  echo "tilec run $t D$D causal $c ($z, $h, $s) $*: rc $? $(grep -E 'PASS|FAIL' $L/run_$t.log | tr '\n' ' ' | cut -c1-120)" \
    > $L/run_$t.txt
}
san() { # tag causal S: racecheck of D256 fa3 + split (TMA form, one tile a CTA at H 3)
  TILEC_ATTN_WS=fa3 TILEC_ATTN_KV_SPLIT=1 TILEC_CACHE_DIR=/tmp/kvs$1 timeout 70 compute-sanitizer --tool racecheck $B/tilec run \
    examples/attn.tile --kernel cutlass_attn_fwd -D D=256 -D CAUSAL=$2 --size Z=1 --size H=3 --size S=$3 --scalar scale=0.0625 \
    --device > $L/san_$1.log 2>&1
  echo "racecheck D256 fa3+split causal $2 S$3: rc $? $(grep -E 'SUMMARY|FAIL|PASS' $L/san_$1.log | tr '\n' ' ' | cut -c1-140)" > $L/san_$1.txt
}
san f 0 300 & S1=$!
san c 1 300 & S2=$!
trun persist 256 0 1 3 1000 TILEC_ATTN_WS=fa3 TILEC_PERSIST_CTAS=5 & R1=$!
trun causal 256 1 2 8 1100 TILEC_ATTN_WS=fa3 & R2=$!
trun form128 128 0 1 1 4097 & R3=$!
trun qtma 256 0 1 3 1000 TILEC_ATTN_WS=fa3 TILEC_ATTN_Q_TMA=1 TILEC_PERSIST_CTAS=5 & R4=$!
trun qtmac 256 1 1 3 1000 TILEC_ATTN_WS=fa3 TILEC_ATTN_Q_TMA=1 & R5=$!
wait $E; echo "examples (KV_SPLIT variants) rc $? [$(el) s]: $(tail -1 $L/examples.log)"
grep -E "^FAIL" $L/examples.log | head -5
wait $S1 $S2 $R1 $R2 $R3 $R4 $R5; cat $L/run_*.txt $L/san_*.txt
echo "== 2. bench [$(el) s]"
A=cutlass_attn_fwd; Bk="cutlass_attn_fwd@TILEC_ATTN_WS=fa3@TILEC_ATTN_KV_SPLIT=1"; Ck="cutlass_attn_fwd@TILEC_ATTN_WS=fa3@TILEC_ATTN_KV_SPLIT=2"
Dk="$Bk@TILEC_ATTN_Q_TMA=1"
BENCH_ATTN_NO_TRITON=1 TILEC_CACHE_DIR=/tmp/kvb timeout 60 python3 bench/bench.py --lib $B/libtilec.so.0.1 --quick --only attn \
  --attn-cases 256:1024:0,256:1024:1,256:4096:0,256:4096:1,256:16384:0,256:16384:1 \
  --attn-kernels "$A,$Bk,$Ck,$Dk,$Dk,$Ck,$Bk,$A" > $L/bench256.log 2>&1
echo "bench D256 rc $? [$(el) s]"
TILEC_LATE_FORMS=0 BENCH_ATTN_NO_TRITON=1 TILEC_CACHE_DIR=/tmp/kvb2 timeout 30 python3 bench/bench.py --lib $B/libtilec.so.0.1 --quick \
  --only attn --attn-cases 128:4096:0,128:16384:0,128:16384:1 \
  --attn-kernels "$A,$A@TILEC_ATTN_KV_SPLIT=1,$A@TILEC_ATTN_KV_SPLIT=1,$A" > $L/bench128.log 2>&1
echo "bench D128 rc $? [$(el) s]"
grep -hE "FAILED|Error|error" $L/bench256.log $L/bench128.log | head -5
echo "== table: x cuDNN (same run; rel. err last), A default, B fa3 + TILEC_ATTN_KV_SPLIT=1, C fa3 + =2, D B + q by TMA (D128: B the default with =1)"
grep -hE "\| cuDNN \|" $L/bench256.log $L/bench128.log | awk -F' [|] ' '{printf "%-62s %-18s %7s %16s %7s %8s\n", $1, $2, $3, $4, $7, $8}'
