#!/bin/sh
# bench/pending_attnshort2.sh (branch attnshort2, twenty-second session; not run: no device this session):
# fa3's O through the tile's last ring stage (TILEC_ATTN_O_SLOT=1, default off; lib/codegen/emit_o_slot.c,
# docs/pipelines.md "O through the last stage"): "q empty" back at the main loop's exit, so the next
# tile's q loads under this tile's last value dot and epilogue; O's atoms into the last stage's V slot (and
# K slot at D256) after bar.sync 9, 256; the store's thread releases the stage.  bench/RESULTS.md "branch
# attnshort2" has the per-tile model and the prediction.
# 1. correctness against the interpreter, TILEC_ATTN_O_SLOT=1:
#    gpu_test_examples' O_SLOT variant (the default kernel's fa3 form at every S, TILEC_ATTN_FORM_MIN_S=1:
#    D 128 / 256, full and causal, S 1 / 127 / 129 / 1000 / 4097 / (2, 8, 1100)) on 5 persistent CTAs
#    (TILEC_PERSIST_CTAS=5: up to 29 tiles a CTA, the last stage at every ring position);
#    `tilec run --device`: D128 full S 1 / 127 / 1000 / 4097 and D256 full S 127 / 1000 on 5 CTAs, (2, 8,
#    1100) D128 / D256 full at the launch's CTAs, GQA (llama/attn_gqa.tile, CAUSAL=0, H 8 / HKV 2 at
#    S 1000 on 5 CTAs, H 4 / HKV 1 at (2, 1100)); racecheck D128 and D256 full at S 300 on 1 CTA (3 tiles).
#    Every one PASS, 0 hazards.
# 2. bench.py --quick beside cuDNN in one process: the default kernel (A) and A@TILEC_ATTN_O_SLOT=1 (B),
#    timed A B B A, D128 / D256 at S 1k / 4k, full and causal (causal: the switch leaves the kernel, a
#    control for the noise).  A short table last.  About 170 s warm.
#   here:   tools/carry.sh build        device: run command="sh bench/pending_attnshort2.sh .carry" carry=[".carry"] timeout_s=200
. bench/pending_env.sh
echo "== 1. correctness [$(el) s]"
mkdir -p /tmp/exs && cp examples/attn.tile /tmp/exs/
TILEC_PERSIST_CTAS=5 GPU_TEST_VARIANTS_ONLY=1 GPU_TEST_ATTN_VARIANTS=O_SLOT TILEC_CACHE_DIR=/tmp/tse \
  timeout -k 10 80 $B/tests/gpu_test_examples /tmp/exs > $L/examples.log 2>&1 &
E=$!
trun() { # tag file kernel D causal "sizes" [env...]: the fa3 form (every S) with O through the last stage, tilec run --device
  t=$1 f=$2 k=$3 D=$4 c=$5 sz=$6; shift 6
  # shellcheck disable=SC2086
  env TILEC_ATTN_O_SLOT=1 TILEC_ATTN_FORM_MIN_S=1 "$@" TILEC_CACHE_DIR=/tmp/tsr$t timeout -k 10 70 $B/tilec run examples/$f \
    --kernel $k -D D=$D -D CAUSAL=$c $sz --scalar scale=0.0625 --device > $L/run_$t.log 2>&1
  echo "tilec run $t $k D$D causal $c ($sz) $*: rc $? $(grep -E 'PASS|FAIL' $L/run_$t.log | tr '\n' ' ' | cut -c1-120)" \
    > $L/run_$t.txt
}
san() { # tag D S: racecheck of the fa3 form with O through the last stage, 1 CTA (3 tiles)
  t=$1 D=$2 s=$3
  env TILEC_ATTN_O_SLOT=1 TILEC_ATTN_FORM_MIN_S=1 TILEC_PERSIST_CTAS=1 TILEC_CACHE_DIR=/tmp/tss$t timeout -k 10 70 \
    compute-sanitizer --tool racecheck $B/tilec run examples/attn.tile --kernel cutlass_attn_fwd -D D=$D -D CAUSAL=0 \
    --size Z=1 --size H=1 --size S=$s --scalar scale=0.0625 --device > $L/san_$t.log 2>&1
  echo "racecheck D$D full S$s O_SLOT=1 1 CTA: rc $? $(grep -E 'SUMMARY|FAIL|PASS' $L/san_$t.log | tr '\n' ' ' | cut -c1-140)" \
    > $L/san_$t.txt
}
A=attn.tile; K=cutlass_attn_fwd; G=llama/attn_gqa.tile; KG=cutlass_attn_gqa
san 128 128 300 & S1=$!
san 256 256 300 & S2=$!
trun s1 $A $K 128 0 "--size Z=1 --size H=2 --size S=1" TILEC_PERSIST_CTAS=5 & R1=$!
trun s127 $A $K 128 0 "--size Z=1 --size H=3 --size S=127" TILEC_PERSIST_CTAS=5 & R2=$!
trun s1000 $A $K 128 0 "--size Z=1 --size H=3 --size S=1000" TILEC_PERSIST_CTAS=5 & R3=$!
trun s4097 $A $K 128 0 "--size Z=1 --size H=1 --size S=4097" TILEC_PERSIST_CTAS=5 & R4=$!
trun d127 $A $K 256 0 "--size Z=1 --size H=3 --size S=127" TILEC_PERSIST_CTAS=5 & R5=$!
trun d1000 $A $K 256 0 "--size Z=1 --size H=3 --size S=1000" TILEC_PERSIST_CTAS=5 & R6=$!
trun f128 $A $K 128 0 "--size Z=2 --size H=8 --size S=1100" & R7=$!
trun f256 $A $K 256 0 "--size Z=2 --size H=8 --size S=1100" & R8=$!
trun g1000 $G $KG 128 0 "--size Z=1 --size H=8 --size HKV=2 --size S=1000" TILEC_PERSIST_CTAS=5 & R9=$!
trun g1100 $G $KG 128 0 "--size Z=2 --size H=4 --size HKV=1 --size S=1100" & R10=$!
wait $E; echo "examples (O_SLOT variant, 5 CTAs) rc $? [$(el) s]: $(tail -1 $L/examples.log)"
grep -E "^FAIL" $L/examples.log | head -5
wait $S1 $S2 $R1 $R2 $R3 $R4 $R5 $R6 $R7 $R8 $R9 $R10; cat $L/run_*.txt $L/san_*.txt
echo "== 2. bench [$(el) s]"
B2="$K@TILEC_ATTN_O_SLOT=1"
BENCH_ATTN_NO_TRITON=1 TILEC_CACHE_DIR=/tmp/tsb timeout -k 10 95 python3 bench/bench.py --lib $B/libtilec.so.0.1 --quick --only attn \
  --attn-cases 128:1024:0,128:4096:0,256:1024:0,256:4096:0,128:1024:1,128:4096:1,256:1024:1,256:4096:1 \
  --attn-kernels "$K,$B2,$B2,$K" > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -hE "FAILED|Error|error" $L/bench.log | head -5
echo "== table: x cuDNN (same run; rel. err last): $K default (A), @TILEC_ATTN_O_SLOT=1 (B), A B B A"
grep -hE "\| cuDNN \|" $L/bench.log | awk -F' [|] ' '{printf "%-62s %-18s %7s %16s %7s %8s\n", $1, $2, $3, $4, $7, $8}'
echo "[$(el) s]"
