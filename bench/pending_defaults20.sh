#!/bin/sh
# bench/pending_defaults20.sh: the GPU check the twentieth session owes for the seven defaults it made
# from its owed calls 1-3 (fa3's q by TMA, K and V apart at D256 with the form's new bounds, the scoped
# tanh.approx, the pitch repack, the staged double slot, the scales one k-step ahead, the bf16x2
# dequantization; bench/RESULTS.md "twentieth session"): each ran correct alone on the H200, never all
# together.  Every GPU test at the defaults (bench/pending.sh's test step, no benches), then
# test_pitch_repack (its K-tail check made detectable at M = 1) and attn_bwd_dkdv at D128 full S1000
# against the interpreter, the default and TILEC_LOOP_SPLIT_LOAD=1, three seeds each (bwd6's one failing
# run: 2 of 384000 dK elements; the switch stays opt-in until this says whether the default fails too).
#   sh bench/pending_defaults20.sh .carry        (about 250 s warm; D20_TEST_LIMIT caps each test)
. bench/pending_env.sh
P=/tmp/d20; mkdir -p $P
(for i in 1 2 3; do for m in default split; do
   if [ $m = default ]; then e="env -u TILEC_LOOP_SPLIT_LOAD"; else e="env TILEC_LOOP_SPLIT_LOAD=1"; fi
   sd=; [ $i -gt 1 ] && sd="--seed $i"  # (round 1: tilec run's default seed, bwd6's data)
   $e TILEC_CACHE_DIR=/tmp/c-d20$m timeout -k 10 30 $B/tilec run examples/attn_bwd.tile --kernel=attn_bwd_dkdv -D D=128 -D CAUSAL=0 \
     --size Z=1 --size H=3 --size S=1000 --scalar scale=0.1 $sd --device 2>&1 | grep -E "^d[KV] |FAIL|PASS" | tr '\n' ' ' | sed "s/^/dkdv D128 S1000 $m round $i: /"; echo
 done; done > $P/dkdv.txt 2>&1
 # GQA's fa3 form (causal, S >= 4096) now takes q by TMA too: once at S 4100 and once at (2, 1100) with
 # the form forced (TILEC_ATTN_FORM_MIN_S=1), against the interpreter
 for sz in "--size Z=1 --size H=8 --size HKV=2 --size S=4100" "--size Z=2 --size H=4 --size HKV=1 --size S=1100"; do
   [ "${sz#*S=1100}" != "$sz" ] && fm=1 || fm=4096
   TILEC_ATTN_FORM_MIN_S=$fm TILEC_CACHE_DIR=/tmp/c-d20gqa timeout -k 10 90 $B/tilec run examples/llama/attn_gqa.tile $sz \
     --scalar scale=0.08 --device 2>&1 | grep -E "^O |FAIL|PASS" | tr '\n' ' ' | sed "s/^/gqa form $sz: /"; echo
 done >> $P/dkdv.txt 2>&1) &
(TILEC_CACHE_DIR=/tmp/c-pr timeout -k 10 200 python3 tests/gpu/test_pitch_repack.py \
   --lib $B/libtilec.so > $P/pitch.log 2>&1; echo "exit $?" >> $P/pitch.log) &
PENDING_STEPS=none PENDING_TEST_LIMIT=${D20_TEST_LIMIT:-230} PENDING_TMP=$P/pend sh bench/pending.sh "${1:-.carry}" 2>&1 | tail -40
wait
echo "== test_pitch_repack: $(grep -c '^ok' $P/pitch.log) ok, $(grep -c '^FAIL' $P/pitch.log) FAIL, $(tail -1 $P/pitch.log)"
grep '^FAIL' $P/pitch.log | head -5
cat $P/dkdv.txt
echo "[all: $(( $(date +%s) - T0 )) s]"
