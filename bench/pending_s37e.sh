# bench/pending_s37e.sh (thirty-seventh session): random numbers in dot kernels after the rand-in-dot-kernels hunt --
# the lane-pair Philox path in chunks of eight registers a vote (one vote a tile spilled GEMM epilogues) and the mask
# following its first user only inside a loop with a dot -- in one call (~4 minutes, any sm_90 card):
#   - tests/gpu/rand_dot.sh (22 files, 137 runs, bit-exact against the interpreter, default and TILEC_RAND_FOLLOW=0);
#   - bench/switch_ab.py's dropout kernels again (the chunked path; the default was decided on the one-vote path: the rule, all four
#     cases <= 1.00 time on / off, must still hold, else TILEC_RAND_LANES' chunking is revisited).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_s37e.sh .carry" carry=[".carry"] timeout_s=420
. bench/pending_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
TILEC_CACHE_DIR=/tmp/c37r timeout 300 sh tests/gpu/rand_dot.sh $B > $L/rdot.log 2>&1; echo "rand_dot.sh rc $?: $(tail -1 $L/rdot.log)"
grep -A4 "^FAIL" $L/rdot.log | head -16
echo "[$(el) s]"
TILEC_CACHE_DIR=/tmp/c37d2 timeout 150 python3 bench/switch_ab.py --lib $B/libtilec.so --file tests/attn_variants/dropout.tile --switch TILEC_RAND_FOLLOW \
  --kernels cutlass_attn_dropout:dropout,cutlass_attn_bwd_dropout:bwd_dropout --rounds 7 2>&1 | grep -E "^\| cutlass|Error|error" | head -8
echo "[$(el) s]"
