#!/bin/sh
# bench/pending_defaults30.sh (thirtieth session; ~230 s): the two attention defaults this session took from measurement
# (bench/RESULTS.md "thirtieth session"): the FlashAttention-3 form from S 256 at D128 (full, and causal with its tiles
# from the counter) and from S 512 at D256 (passes/attn_form.c; 1024 before), and O into the K slot for full
# attention's bounded slot (emit_o_slot.c o_slot_k_wanted).  1. correctness at the defaults: gpu_test_examples'
# default variants of attn.tile and llama/attn_gqa.tile (ragged S: the forms now run from S 256), `tilec run` against
# the interpreter at S 300 / 700 (D128 / D256, full / causal, GQA); 2. the new default x the old one
# (TILEC_ATTN_FORM_MIN_S=1024@TILEC_ATTN_O_SLOT_K=0), interleaved rounds, S 256..1024: predicted the shorts' and
# oslotk's ratios again (1.09-1.26x below 1024, 1.03x at D128 S1k full).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_defaults30.sh .carry" carry=[".carry"] timeout_s=300
. bench/pending_env.sh
export TILEC_LATE_FORMS=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
mkdir -p /tmp/d30ex && ln -sf "$(pwd)/examples/attn.tile" "$(pwd)/examples/llama/attn_gqa.tile" /tmp/d30ex/
(GPU_TEST_VARIANTS_ONLY=1 GPU_TEST_ATTN_VARIANTS=default TILEC_EXAMPLES="$(pwd)/examples" TILEC_CACHE_DIR=/tmp/cd30a \
  timeout -k 10 120 $B/tests/gpu_test_examples /tmp/d30ex > $L/ex.log 2>&1; echo "exit $?" >> $L/ex.log) &
(n=0; for c in "128 0 300" "128 1 300" "128 0 700" "128 1 700" "256 0 700" "256 1 700"; do set -- $c; n=$((n + 1))
  TILEC_CACHE_DIR=/tmp/cd30r timeout -k 10 60 $B/tilec run examples/attn.tile --kernel cutlass_attn_fwd -D D=$1 -D CAUSAL=$2 \
    --size Z=1 --size H=2 --size S=$3 --scalar scale=0.0884 --device > $L/r$n.log 2>&1
  echo "attn D$1 causal=$2 S$3 rc $?: $(grep -E 'PASS|FAIL' $L/r$n.log | tr '\n' ' ' | cut -c1-110)"; done
 for c in "0 300" "1 700"; do set -- $c; n=$((n + 1))
  TILEC_CACHE_DIR=/tmp/cd30g timeout -k 10 60 $B/tilec run examples/llama/attn_gqa.tile --kernel cutlass_attn_gqa -D D=128 -D CAUSAL=$1 \
    --size Z=1 --size H=4 --size HKV=1 --size S=$2 --scalar scale=0.0884 --device > $L/r$n.log 2>&1
  echo "gqa causal=$1 S$2 rc $?: $(grep -E 'PASS|FAIL' $L/r$n.log | tr '\n' ' ' | cut -c1-110)"; done) > $L/runs.log 2>&1 &
wait
echo "examples: $(tail -2 $L/ex.log | tr '\n' ' ' | cut -c1-150) [$(el) s]"; grep FAIL $L/ex.log | head -4
cat $L/runs.log
TILEC_CACHE_DIR=/tmp/cd30b timeout -k 10 110 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 \
  --cases 128:256:1,128:512:0,128:768:1,128:1024:0,256:512:0,256:512:1,256:768:0 \
  --forms default,TILEC_ATTN_FORM_MIN_S=1024@TILEC_ATTN_O_SLOT_K=0 > $L/ab.log 2>&1
echo "ab rc $? [$(el) s]"
grep -E "^\| D|rror" $L/ab.log | cut -c1-120
# 3. below the new bounds: the form at every S (TILEC_ATTN_FORM_MIN_S=1) x the default at D128 S 128 / 192 and D256
#    S 256 / 384 -- a bound moves again only where every row gains
TILEC_CACHE_DIR=/tmp/cd30c timeout -k 10 80 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 \
  --cases 128:128:0,128:128:1,128:192:1,256:256:0,256:256:1,256:384:0 \
  --forms default,TILEC_ATTN_FORM_MIN_S=1 > $L/ab2.log 2>&1
echo "ab2 rc $? [$(el) s]"
grep -E "^\| D|rror" $L/ab2.log | cut -c1-120
