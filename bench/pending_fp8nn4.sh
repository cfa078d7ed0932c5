#!/bin/sh
# bench/pending_fp8nn4.sh (twenty-first session, branch fp8nn4): cutlass_gemm_fp8_nn's K-major-B form
# (the TN loop a launch with B stored [K, N] runs after the transpose kernel, or on a K-major B itself)
# now compiles at TN's sm_90a tile, 128x256 x 4 stages (passes/kmajor_form.c; byte for byte
# cutlass_gemm_fp8_tn's default PTX under promote and fast), not at the NN kernel's own 128x128 x 4;
# TILEC_KMAJOR_B_TILE=0 is the form as before.  Correctness first (test_dot_types's fp8 part: every NN
# kernel at ragged sizes against the fp64 product with B N-major / K-major / pitched / strided, and
# wherever the form runs its output bit-identical to cutlass_gemm_fp8_tn at the form's tile on B^T),
# then the forms on and off beside TN and cuBLAS fp8, predicted in bench/RESULTS.md "2026-12-05
# (twenty-first session), branch fp8nn4".  About 50-100 s warm.
#   here:   sh tools/carry.sh build
#   device: run command="sh bench/pending_fp8nn4.sh .carry" carry=[".carry"] timeout_s=150
. bench/pending_env.sh
echo "== 1. correctness: test_dot_types --only fp8 (fp8 TN forms, every NN kernel and view, the forms"
echo "   bit-identical to TN at their tile on B^T, a CUDA graph of transpose-form launches, blockscale)"
timeout -k 5 50 python3 tests/gpu/test_dot_types.py --lib "$B/libtilec.so" --examples examples --only fp8 > "$L/dot_fp8.log" 2>&1
TC="test_dot_types fp8 exit $?: $(grep -c '^ok' "$L/dot_fp8.log") ok, $(grep -c '^FAIL' "$L/dot_fp8.log") FAIL; $(tail -1 "$L/dot_fp8.log")"
echo "$TC"; grep -m8 FAIL "$L/dot_fp8.log"
echo "== 2. NN with the form at TN's tile (default) and at the kernel's (tile0) beside TN and cuBLAS fp8,"
echo "   5 rotated rounds, 4096^3 and 8192^3 [$(el) s]"
timeout -k 5 60 python3 bench/fp8_probe.py --lib "$B/libtilec.so" --sizes 4096,8192 --rounds 5 \
  --forms "tn,tn 128x128 s4,nn,nn tile0,nn kview,nn kview tile0,tn fast,nn fast,nn fast tile0" > "$L/fp8_probe.log" 2>&1
echo "fp8_probe.py exit $?"; grep -E "FAILED|Error|Traceback" "$L/fp8_probe.log" | head -3
# one line a form, both sizes: TFLOP/s, x cuBLAS (accurate for promote, fast for fast), rounds, rel. err
python3 bench/fp8_probe_table.py "$L/fp8_probe.log" 20
echo "correctness: $TC"
echo "[all: $(el) s]"
