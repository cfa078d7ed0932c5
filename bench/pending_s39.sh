# bench/pending_s39.sh (thirty-ninth session): one call, any sm_90 card, ~4-6 min.
#   0. the kernels whose code dot_acc_fold (acc + dot(a, b) folded) and swpipe's kn8 stages changed, on the GPU against
#      the interpreter;
#   1. (last) bench/pending_s38.sh (owed: the A-fragment rule's race fix on a GPU, its tests and on / off numbers; its own rule
#      for making it the default is in that script);
#   2. route_pipeline's rows-64 rule (a cutlass GEMM on sm_90a whose dots have 64 rows gets one warpgroup, wgmma.m64n256,
#      where 8 warps fell to mma.sync): bench/variants/gemm_rows64.tile against the interpreter at ragged sizes (4 and 8
#      warps, bf16 and fp8), then bench/rows64_ab.py.
# Predicted before any run (rule / 8 warps, time ratio inverted): bf16 1.3-1.6x (mma.sync peaks at ~0.6 of wgmma on
# Hopper; a 64x256 tile on one consumer warpgroup, 4 stages, no producer), fp8 1.8-2.5x (the 8-warp fp8 kernel spilled
# 372 B at 255 registers); x cuBLAS bf16 0.70-0.85, fp8 0.55-0.75 (one warpgroup a CTA issues every wgmma and waits on
# its own ring; 128x256 tiles on two do better).  Rule (written before): the rows-64 rule (TILEC_ROWS64=1, opt-in) becomes the default if every
# run of 2. passes and rule / 8 warps >= 1.05 at every case with none < 0.98; otherwise it stays opt-in (documented).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_s39.sh .carry" carry=[".carry"] timeout_s=560
. bench/pending_env.sh
sh bench/pending_s39q.sh "$1"   # 0 and 2: the changed kernels, the rows-64 kernels and rows64_ab.py
echo "== pending_s38 [$(el) s]"
sh bench/pending_s38.sh "$1"
