# bench/pending_ropeangle.sh (thirty-second session): RoPE fused into attention with k's table rows by angle addition
# (bench/variants/attn_rope_angle.tile: the [BN, HALF] rows of j = 0..BN-1 once before the loop, one [1, HALF] row of n0
# a step; the ring's stage 65 -> 33 KiB at D128) against examples/attn_rope.tile, the plain forward on pre-rotated q, k
# and the unfused pair (bench/rope_ab.py: interleaved rounds, every output against fp32 SDPA first).  Correct first:
# `tilec run --device` of the variant against the interpreter at ragged sizes.
# Predicted (before the run): the rotation reads 48 -> 16 KiB of shared memory a step (k's halves; the tables gone), so
# D128 fused 1.10-1.25x the example (x plain 0.50-0.62 -> 0.58-0.72), stages=3 another +0-5 %.  Revised from the SASS
# before any run (ptxas 13.0, D128 causal, the TMA entry's main loop): 1538 instructions against the example's 1404,
# LDS 22 / STS 20 / BAR 9 against 12 / 4 / 1 -- the [1, HALF] rows reach the rotation's layout through shared memory
# with a barrier each (a layout conversion the example's [BN, HALF] rows do not need): 0.9-1.1x the example.  Rule (written before):
# the variant becomes the example's D128 spelling if it reads >= 1.05x the example in all four D128 cases; else recorded.
#   device: run command="sh bench/pending_ropeangle.sh .carry" carry=[".carry"] timeout_s=240
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cra TILEC_LATE_FORMS=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
V=bench/variants/attn_rope_angle.tile
for c in "1 2 1000 1" "2 1 129 0" "1 3 127 1"; do set -- $c
  timeout -k 10 60 $B/tilec run $V --kernel cutlass_attn_rope_fwd -D D=128 -D CAUSAL=$4 --size Z=$1 --size H=$2 --size S=$3 \
    --scalar scale=0.0884 --device > $L/r$3.log 2>&1
  echo "angle D128 Z$1 H$2 S$3 causal $4 rc $?: $(grep -E 'PASS|FAIL' $L/r$3.log | tr '\n' ' ' | cut -c1-110)"
done
timeout -k 10 150 python3 bench/rope_ab.py --lib $B/libtilec.so --rounds 5 \
  --cases 128:1024:1,128:1024:0,128:4096:1,128:4096:0 --forms default,$V,$V@stages=3 > $L/rab.log 2>&1
echo "rope_ab rc $? [$(el) s]"
grep -E "^\| D|rror|\(D" $L/rab.log | cut -c1-130
