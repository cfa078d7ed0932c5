#!/bin/sh
# bench/pending_exrest.sh (seventeenth session): gpu_test_examples over the files owed call 1 left
# unchecked (the third with attn.tile and attn_rope.tile ran past its limit inside attn_rope.tile), at
# the defaults: attn_rope.tile, then the small files, in two processes.  ~60-90 s warm.
#   here: tools/carry.sh build     device: run command="OWED='exrest:120 ...' sh bench/owed.sh .carry" carry=[".carry"]
. bench/pending_env.sh
mkdir -p /tmp/exr0 /tmp/exr1
cp examples/attn_rope.tile /tmp/exr0/
for f in embedding_rmsnorm gemm_fp8 gemm_tf32 moe_gemm rmsnorm softmax topk_sample; do cp examples/$f.tile /tmp/exr1/; done
TILEC_CACHE_DIR=/tmp/cxr0 timeout 110 $B/tests/gpu_test_examples /tmp/exr0 > $L/exr0.log 2>&1 &
P=$!
TILEC_CACHE_DIR=/tmp/cxr1 timeout 110 $B/tests/gpu_test_examples /tmp/exr1 > $L/exr1.log 2>&1
R1=$?
wait $P; R0=$?
grep -hE '^FAIL' $L/exr0.log $L/exr1.log | head -10
echo "examples attn_rope rc $R0: $(tail -1 $L/exr0.log)"
echo "examples 7 small files rc $R1: $(tail -1 $L/exr1.log)"
echo "[$(el) s]"
