# bench/pending_counter256.sh (thirty-fifth session; ran on an H100 the same session, bench/RESULTS.md: S1k 1.026x,
# S1536 1.022x, S2k 0.997, the counter at S512 / S768 1.058 / 1.048x -- the range then moved to 512 <= S < 2048):
# causal D256's short FlashAttention-3 form, the same form with its tiles from the counter (option attn-sched=1),
# launched at 1024 <= S < 2048 when written (passes/attn_form.c ATTN_COUNTER_*,
# lib/api/forms.c FORM_ATTN_SHORT; TILEC_ATTN_FORM_COUNTER=0 the form alone, as before).  The code is TILEC_ATTN_SCHED=1's
# (measured on an H100 x the form without it: twenty-ninth session S1k 1.024x; thirty-fourth S 1k / 1.5k / 2k 1.035 /
# 1.028 / 1.005x, S 4k 1.004, 8k 0.986, 16k 0.979); the new part is the launch choice.
# Correctness first: `tilec run --device` causal D256 attn.tile at S 1100 and 2000 (the short form) and 2100 (the form)
# against the interpreter; then interleaved rounds (attn_ab.py, rel. err against fp32 SDPA) of the default against
# TILEC_ATTN_FORM_COUNTER=0, and TILEC_ATTN_SCHED=1 (the counter at every S: whether the range should reach below 1k).
# Predicted (before the run): default x COUNTER=0 at S1k +2-3.5 %, S1536 +2-3 %, S2048 1.00 +-0.5 % (the same kernel:
# a control); SCHED=1 x COUNTER=0 at S512 / S768 +2-5 % (shorter tiles, more to balance).
# Rule (written before): the short form stays the default if S1k and S1536 read >= 1.01 and S2048 within 0.995-1.005;
# else TILEC_ATTN_FORM_COUNTER's default goes to 0 (opt-in), recorded.  The range's lower bound moves to 512 if SCHED=1
# reads >= 1.01 at both S512 and S768.
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_counter256.sh .carry" carry=[".carry"] timeout_s=300
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cc256 TILEC_LATE_FORMS=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
if [ -z "${COUNTER256_QUICK:-}" ]; then
for s in ${COUNTER256_S:-1100 2000 2100}; do
  timeout -k 10 90 $B/tilec run examples/attn.tile --kernel cutlass_attn_fwd -D D=256 -D CAUSAL=1 --size Z=1 --size H=2 \
    --size S=$s --scalar scale=0.0625 --device > $L/c$s.log 2>&1
  echo "D256 causal S$s rc $?: $(grep -E 'PASS|FAIL' $L/c$s.log | tr '\n' ' ' | cut -c1-100) [$(el) s]"
done
fi
timeout -k 10 150 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 --triton 0 \
  --cases 256:512:1,256:768:1,256:1024:1,256:1536:1,256:2048:1 \
  --forms default,TILEC_ATTN_FORM_COUNTER=0,TILEC_ATTN_SCHED=1 > $L/abc.log 2>&1
echo "ab rc $? [$(el) s]"
grep -E "^\| D|rror" $L/abc.log | cut -c1-120
