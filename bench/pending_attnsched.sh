#!/bin/sh
# bench/pending_attnsched.sh (branch attnsched, twenty-second session; not run: no device this session):
# causal fa3 tiles from a global atomic counter (TILEC_ATTN_SCHED=1, default off; lib/codegen/attn_sched.c,
# docs/pipelines.md "Causal tiles from a counter"): the causal fa3 form, one tile a CTA today, runs on
# min(tiles, CTAs that fit) persistent CTAs; the producer takes each next tile from a module global counter
# (heaviest row blocks first within sections of heads whose K and V fit 32 MiB of L2) and hands it to the
# consumers through shared memory before q's "q full"; the last CTA to finish taking resets the counter.
# bench/RESULTS.md "branch attnsched" has the model and the prediction.
# 1. correctness against the interpreter / torch's f32 SDPA, TILEC_ATTN_SCHED=1:
#    gpu_test_examples' SCHED variants (fa3 at BN 128, D64 / D128; the default kernel's fa3 form at every S,
#    D128 / D256, on 5 CTAs; =2 on 3 CTAs; S 1 / 127 / 129 / 1000 / 4097 / (2, 8, 1100), full and causal,
#    each size a new launch of the same handle: a counter left non-zero skips tiles, NaN rows);
#    bench/attn_sched_check.py: 12 launches back to back without a sync (S 1000 / 127 / 4097 / 1 / 1024 /
#    1100, D128 / D256; the bench's shapes; GQA 8 / 2 heads), the same alternating over two streams (branch
#    attnsched2: a counter a stream, lib/api/sched_slot.c), then one launch in a CUDA graph replayed 3
#    times, at the CTAs that fit and again on 7 CTAs (many launches at once on the two streams);
#    `tilec run --device`: D128 / D256 causal S 1 / 127 / 1000 / 4097 on 5 CTAs, (2, 8, 1100) at the launch's
#    CTAs, GQA (H 8 / HKV 2 S 1000 on 5 CTAs, H 4 / HKV 1 (2, 1100)); racecheck D128 causal S 300 on 1 CTA.
#    Every one PASS, 0 hazards.
# 2. bench.py --quick beside cuDNN in one process, causal D128 / D256 at S 1k / 4k: the default (A),
#    A@TILEC_ATTN_SCHED=1 (B), B@TILEC_ATTN_O_SLOT=1 (C), timed A B C C B A; then D128 S1k causal through the
#    fa3 form (TILEC_ATTN_FORM_MIN_S=1024; today the two-program kernel runs S1k): A, the form (E), the form
#    with the counter (F), timed A E F F E A.  A short table last.  About 170 s warm.
#   here:   tools/carry.sh build        device: run command="sh bench/pending_attnsched.sh .carry" carry=[".carry"] timeout_s=200
. bench/pending_env.sh
echo "== 1. correctness [$(el) s]"
mkdir -p /tmp/exs && cp examples/attn.tile /tmp/exs/
GPU_TEST_VARIANTS_ONLY=1 GPU_TEST_ATTN_VARIANTS=SCHED TILEC_CACHE_DIR=/tmp/tse \
  timeout -k 10 80 $B/tests/gpu_test_examples /tmp/exs > $L/examples.log 2>&1 &
