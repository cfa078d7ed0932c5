# bench/pending_explore32.sh (thirty-second session): exploration (no rule; what a later scoped form by S could take).
# Measured (thirty-fourth session, H100, by the same attn_ab.py commands): bench/RESULTS.md -- D64 default best
# (persistent 0.94-0.95x), D256 causal's counter 1.005-1.035x at S 1k-2k.
# D64 (no FlashAttention-3 form: the two-program kernel at every S) at S1k causal / full and S4k causal: BN 64 against
# the example's 128, the producer / ping-pong warp-specialized forms, the causal tail order off.  D256 causal with the
# counter (TILEC_ATTN_SCHED=1; the twenty-ninth session: S1k 1.024, S4k 1.004, S8k 0.986, S16k 0.979) at S 1k, 1536, 2k,
# the range a second short form would take.  Every form checked against fp32 SDPA first (attn_ab.py).
# Thirty-fourth session: D64 full, the persistent kernel (TILEC_ATTN_PERSIST=1: at D64 "unmeasured"; ptxas 13.0: 128
# registers, 16 B spills, two programs an SM as the default's 127 / 0) beside the default and Triton: issue 11's x Triton
# at D64 S1k full is 1.154 (H100, thirty-first session), the one case under 1.2.  Predicted: S1k full 1.02-1.06x the
# default (the two-program kernel's fixed start and end, ~9 % of S1k full, partly hidden), S4k full 1.00-1.02x.  If S1k
# reads >= 1.03x and S4k >= 0.995x: a D64 form picked by S (as D256's attn_persist_form) is the next session's work.
#   device: run command="sh bench/pending_explore32.sh .carry" carry=[".carry"] timeout_s=300
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
timeout -k 10 80 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 \
  --cases 64:1024:0,64:4096:0 --forms default,TILEC_ATTN_PERSIST=1 > $L/ab64p.log 2>&1
echo "ab64 persist rc $? [$(el) s]"
grep -E "^\| D|rror" $L/ab64p.log | cut -c1-140
