# bench/pending_s36.sh (thirty-sixth session): the GPU checks of that session's fixes not yet run on a GPU, in one
# call (~3-4 minutes, any sm_90 card): against the interpreter (`tilec run --device`),
#   - off-wgmma attention at D256 now on 8 warps (route_pipeline: 0 spills, was 2 496 B): attn.tile's attn_fwd and,
#     through its launch forms, cutlass_attn_fwd, S 300 / 1100;
#   - attn_decode_contig on the cutlass pipeline at GM 64 / 128 (q staged once and read by the peeled tail's dot:
#     refused before, lib/codegen/dot_plan.c);
#   - an MLA decode whose ring gives up streaming for a computed operand's staging (refused before: "dot staging
#     needs 233472 bytes");
#   - tests/gpu/attn_variants.sh (tests/attn_variants: 155 runs at S that pick the launch-time forms).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_s36.sh .carry" carry=[".carry"] timeout_s=480
. bench/pending_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
for S in 300 1100; do for k in attn_fwd cutlass_attn_fwd; do
  echo "$k D256 S=$S: $(timeout 120 $B/tilec run examples/attn.tile --kernel $k -D D=256 --device --size Z=1 --size H=2 --size S=$S --scalar scale=0.0625 2>&1 | tail -1)"
done; done
for GM in 64 128; do
  echo "attn_decode_contig cutlass GM=$GM: $(timeout 120 $B/tilec run examples/attn_decode.tile --kernel attn_decode_contig --pipeline=cutlass -D GM=$GM --device --size B=2 --size HKV=2 --size G=$GM --size S=700 --size BH=4 --size NS=3 --scalar scale=0.1 --scalar chunk=256 2>&1 | tail -1)"
done
echo "mla_decode (streaming given up for the staging): $(timeout 120 $B/tilec run tests/lit/codegen/stream-give-up-scratch.tile --kernel mla_decode --device --size B=2 --size H=32 --size S=300 --scalar scale=0.05 2>&1 | tail -1)"
timeout 400 sh tests/gpu/attn_variants.sh $B > $L/avar.log 2>&1; echo "attn_variants.sh rc $? [$(el) s]"
grep -v "^PASS" $L/avar.log | tail -12
