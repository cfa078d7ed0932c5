# bench/pending_kslot.sh (thirty-second session): the causal D128 FlashAttention-3 form's short variant, O through the
# last stage's K slot (option attn-o-slot-k=1), launched at 1024 <= S < 4096 (passes/attn_form.c kslot bounds,
# lib/api/forms.c FORM_ATTN_KSLOT; TILEC_ATTN_FORM_KSLOT=0 the form alone, as before).  The code is the thirtieth
# session's TILEC_ATTN_O_SLOT_K=1 (measured there, H100, 7 interleaved rounds x V's slot: causal S 1k / 2k / 4k / 16k
# 1.022 / 1.029 / 1.018 / 1.007x; the rule's 1.02 held at 1k and 2k only); the new part is the launch choice.
# Correctness first: gpu_test_examples' default variant of attn.tile (causal at S 1100: the short form), `tilec run
# --device` causal attn.tile and causal GQA at S 1100 and 3000 against the interpreter; then interleaved rounds of the
# default against TILEC_ATTN_FORM_KSLOT=0 (attn_ab.py: rel. err against fp32 SDPA).
# Predicted (before the run): D128 causal S1k +1.5-3 %, S1536 +1.5-3 %, S2k +2-3 %, S3k +1-2 %, S4k 1.00 +-0.5 % (the
# same kernel: a control).  Rule (written before): the short form stays the default if S1k and S2k read >= 1.01 and no
# row < 0.995; else TILEC_ATTN_FORM_KSLOT's default goes to 0 (opt-in), recorded.
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_kslot.sh .carry" carry=[".carry"] timeout_s=300
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/ckslot TILEC_LATE_FORMS=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
if [ -z "${KSLOT_QUICK:-}" ]; then
attn_variants kslot default 120
attn_runs TILEC_ATTN_FORM_KSLOT=1 "1100 3000" 1  # (=1: the default, named; both sizes inside the short form's range)
fi
timeout -k 10 110 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 --triton 0 \
  --cases 128:1024:1,128:1536:1,128:2048:1,128:3072:1,128:4096:1 \
  --forms default,TILEC_ATTN_FORM_KSLOT=0 > $L/abk.log 2>&1
echo "ab rc $? [$(el) s]"
grep -E "^\| D|rror" $L/abk.log | cut -c1-120
