#!/bin/sh
# .carry-attn7/go.sh (branch attn7, fifteenth session): the FlashAttention-3 form picked by S
# (passes/attn_form.c) against the interpreter, fa3's racecheck in a TMA form, then the twelve
# cases + S 2048 at D128 in one process: the new default, TILEC_ATTN_FORM=0, fa3 with 4 / 1
# reduction chains.
set -u
C=$PWD/.carry-attn7; B=$C/b; L=${OUT:-/tmp/L}; mkdir -p $L; T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
export LD_LIBRARY_PATH=$B PYTHONUNBUFFERED=1
echo "== 1. correctness [$(el) s]"
( for c in 0 1; do
  TILEC_ATTN_WS=fa3 TILEC_CACHE_DIR=/tmp/c7s timeout 70 compute-sanitizer --tool racecheck $B/tilec run examples/attn.tile \
    --kernel cutlass_attn_fwd -D D=128 -D CAUSAL=$c -D BN=128 --size Z=1 --size H=140 --size S=256 --scalar scale=0.088 --device > $L/san_$c.log 2>&1
  echo "racecheck fa3 D128 causal $c H140 S256: rc $? $(grep -E 'SUMMARY|FAIL|PASS' $L/san_$c.log | tr '\n' ' ' | cut -c1-200)"
done > $L/san.txt ) &
SP=$!
GPU_TEST_ATTN_VARIANTS=fa3,ATTN_FORM TILEC_CACHE_DIR=/tmp/c7e timeout 170 $B/tests/gpu_test_examples $C/ex > $L/examples.log 2>&1
RC=$?
for a in "1 0 2 4 2 1100" "1 1 2 4 2 1100" "2048 1 1 2 1 2100"; do set -- $a
  TILEC_ATTN_FORM_MIN_S=$1 TILEC_CACHE_DIR=/tmp/c7g timeout 60 $B/tilec run $C/exl/attn_gqa.tile --kernel cutlass_attn_gqa -D CAUSAL=$2 \
    --size Z=$3 --size H=$4 --size HKV=$5 --size S=$6 --scalar scale=0.088 --device > $L/gqa_$1_$2.log 2>&1
  echo "gqa form-min-s $1 causal $2 Z$3 H$4 HKV$5 S$6: rc $? $(grep -E 'PASS|FAIL' $L/gqa_$1_$2.log | tr '\n' ' ' | cut -c1-200)"
done
wait $SP; cat $L/san.txt
echo "examples rc $RC: $(tail -1 $L/examples.log)"
grep -E "^FAIL" $L/examples.log | head -5
echo "== 2. bench [$(el) s]"
BENCH_ATTN_NO_TRITON=1 TILEC_CACHE_DIR=/tmp/c7b timeout 250 python3 bench/bench.py --lib $B/libtilec.so.0.1 --only attn \
  --attn-cases 128:1024:0,128:1024:1,128:2048:0,128:2048:1,128:4096:0,128:4096:1,128:16384:0,128:16384:1,64:1024:0,64:1024:1,64:4096:0,64:4096:1,64:16384:0,64:16384:1 \
  --attn-kernels "cutlass_attn_fwd,cutlass_attn_fwd@TILEC_ATTN_FORM=0,cutlass_attn_fwd@TILEC_ATTN_WS=fa3:BN=128,cutlass_attn_fwd@TILEC_ATTN_WS=fa3@TILEC_ATTN_RED_CHAINS=0:BN=128" \
  > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -E "\| cuDNN \|" $L/bench.log | awk -F' [|] ' '{printf "%-58s %-20s %8s %14s %7s %8s\n", $1, $2, $3, $4, $7, $8}'
grep -E "FAILED|Error|error" $L/bench.log | head -5
