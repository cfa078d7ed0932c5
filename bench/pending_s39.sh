# bench/pending_s39.sh (thirty-ninth session): one call, any sm_90 card, ~4-6 min.
#   1. bench/pending_s38.sh (owed: the A-fragment rule's race fix on a GPU, its tests and on / off numbers; its own rule
#      for making it the default is in that script);
#   2. route_pipeline's rows-64 rule (a cutlass GEMM on sm_90a whose dots have 64 rows gets one warpgroup, wgmma.m64n256,
#      where 8 warps fell to mma.sync): bench/variants/gemm_rows64.tile against the interpreter at ragged sizes (4 and 8
#      warps, bf16 and fp8), then bench/rows64_ab.py.
# Predicted before any run (rule / 8 warps, time ratio inverted): bf16 1.3-1.6x (mma.sync peaks at ~0.6 of wgmma on
# Hopper; a 64x256 tile on one consumer warpgroup, 4 stages, no producer), fp8 1.8-2.5x (the 8-warp fp8 kernel spilled
# 372 B at 255 registers); x cuBLAS bf16 0.70-0.85, fp8 0.55-0.75 (one warpgroup a CTA issues every wgmma and waits on
# its own ring; 128x256 tiles on two do better).  Rule (written before): the rows-64 rule stays the default if every
# run of 2. passes and rule / 8 warps >= 1.05 at every case with none < 0.98; otherwise 8 warps come back (documented).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_s39.sh .carry" carry=[".carry"] timeout_s=560
. bench/pending_env.sh
sh bench/pending_s38.sh "$1"
echo "== rows64 [$(el) s]"
for k in cutlass_rows64_bf16 cutlass_rows64_fp8; do for w in "" --warps=8; do
  echo "$k $w: $(TILEC_CACHE_DIR=/tmp/c39 timeout 90 $B/tilec run bench/variants/gemm_rows64.tile --kernel $k $w --device --size M=300 --size N=520 --size K=700 2>&1 | grep -E 'PASS|FAIL|rror' | tail -2 | tr '\n' ' ' | cut -c1-200)"
done; done
TILEC_CACHE_DIR=/tmp/c39b timeout -k 10 150 python3 bench/rows64_ab.py --lib $B/libtilec.so --rounds 5 > $L/r64.log 2>&1
echo "rows64 bench rc $? [$(el) s]"; grep -E "^\||Error|error" $L/r64.log | cut -c1-220
