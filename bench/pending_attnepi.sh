#!/bin/sh
# bench/pending_attnepi.sh (branch attnepi, twentieth session; not run: no device this session): the
# fa3 form's O epilogue through q's shared slot and a TMA store (TILEC_ATTN_O_TMA=1, default off;
# lib/codegen/emit_o_tma.c, docs/pipelines.md "O by a TMA store"): each consumer warpgroup's 64 rows
# of O by st.shared into q's slot, fence.proxy.async, bar.sync 7 + w, one thread's D/64 UTMASTG boxes,
# wait_group.read 0, then "q empty" (count 2).  bench/RESULTS.md "branch attnepi" has the prediction.
# 1. correctness against the interpreter, every kernel compiled with TILEC_ATTN_O_TMA=1:
#    gpu_test_examples' fa3 variants (BN 128 and the example's BN, D 64 / 128 / 256, causal 0 / 1,
#    ragged sizes) and TILEC_ATTN_FORM_MIN_S=1 (the default kernel's fa3 form at every S, D128 / D256);
#    `tilec run --device`: (2, 8, 1100) full and causal at D128 / D256 (ragged last tile: rows past S
#    clipped by the copy engine), D128 / D256 full on 5 persistent CTAs (several tiles a CTA: the slot
#    shared by O and the next q across tiles), D128 at 4097; racecheck D128 full on 1 CTA (3 tiles)
#    and causal at S 300.  Every one PASS, 0 hazards.
# 2. bench.py --quick beside cuDNN in one process: the default kernel (A) and A@TILEC_ATTN_O_TMA=1
#    (O), timed A O O A, D128 S 1k / 4k full, 4k causal; D256 S 1k / 4k full, 4k causal (the fa3 form
#    at these S).  A short table last.  About 120 s warm.
#   here:   tools/carry.sh build        device: run command="sh bench/pending_attnepi.sh .carry" carry=[".carry"] timeout_s=180
. bench/pending_env.sh
echo "== 1. correctness [$(el) s]"
mkdir -p /tmp/exe && cp examples/attn.tile /tmp/exe/
TILEC_ATTN_O_TMA=1 GPU_TEST_VARIANTS_ONLY=1 GPU_TEST_ATTN_VARIANTS=fa3,FORM_MIN_S TILEC_CACHE_DIR=/tmp/tfe \
  timeout -k 10 80 $B/tests/gpu_test_examples /tmp/exe > $L/examples.log 2>&1 &
E=$!
trun() { # tag D causal Z H S [env...]: the fa3 form with O by TMA under tilec run --device against the interpreter
  t=$1 D=$2 c=$3 z=$4 h=$5 s=$6; shift 6
  env TILEC_ATTN_O_TMA=1 TILEC_ATTN_WS=fa3 "$@" TILEC_CACHE_DIR=/tmp/tfr$t timeout -k 10 60 $B/tilec run examples/attn.tile \
    --kernel cutlass_attn_fwd -D D=$D -D CAUSAL=$c --size Z=$z --size H=$h --size S=$s --scalar scale=0.0625 --device > $L/run_$t.log 2>&1
  echo "tilec run $t D$D causal $c ($z, $h, $s) O_TMA=1 $*: rc $? $(grep -E 'PASS|FAIL' $L/run_$t.log | tr '\n' ' ' | cut -c1-120)" \
    > $L/run_$t.txt
}
san() { # tag causal S [env...]: racecheck of D128 fa3 with O by TMA
  t=$1 c=$2 s=$3; shift 3
  env TILEC_ATTN_O_TMA=1 TILEC_ATTN_WS=fa3 "$@" TILEC_CACHE_DIR=/tmp/tfs$t timeout -k 10 70 compute-sanitizer --tool racecheck \
    $B/tilec run examples/attn.tile --kernel cutlass_attn_fwd -D D=128 -D CAUSAL=$c --size Z=1 --size H=3 --size S=$s \
    --scalar scale=0.0625 --device > $L/san_$t.log 2>&1
  echo "racecheck D128 fa3 O_TMA=1 causal $c S$s $*: rc $? $(grep -E 'SUMMARY|FAIL|PASS' $L/san_$t.log | tr '\n' ' ' | cut -c1-140)" \
    > $L/san_$t.txt
}
san f 0 300 TILEC_PERSIST_CTAS=1 & S1=$!
san c 1 300 & S2=$!
trun f128 128 0 2 8 1100 & R1=$!
trun c128 128 1 2 8 1100 & R2=$!
trun f256 256 0 2 8 1100 & R3=$!
trun c256 256 1 2 8 1100 & R4=$!
trun p128 128 0 1 3 1000 TILEC_PERSIST_CTAS=5 & R5=$!
trun p256 256 0 1 3 1000 TILEC_PERSIST_CTAS=5 & R6=$!
trun s4097 128 0 1 1 4097 & R7=$!
wait $E; echo "examples (fa3 + FORM_MIN_S variants, O_TMA=1) rc $? [$(el) s]: $(tail -1 $L/examples.log)"
grep -E "^FAIL" $L/examples.log | head -5
wait $S1 $S2 $R1 $R2 $R3 $R4 $R5 $R6 $R7; cat $L/run_*.txt $L/san_*.txt
echo "== 2. bench [$(el) s]"
A=cutlass_attn_fwd; O="$A@TILEC_ATTN_O_TMA=1"
BENCH_ATTN_NO_TRITON=1 TILEC_CACHE_DIR=/tmp/tfb timeout -k 10 70 python3 bench/bench.py --lib $B/libtilec.so.0.1 --quick --only attn \
  --attn-cases 128:1024:0,128:4096:0,128:4096:1,256:1024:0,256:4096:0,256:4096:1 \
  --attn-kernels "$A,$O,$O,$A" > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -hE "FAILED|Error|error" $L/bench.log | head -5
echo "== table: x cuDNN (same run; rel. err last): $A default, @TILEC_ATTN_O_TMA=1 O by TMA (A O O A)"
grep -hE "\| cuDNN \|" $L/bench.log | awk -F' [|] ' '{printf "%-62s %-18s %7s %16s %7s %8s\n", $1, $2, $3, $4, $7, $8}'
echo "[$(el) s]"