E=$!
chk() { # tag [env...]: repeated launches and a CUDA graph against SDPA
  t=$1; shift
  # shellcheck disable=SC2086
  env TILEC_ATTN_SCHED=1 TILEC_ATTN_FORM_MIN_S=1 "$@" TILEC_CACHE_DIR=/tmp/tsc$t timeout -k 10 80 \
    python3 bench/attn_sched_check.py > $L/check_$t.log 2>&1
  echo "attn_sched_check $t $*: rc $? $(grep -cE '^PASS' $L/check_$t.log) PASS, $(grep -E '^FAIL|ALL PASS|Error' $L/check_$t.log | head -3 | tr '\n' ' ' | cut -c1-200)" \
    > $L/check_$t.txt
}
trun() { # tag file kernel D "sizes" [env...]: the causal fa3 form (every S) with tiles from the counter
  t=$1 f=$2 k=$3 D=$4 sz=$5; shift 5
  # shellcheck disable=SC2086
  env TILEC_ATTN_SCHED=1 TILEC_ATTN_FORM_MIN_S=1 "$@" TILEC_CACHE_DIR=/tmp/tsr$t timeout -k 10 70 $B/tilec run examples/$f \
    --kernel $k -D D=$D -D CAUSAL=1 $sz --scalar scale=0.0625 --device > $L/run_$t.log 2>&1
  echo "tilec run $t $k D$D causal ($sz) $*: rc $? $(grep -E 'PASS|FAIL' $L/run_$t.log | tr '\n' ' ' | cut -c1-120)" \
    > $L/run_$t.txt
}
san() { # racecheck of the counter form, D128 causal S300 on 1 CTA (3 tiles)
  env TILEC_ATTN_SCHED=1 TILEC_ATTN_FORM_MIN_S=1 TILEC_PERSIST_CTAS=1 TILEC_CACHE_DIR=/tmp/tss timeout -k 10 70 \
    compute-sanitizer --tool racecheck $B/tilec run examples/attn.tile --kernel cutlass_attn_fwd -D D=128 -D CAUSAL=1 \
    --size Z=1 --size H=1 --size S=300 --scalar scale=0.0625 --device > $L/san.log 2>&1
  echo "racecheck D128 causal S300 SCHED=1 1 CTA: rc $? $(grep -E 'SUMMARY|FAIL|PASS' $L/san.log | tr '\n' ' ' | cut -c1-140)" \
    > $L/san.txt
}
A=attn.tile; K=cutlass_attn_fwd; G=llama/attn_gqa.tile; KG=cutlass_attn_gqa
san & S1=$!
chk all & C1=$!
chk ctas7 TILEC_PERSIST_CTAS=7 & C2=$!
trun s1 $A $K 128 "--size Z=1 --size H=2 --size S=1" TILEC_PERSIST_CTAS=5 & R1=$!
trun s127 $A $K 128 "--size Z=1 --size H=3 --size S=127" TILEC_PERSIST_CTAS=5 & R2=$!
trun s1000 $A $K 128 "--size Z=1 --size H=3 --size S=1000" TILEC_PERSIST_CTAS=5 & R3=$!
trun s4097 $A $K 128 "--size Z=1 --size H=1 --size S=4097" TILEC_PERSIST_CTAS=5 & R4=$!
trun d127 $A $K 256 "--size Z=1 --size H=3 --size S=127" TILEC_PERSIST_CTAS=5 & R5=$!
trun d1000 $A $K 256 "--size Z=1 --size H=3 --size S=1000" TILEC_PERSIST_CTAS=5 & R6=$!
trun d4097 $A $K 256 "--size Z=1 --size H=1 --size S=4097" TILEC_PERSIST_CTAS=5 & R7=$!
trun f128 $A $K 128 "--size Z=2 --size H=8 --size S=1100" & R8=$!
trun f256 $A $K 256 "--size Z=2 --size H=8 --size S=1100" & R9=$!
trun g1000 $G $KG 128 "--size Z=1 --size H=8 --size HKV=2 --size S=1000" TILEC_PERSIST_CTAS=5 & R10=$!
trun g1100 $G $KG 128 "--size Z=2 --size H=4 --size HKV=1 --size S=1100" & R11=$!
wait $E; echo "examples (SCHED variants) rc $? [$(el) s]: $(tail -1 $L/examples.log)"
grep -E "^FAIL" $L/examples.log | head -5
wait $S1 $C1 $C2 $R1 $R2 $R3 $R4 $R5 $R6 $R7 $R8 $R9 $R10 $R11; cat $L/check_*.txt $L/run_*.txt $L/san.txt
grep -hE "^FAIL" $L/check_*.log | head -5
echo "== 2. bench [$(el) s]"
BS="$K@TILEC_ATTN_SCHED=1"; CS="$BS@TILEC_ATTN_O_SLOT=1"
BENCH_ATTN_NO_TRITON=1 TILEC_CACHE_DIR=/tmp/tsb timeout -k 10 75 python3 bench/bench.py --lib $B/libtilec.so.0.1 --quick --only attn \
  --attn-cases 128:1024:1,128:4096:1,256:1024:1,256:4096:1 \
  --attn-kernels "$K,$BS,$CS,$CS,$BS,$K" > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
EF="$K@TILEC_ATTN_FORM_MIN_S=1024"; FF="$EF@TILEC_ATTN_SCHED=1"
BENCH_ATTN_NO_TRITON=1 TILEC_CACHE_DIR=/tmp/tsb timeout -k 10 35 python3 bench/bench.py --lib $B/libtilec.so.0.1 --quick --only attn \
  --attn-cases 128:1024:1 --attn-kernels "$K,$EF,$FF,$FF,$EF,$K" > $L/bench2.log 2>&1
echo "bench (D128 S1k through the fa3 form) rc $? [$(el) s]"
grep -hE "FAILED|Error|error" $L/bench.log $L/bench2.log | head -5
echo "== table: x cuDNN (same run; rel. err last): $K default (A), @TILEC_ATTN_SCHED=1 (B), + O_SLOT=1 (C), A B C C B A;"
echo "   then D128 S1k: A, @TILEC_ATTN_FORM_MIN_S=1024 (E), + SCHED=1 (F), A E F F E A"
grep -hE "\| cuDNN \|" $L/bench.log $L/bench2.log | awk -F' [|] ' '{printf "%-72s %-18s %7s %16s %7s %8s\n", $1, $2, $3, $4, $7, $8}'
echo "[$(el) s]"
