# bench/pending_s37b.sh (thirty-seventh session): dropout -- cutlass_attn_bwd_dropout at D 128 (refused before: dO's
# slot read by a wgmma and an mma.sync dot) and TILEC_RAND_FOLLOW=1 (layout_assign: the keep mask in the accumulator
# layout; emit_random: two lanes share a Philox block) on and off against the interpreter, then timed on / off
# (bench/switch_ab.py's dropout kernels).  Rule written before: TILEC_RAND_FOLLOW on by default if the forward and the backward at
# D 64 and 128 are all >= 1.00x off (medians of per-round ratios) and every run PASSes.  (~4 minutes, any sm_90 card)
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_s37b.sh .carry" carry=[".carry"] timeout_s=420
. bench/pending_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
tr1() { # FILE KERNEL ARGS...: tilec run --device against the interpreter, its last line
  _f=$1 _k=$2; shift 2
  echo "${TILEC_RAND_FOLLOW:+follow=$TILEC_RAND_FOLLOW }$_k $*: $(TILEC_CACHE_DIR=/tmp/c37 timeout 90 $B/tilec run $_f --kernel $_k --device --seed 7 "$@" 2>&1 | grep -E "PASS|FAIL|rror" | tail -2 | tr '\n' ' ' | cut -c1-230)"
}
# dropout: the D128 backward (refused before), and TILEC_RAND_FOLLOW=1 (the mask in the accumulator layout), against
# the interpreter; then its timing against the default (bench/switch_ab.py's dropout kernels)
for f in 0 1; do for d in 64 128; do for s in 77 300; do
  (export TILEC_RAND_FOLLOW=$f; tr1 tests/attn_variants/dropout.tile cutlass_attn_bwd_dropout -D D=$d --size Z=2 --size H=3 --size S=$s --scalar scale=0.1 --scalar pdrop=0.2 --scalar seed=99)
done; done; done
for d in 64 128; do for s in 77 300; do
  (export TILEC_RAND_FOLLOW=1; tr1 tests/attn_variants/dropout.tile cutlass_attn_dropout -D D=$d --size Z=2 --size H=3 --size S=$s --scalar scale=0.1 --scalar pdrop=0.2 --scalar seed=99)
done; done
echo "[$(el) s]"
TILEC_CACHE_DIR=/tmp/c37d timeout 200 python3 bench/switch_ab.py --lib $B/libtilec.so --file tests/attn_variants/dropout.tile --switch TILEC_RAND_FOLLOW \
  --kernels cutlass_attn_dropout:dropout,cutlass_attn_bwd_dropout:bwd_dropout --rounds 7 2>&1 | grep -E "^\||Error|error" | head -12
echo "[$(el) s]"
