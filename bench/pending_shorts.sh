# bench/pending_shorts.sh (twenty-ninth session): below the forms' bound (S 1024), does the FlashAttention-3 form win
# now that it has O through the last stage (full, tiles <= 10 steps) and, causal at D128, its tiles from the counter?
# The bounds were set before both (passes/attn_form.c: D128 full S1k 0.862 vs the two-program kernel's 0.841, so 1024;
# causal 1024 with the counter).  TILEC_ATTN_FORM_MIN_S=1 (the form at every S) against the default, interleaved
# rounds, S 256 / 512 / 768 (bench.py's shapes: Z = 16384 / S, H = 2048 / D: 2048 row tiles at D128).  Predicted: the
# causal D128 rows gain as S1k did (tail balance, +5-10 %) if the form's fixed cost per tile (~2.5 us) stays under
# the two-program kernel's; full rows +-3 % (S1k was +3 % with the slot).  A bound moves only where every row gains.
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_shorts.sh .carry" carry=[".carry"] timeout_s=150
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cshorts TILEC_LATE_FORMS=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
timeout -k 10 130 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 \
  --cases 128:256:1,128:512:1,128:768:1,128:512:0,128:768:0,256:512:1,256:512:0 \
  --forms default,TILEC_ATTN_FORM_MIN_S=1 > $L/ab.log 2>&1
echo "ab rc $? [$(el) s]"
grep -E "^\| D|rror" $L/ab.log | cut -c1-120
