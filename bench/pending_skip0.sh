# bench/pending_skip0.sh: TILEC_ATTN_SKIP0=1 (emit_overlap.c cg_overlap_issue: the fa3 form's iteration 0 commits an
# empty wgmma group instead of the late value dot of P = 0), correctness first, then on / off launch by launch.
# Prediction (written before any call, twenty-seventh session): the dot of P = 0 is half a step of tensor work a
# tile (1 / 17 of an S1k D128 tile's: 8 steps of a score and a value dot, plus that one), so D128 S1k full +3-6 %
# (fa3 persistent), S4k full / causal +1-2 %, S16k +0-0.5 %; the two-program kernels (D64, D128 S1k causal) and the
# 2-stage D256 rings have no late dot: unchanged (PTX byte-identical there).  SASS: the empty group is one dummy
# HGMMA.64x8x16 (lit attn-skip0-sass.test).  Rule for a default: median >= 1.02x where it applies, no round < 0.99x.
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_skip0.sh .carry" carry=[".carry"] timeout_s=420
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cskip0 TILEC_LATE_FORMS=0
R=$(pwd); P=/tmp/skip0; mkdir -p $P/ex; ln -sf $R/examples/attn.tile $P/ex/
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
GPU_TEST_VARIANTS_ONLY=1 GPU_TEST_ATTN_VARIANTS=TILEC_ATTN_SKIP0 TILEC_EXAMPLES=$R/examples timeout -k 10 200 \
  $B/tests/gpu_test_examples $P/ex > $L/ex.log 2>&1; echo "examples rc $?: $(tail -1 $L/ex.log) [$(el) s]"
grep -E "FAIL" $L/ex.log | head -5
timeout -k 10 180 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 --interleave 1 \
  --cases 128:1024:0,128:4096:0,128:4096:1,128:16384:0,128:16384:1,64:1024:0,256:1024:0 \
  --forms default,TILEC_ATTN_SKIP0=1 > $L/ab.log 2>&1; echo "ab rc $? [$(el) s]"
grep -E "^\||Error" $L/ab.log | cut -c1-140
