. bench/pending_env.sh
for f in 0 1; do for p in 0.0 0.2; do for s in 129 300; do
echo "== follow=$f pdrop=$p S=$s"; TILEC_RAND_FOLLOW=$f TILEC_CACHE_DIR=/tmp/cdk timeout 60 $B/tilec run tests/attn_variants/dropout.tile --kernel cutlass_attn_bwd_dropout -D D=128 --device --seed 7 --size Z=2 --size H=3 --size S=$s --scalar scale=0.1 --scalar pdrop=$p --scalar seed=99 2>&1 | grep -E "dK|dV" | cut -c1-200
done; done; done
