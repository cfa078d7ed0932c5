# bench/pending_d64fa3.sh (twenty-ninth session; RAN on an H100 at branch d64fa3: correct, 0.80-0.87x cuDNN against the
# two-program kernel's 0.96-1.15x -- not merged, bench/RESULTS.md): does D64 causal attention gain from the fa3 form with its tiles
# from the counter, as D128 / D256 did (1.02-1.11x at S 1k-4k)?  D64 gets no launch-time form today (fa3 measured
# 0.75-1.00x the two-program kernel before the counter and O through the last stage existed: docs/pipelines.md).
# Branch d64fa3: q by TMA at D64 too (its 128-byte rows are one atom), which the counter, O by TMA and O through
# the last stage need; correctness first: gpu_test_examples' fa3 BN 128 variants (D64 and D128, ragged S, 4097,
# 144 tiles; with the counter, the bounded slot at 3 steps), the default rounds and FORM_MIN_S=1 (D64 causal now has a
# launch-time form: fa3 at its own BN 128 with the counter from S 1024), then `tilec run --device` at D64 causal;
# then the new default against TILEC_ATTN_FORM=0 (the D64 rows' old default, the two-program kernel) and fa3 at BN 64.
# Forms by interleaved rounds (bench/attn_ab.py, each checked against fp32 SDPA on NaN-poisoned outputs): the
# default; fa3 + the counter at BN 64 (O through q's slot: O does not fit a 64-key V slot) and at BN 128 (O through
# the last stage).  Predicted: the D64 causal S1k row (0.962x cuDNN) moves by what the counter fixes at D128
# (heaviest tiles first, no tail), +3..+8 % if fa3's D64 step is not slower than the default's; a loss at full S
# says fa3's D64 step is the cost (as measured before).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_d64fa3.sh .carry" carry=[".carry"] timeout_s=420
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cd64fa3 TILEC_LATE_FORMS=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
attn_variants d64fa3 default,fa3,SCHED,O_SLOT_MAX,FORM_MIN_S 200
for s in 1000 4097; do
  TILEC_ATTN_WS=fa3 TILEC_ATTN_SCHED=1 TILEC_CACHE_DIR=/tmp/cd64r$s timeout -k 10 60 $B/tilec run examples/attn.tile --kernel cutlass_attn_fwd \
    -D D=64 -D BN=128 -D CAUSAL=1 --size Z=2 --size H=3 --size S=$s --scalar scale=0.125 --device > $L/r$s.log 2>&1
  echo "d64 causal S$s rc $?: $(grep -E 'PASS|FAIL' $L/r$s.log | tr '\n' ' ' | cut -c1-110)"
done
timeout -k 10 150 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 \
  --cases 64:1024:1,64:2048:1,64:4096:1,64:16384:1,64:1024:0 \
  --forms default,TILEC_ATTN_FORM=0,f64@TILEC_ATTN_WS=fa3@TILEC_ATTN_SCHED=1@BN=64 > $L/ab.log 2>&1
echo "ab rc $? [$(el) s]"
grep -E "^\| D|Error|rror" $L/ab.log | cut -c1-120
