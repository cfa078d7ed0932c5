#!/bin/sh
# bench/pending_sor.sh (twenty-fifth session; ~150 s): TILEC_SCRATCH_OVER_RING=1 (docs/pipelines.md "Scratch over
# a drained ring"; +4-9 % on decode at batch 8-32, H200, seventeenth session) changes 55 of the 148 snapshot
# files, and became no default until gpu_test_examples ran over every example with it.  On an H100 (twenty-fifth
# session, call 3) 27 files passed with it (1340 rounds, 0 failed); left: attn.tile (its sm_90a / sm_80 PTX
# moves) and examples/llama/*.tile (attn_decode_whole, attn_gqa move).  Rule: the default if both pass and
# test_decode passes with it.
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_sor.sh .carry" carry=[".carry"] timeout_s=240
. bench/pending_env.sh
export TILEC_SCRATCH_OVER_RING=1
mkdir -p /tmp/sor_a /tmp/sor_l && cp examples/attn.tile /tmp/sor_a/ && cp examples/llama/*.tile /tmp/sor_l/
echo "== gpu_test_examples with TILEC_SCRATCH_OVER_RING=1: attn.tile (default variant), examples/llama [$(el) s]"
(GPU_TEST_ATTN_VARIANTS=default TILEC_CACHE_DIR=/tmp/csor1 timeout -k 10 200 $B/tests/gpu_test_examples /tmp/sor_a > $L/sor_attn.log 2>&1; echo "exit $?" >> $L/sor_attn.log) &
(TILEC_CACHE_DIR=/tmp/csor2 timeout -k 10 200 $B/tests/gpu_test_examples /tmp/sor_l > $L/sor_llama.log 2>&1; echo "exit $?" >> $L/sor_llama.log) &
(TILEC_CACHE_DIR=/tmp/csor3 timeout -k 10 200 python3 tests/gpu/test_decode.py --lib $B/libtilec.so > $L/sor_decode.log 2>&1; echo "exit $?" >> $L/sor_decode.log) &
wait
for f in attn llama decode; do
  echo "$f: $(tail -2 $L/sor_$f.log | tr '\n' ' ' | cut -c1-160)"
  grep -E "^FAIL" $L/sor_$f.log | head -3 | cut -c1-200
done
echo "[$(el) s]"
