#!/bin/sh
# bench/pending_bsswap.sh (twenty-fifth session): examples/gemm_fp8_blockscale.tile is now the spelling at
# cutlass_gemm_fp8_tn's tile (128x256 x 4 on sm_90a, a column's weight scale a gather gather_runs splits into
# runs; was bench/variants/gemm_fp8_blockscale_wide.tile), the 128x128 spelling moved to
# bench/variants/gemm_fp8_blockscale_128.tile.  The wide kernel itself was measured (H200, twenty-third session:
# 0.915 / 0.955 of the per-tensor kernel); what is new is that the example's tests now run it:
# 1. gpu_test_examples on both files (GPU vs the interpreter, ragged rounds, outputs poisoned);
# 2. test_dot_types.py --only bs (the example, its 128x128 spelling and the hand-written select, bit-identical
#    to one another, against fp64 at the ragged sizes and three long-K ones), then the fp8 section (the old
#    example's 128x128 and 64x128 ring forms through the _128 variant);
# 3. bench.py --only fp8x --quick: the example and the _128 variant beside the per-tensor kernel at its
#    default tile and cuBLAS (predicted: example 0.90-0.96 of the per-tensor kernel, 0.85-0.90x cuBLAS
#    accurate; _128 0.72-0.80 of it).
#   here:   sh tools/carry.sh build        device: run command="sh bench/pending_bsswap.sh .carry" carry=[".carry"] timeout_s=200
. bench/pending_env.sh
export TILEC_EXAMPLES=$(pwd)/examples
D=/tmp/ex_bsswap && mkdir -p $D && cp examples/gemm_fp8_blockscale.tile bench/variants/gemm_fp8_blockscale_128.tile $D/
echo "== 1. gpu_test_examples on the example and the _128 variant [$(el) s]"
TILEC_CACHE_DIR=/tmp/c-bsswap timeout -k 10 100 $B/tests/gpu_test_examples $D > $L/bsswap_ex.log 2>&1
echo "gpu_test_examples rc $?: $(tail -1 $L/bsswap_ex.log)"
grep -E "^FAIL" $L/bsswap_ex.log | head -5 | cut -c1-220
echo "== 2. test_dot_types --only bs, then fp8 [$(el) s]"
for o in bs fp8; do
  TILEC_CACHE_DIR=/tmp/c-bsswap timeout -k 10 120 python3 tests/gpu/test_dot_types.py --lib $B/libtilec.so --only $o > $L/bsswap_dt_$o.log 2>&1
  echo "test_dot_types --only $o rc $?: $(grep -c '^ *ok' $L/bsswap_dt_$o.log) ok, $(grep -c FAIL $L/bsswap_dt_$o.log) FAIL; $(tail -1 $L/bsswap_dt_$o.log | cut -c1-120)"
  grep FAIL $L/bsswap_dt_$o.log | head -4 | cut -c1-220
done
echo "== 3. bench.py --only fp8x --quick [$(el) s]"
TILEC_CACHE_DIR=/tmp/c-bsswap timeout -k 10 120 python3 bench/bench.py --lib $B/libtilec.so --only fp8x --quick > $L/bsswap_bench.log 2>&1
echo "bench rc $?"
grep -E "^\| fp8" $L/bsswap_bench.log | cut -c1-200
echo "[$(el) s]"
