# bench/pending_pp28.sh (twenty-eighth session): three questions in one call, each by interleaved rounds.
# 1. fp8 fast accumulation on the ping-pong kernel (128x128 a warpgroup, 4 / 5 stages) beside the cooperative
#    128x256 default: does hiding the epilogue win back the 4096^3 gap (0.962x cuBLAS fast there, 0.993 at 8192^3)?
#    Predicted 0.95-1.02x of "tn fast" at 4096^3 (the epilogue hidden, 1.33x the shared-memory bytes a FLOP).
# 2. causal attention at short S through the fa3 form with tiles from the counter (TILEC_ATTN_SCHED=1) now that the
#    bounded O through the last stage is the default (1..8-step tiles all take it): D128 S1k / 2k / 4k, D256 S1k / 4k.
# 3. the slot at every tile of S2k / S4k full (TILEC_ATTN_O_SLOT_MAX=40) beside the default and =0, again.
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_pp28.sh .carry" carry=[".carry"] timeout_s=400
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cpp28 TILEC_LATE_FORMS=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
BENCH_INTERLEAVE=1 timeout -k 10 120 python3 bench/fp8_probe.py --lib $B/libtilec.so --sizes 4096,8192 --rounds 9 \
  --forms "tn fast,tn fast pingpong 128x128 w4 s4,tn fast pingpong 128x128 w4 s5" > $L/fp8.log 2>&1; echo "fp8 rc $? [$(el) s]"
timeout -k 10 150 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 \
  --cases 128:1024:1,128:2048:1,128:4096:1,256:1024:1,256:4096:1 \
  --forms default,TILEC_ATTN_FORM_MIN_S=1,fs@TILEC_ATTN_FORM_MIN_S=1@TILEC_ATTN_SCHED=1,fs0@TILEC_ATTN_FORM_MIN_S=1@TILEC_ATTN_SCHED=1@TILEC_ATTN_O_SLOT=0,fs1@TILEC_ATTN_FORM_MIN_S=1@TILEC_ATTN_SCHED=1@TILEC_ATTN_O_SLOT=1 \
  > $L/cs.log 2>&1; echo "causal rc $? [$(el) s]"
timeout -k 10 80 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 --cases 128:2048:0,128:4096:0 \
  --forms default,max40@TILEC_ATTN_O_SLOT_MAX=40,TILEC_ATTN_O_SLOT=0 > $L/m40.log 2>&1; echo "max40 rc $? [$(el) s]"
grep -E "^\||Error" $L/fp8.log | cut -c1-150 | tail -8
grep -hE "^\| D|Error" $L/cs.log $L/m40.log | cut -c1-120
