# bench/pending_causal28.sh (twenty-eighth session, OWED; on branch causaldef: the default flipped, so the rounds
# compare the default with TILEC_ATTN_SCHED=0 and the correctness runs need no switch): the causal FlashAttention-3 form from S 1024 (D128; D256
# from 1024 already) with its tiles from the counter (TILEC_ATTN_SCHED=1, or the option attn-sched) and O through the
# last stage on every tile (the default with the counter), to become the default if it holds.  Correctness first:
# gpu_test_examples (attn.tile: the default rounds, FORM_MIN_S and the SCHED variants, which now carry the slot on
# every tile) and `tilec run --device` of GQA's causal kernel through its form under the switch; then
# TILEC_ATTN_SCHED=1 against the default by interleaved rounds.  Predicted from pending_pp28.sh's rounds (the same
# PTX): D128 causal S1k 1.10x, S2k 1.07x, S4k 1.04x, S16k 1.00x; D256 S1k 1.03x, S4k 1.00x; full S1k unchanged.
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_causal28.sh .carry" carry=[".carry"] timeout_s=280
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/ccausal28 TILEC_LATE_FORMS=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
attn_variants causal28 default,FORM_MIN_S,SCHED 130
for s in 1100 4097; do
  TILEC_CACHE_DIR=/tmp/cc28g$s timeout -k 10 60 $B/tilec run examples/llama/attn_gqa.tile --kernel cutlass_attn_gqa -D D=128 \
    -D CAUSAL=1 --size Z=2 --size H=4 --size HKV=1 --size S=$s --scalar scale=0.0625 --device > $L/g$s.log 2>&1
  echo "gqa causal S$s rc $?: $(grep -E 'PASS|FAIL' $L/g$s.log | tr '\n' ' ' | cut -c1-110)"
done
timeout -k 10 100 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 \
  --cases 128:1024:1,128:2048:1,128:4096:1,128:16384:1,256:1024:1,256:4096:1,128:1024:0 \
  --forms default,TILEC_ATTN_SCHED=0 > $L/ab.log 2>&1; echo "ab rc $? [$(el) s]"
grep -E "^\| D|Error" $L/ab.log | cut -c1-110
