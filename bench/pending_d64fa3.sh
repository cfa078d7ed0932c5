# bench/pending_d64fa3.sh (twenty-ninth session): does D64 causal attention gain from the fa3 form with its tiles
# from the counter, as D128 / D256 did (1.02-1.11x at S 1k-4k)?  D64 gets no launch-time form today (fa3 measured
# 0.75-1.00x the two-program kernel before the counter and O through the last stage existed: docs/pipelines.md).
# Forms by interleaved rounds (bench/attn_ab.py, each checked against fp32 SDPA on NaN-poisoned outputs): the
# default; fa3 + the counter at BN 64 (O through q's slot: O does not fit a 64-key V slot) and at BN 128 (O through
# the last stage).  Predicted: the D64 causal S1k row (0.962x cuDNN) moves by what the counter fixes at D128
# (heaviest tiles first, no tail), +3..+8 % if fa3's D64 step is not slower than the default's; a loss at full S
# says fa3's D64 step is the cost (as measured before).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_d64fa3.sh .carry" carry=[".carry"] timeout_s=200
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cd64fa3 TILEC_LATE_FORMS=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
timeout -k 10 170 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 \
  --cases 64:1024:1,64:2048:1,64:4096:1,64:16384:1,64:1024:0 \
  --forms default,f64@TILEC_ATTN_WS=fa3@TILEC_ATTN_SCHED=1,f128@TILEC_ATTN_WS=fa3@TILEC_ATTN_SCHED=1@BN=128 > $L/ab.log 2>&1
echo "ab rc $? [$(el) s]"
grep -E "^\| D|Error|rror" $L/ab.log | cut -c1-120
