#!/bin/sh
# bench/pending_attnforms.sh (twenty-sixth session, for the next call; ~120 s): the short-S forward cases still
# under cuDNN by rotated rounds (attnab, H100: D64 S1k causal 0.962, D128 S1k 0.920 / 0.872, D256 S1k 0.947 / 0.938)
# against the forms earlier sessions measured back to back only (each once beside cuDNN).  At S1k the launch runs
# fa3's form for full D128 / D256 (passes/attn_form.c: S >= 1024) and the two-program kernel for causal (S >= 4096):
# the fa3 form at every S (TILEC_ATTN_FORM_MIN_S=1: causal's alternative), no form (TILEC_ATTN_FORM=0: full's), the
# persistent form without a producer (TILEC_ATTN_PERSIST=1), fa3 with O through the last stage (+ TILEC_ATTN_O_SLOT=1)
# and causal tiles from a counter (+ TILEC_ATTN_SCHED=1).  bench/attn_ab.py, 7
# rounds, cuDNN first.  Predicted: each within 0.95-1.05x the default (the back-to-back reads: fa3 at S1k -3..-7 %,
# persist +-2 % at D128, sched -3..-5 %); a form >= 1.03x in the median with no round < 0.99x becomes the S1k
# choice (passes/attn_form.c picks forms by S at launch).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_attnforms.sh .carry" carry=[".carry"] timeout_s=200
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cattnforms
timeout -k 10 180 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 \
  --cases 64:1024:1,128:1024:0,128:1024:1,256:1024:0,256:1024:1 \
  --forms "default,TILEC_ATTN_FORM_MIN_S=1,TILEC_ATTN_FORM=0,TILEC_ATTN_PERSIST=1,TILEC_ATTN_FORM_MIN_S=1@TILEC_ATTN_O_SLOT=1,TILEC_ATTN_FORM_MIN_S=1@TILEC_ATTN_SCHED=1" \
  > $L/attnforms.log 2>&1; echo "rc $? [$(el) s]"
grep -E "^\||Error" $L/attnforms.log | cut -c1-150
