# bench/pending_oslotmax.sh: fa3's O through the last ring stage by default for a tile of at most 10 main-loop steps
# (twenty-eighth session, emit_o_slot.c cg_o_slot_taken: a per-tile uniform choice, a longer tile keeps q's slot;
# TILEC_ATTN_O_SLOT=0 off, =1 every tile, TILEC_ATTN_O_SLOT_MAX=N the bound).  Correctness first (gpu_test_examples:
# the default rounds, O_SLOT=1, the bound at 3 steps on the form at every S and on causal tiles from the counter, the
# FORM_MIN_S and SCHED variants that now carry the bounded slot), then the default against =0 by interleaved rounds.
# Prediction (from bench/pending_oslotband.sh's O_SLOT=1 readings, H100): D128 full S1024 +2.4-3.0 %, S1152 / S1280
# +1.5-2.5 %, S1408 and up +-0.3 % (12+ steps: q's slot, the same protocol as =0 but for the 8-arrival count and a
# predicated bar.sync), D256 S1k unchanged (not taken by default: O larger than V's slot).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_oslotmax.sh .carry" carry=[".carry"] timeout_s=420
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/coslotmax TILEC_LATE_FORMS=0
R=$(pwd); P=/tmp/oslotmax; mkdir -p $P/ex; ln -sf $R/examples/attn.tile $P/ex/
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
GPU_TEST_VARIANTS_ONLY=1 GPU_TEST_ATTN_VARIANTS=default,O_SLOT,FORM_MIN_S,SCHED TILEC_EXAMPLES=$R/examples timeout -k 10 240 \
  $B/tests/gpu_test_examples $P/ex > $L/ex.log 2>&1; echo "examples rc $?: $(tail -1 $L/ex.log) [$(el) s]"
grep -E "FAIL" $L/ex.log | head -5
timeout -k 10 150 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 \
  --cases 128:1024:0,128:1152:0,128:1280:0,128:1408:0,128:4096:0,128:16384:0,256:1024:0 \
  --forms default,TILEC_ATTN_O_SLOT=0 > $L/ab.log 2>&1; echo "ab rc $? [$(el) s]"
grep -E "^\| D|Error" $L/ab.log | cut -c1-120
