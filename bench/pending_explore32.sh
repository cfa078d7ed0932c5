# bench/pending_explore32.sh (thirty-second session): exploration (no rule; what a later scoped form by S could take).
# D64 (no FlashAttention-3 form: the two-program kernel at every S) at S1k causal / full and S4k causal: BN 64 against
# the example's 128, the producer / ping-pong warp-specialized forms, the causal tail order off.  D256 causal with the
# counter (TILEC_ATTN_SCHED=1; the twenty-ninth session: S1k 1.024, S4k 1.004, S8k 0.986, S16k 0.979) at S 1k, 1536, 2k,
# the range a second short form would take.  Every form checked against fp32 SDPA first (attn_ab.py).
#   device: run command="sh bench/pending_explore32.sh .carry" carry=[".carry"] timeout_s=200
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cx32 TILEC_LATE_FORMS=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
timeout -k 10 90 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 5 --triton 0 \
  --cases 64:1024:1,64:1024:0,64:4096:1 \
  --forms default,BN=64,TILEC_ATTN_WS=producer,TILEC_ATTN_WS=pingpong,TILEC_ATTN_ORDER=0 > $L/ab64.log 2>&1
echo "ab64 rc $? [$(el) s]"
grep -E "^\| D|rror" $L/ab64.log | cut -c1-120
timeout -k 10 80 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 --triton 0 \
  --cases 256:1024:1,256:1536:1,256:2048:1 --forms default,TILEC_ATTN_SCHED=1 > $L/ab256.log 2>&1
echo "ab256 rc $? [$(el) s]"
grep -E "^\| D|rror" $L/ab256.log | cut -c1-120
