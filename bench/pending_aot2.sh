#!/bin/sh
# bench/pending_aot2.sh (branch aot2, twenty-fourth session; not run: no device this session): the AOT
# launchers' two images (docs/aot.md "Two images"): `tilec F.tile --emit=c` now embeds, for a kernel fed
# by TMA on sm_90a, its TMA form (the JIT's kernel) and its no-TMA form, and a launch picks one by the map
# test of every tensor the kernel maps (the no-TMA image loaded at the first launch that needs it);
# before, one image with the cp.async fallback inline (`--tma-fallback=inline`, still the opt-out).
# 1. correctness: gpu_test_aot -- the launchers of rmsnorm / gemm / attn against the JIT on random data
#    (outputs poisoned), a refused launch, the launch's host cost; then both images of cutlass_gemm and
#    cutlass_attn_fwd against the interpreter at ragged sizes: every tensor a map can take (the TMA form),
#    an offset view and an odd row stride (the no-TMA image), the TMA form again; then (5.) the GPU time.
#    Then the same binary under compute-sanitizer memcheck without the timing (GPU_AOT_TIMING=0).
# 2. the time a launch at 4096^3 (gpu_test_aot's section 5, one process, rounds rotated, medians): the JIT
#    (reference), the two-image launcher (its TMA form: the JIT's kernel, should be 1.00x) and the
#    one-image inline launcher (what --emit=c embedded before) for gemm.tile bf16 and the wide block-scaled
#    fp8 GEMM (examples/gemm_fp8_blockscale.tile, whose inline form spills 212 B); outputs
#    compared with the JIT's.  A short table last.  About 40-70 s warm.
#   here:   tools/carry.sh build        device: run command="sh bench/pending_aot2.sh .carry" carry=[".carry"] timeout_s=150
#   (or with others: OWED='aot2:120 ...' sh bench/owed.sh .carry)
. bench/pending_env.sh
export TILEC_EXAMPLES=$(pwd)/examples
echo "== 1. correctness [$(el) s]"
TILEC_CACHE_DIR=/tmp/aot2c timeout -k 10 100 $B/tests/gpu_test_aot > $L/aot.log 2>&1
echo "gpu_test_aot rc $? [$(el) s]: $(tail -1 $L/aot.log)"
grep -E "^FAIL" $L/aot.log | head -8 | cut -c1-220
GPU_AOT_TIMING=0 TILEC_CACHE_DIR=/tmp/aot2c timeout -k 10 100 compute-sanitizer --tool memcheck --print-limit 5 \
  $B/tests/gpu_test_aot > $L/memcheck.log 2>&1
echo "gpu_test_aot under memcheck rc $? [$(el) s]: $(grep -E '^(PASS|FAIL):' $L/memcheck.log | tail -1), $(grep -E 'ERROR SUMMARY' $L/memcheck.log | tail -1)"
echo "== table: both images against the interpreter; ms a launch at 4096^3 (JIT = reference; AOT two images"
echo "   = its TMA form, expected 1.00x; AOT inline = the one-image launcher of before)"
grep -E "^images:|^timing" $L/aot.log | sed 's/  */ /g' | cut -c1-200
echo "[$(el) s]"
