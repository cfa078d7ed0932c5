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
echo "== dot_acc_fold and the kn8 stages: the kernels whose PTX changed, against the interpreter [$(el) s]"
V=tests/cutlass_variants
r() { echo "$1: $(TILEC_CACHE_DIR=/tmp/c39f timeout 90 $B/tilec run "$@" --device 2>&1 | grep -E 'PASS|FAIL|rror' | tail -2 | tr '\n' ' ' | cut -c1-200)"; }
r $V/g_k0242.tile --kernel cutlass_gen_242 --size M=2100 --size N=2100 --size K=136 --scalar alpha=-1.25
r $V/cutlass_dotacc_after_f8.tile --kernel cutlass_dotacc_after_f8 --size M=300 --size N=520 --size K=200 --scalar s=1 --atol 32 --rtol 0.05
r $V/g_k0233.tile --kernel cutlass_gen_233 --size M=300 --size N=200 --size K=264
r $V/g_k0286.tile --kernel cutlass_gen_286 --size M=300 --size N=200 --size K=264 --scalar ks=72
r $V/g_k0062.tile --kernel cutlass_gen_62 --size M=300 --size N=200 --size K=264
r $V/v1_ifdot_in_loop.tile --kernel cutlass_v --size M=300 --size N=200 --size K=264 --scalar s=1
r $V/cutlass_loopdot_after_bf16.tile --kernel cutlass_loopdot_after_bf16 --size M=300 --size N=200 --size K=264
r tests/user_kernels/probe/v1.tile --kernel cutlass_v1 --size M=130 --size K=100 --size H=64 --size N=90
r tests/lit/passes/dot-acc-fold.tile --kernel cutlass_pluseq --size M=300 --size N=520 --size K=700
r tests/lit/passes/kn8-ws-stages.tile --kernel cutlass_fp8_kn --size M=300 --size N=520 --size K=700
echo "== rows64 [$(el) s]"
for k in cutlass_rows64_bf16 cutlass_rows64_fp8; do for w in "" --warps=8; do
  echo "$k $w: $(TILEC_ROWS64=1 TILEC_CACHE_DIR=/tmp/c39 timeout 90 $B/tilec run bench/variants/gemm_rows64.tile --kernel $k $w --device --size M=300 --size N=520 --size K=700 2>&1 | grep -E 'PASS|FAIL|rror' | tail -2 | tr '\n' ' ' | cut -c1-200)"
done; done
TILEC_CACHE_DIR=/tmp/c39b timeout -k 10 150 python3 bench/rows64_ab.py --lib $B/libtilec.so --rounds 5 > $L/r64.log 2>&1
echo "rows64 bench rc $? [$(el) s]"; grep -E "^\||Error|error" $L/r64.log | cut -c1-220
echo "== pending_s38 [$(el) s]"
sh bench/pending_s38.sh "$1"
