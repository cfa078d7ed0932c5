#!/bin/sh
# bench/pending_archtile.sh (eighteenth session, branch archtile): examples/gemm_fp8.tile's
# cutlass_gemm_fp8_tn now chooses its tile by target (ARCH_SPECIFIC, docs/language.md 5.1): 128x256 x 4
# stages on sm_90a, 128x128 x 5 elsewhere.  Correctness first (every kernel of the file against the
# interpreter at ragged sizes; the TN forms against the fp64 product, the old tile bit-identical to the
# new), then the new default beside the old tile (-D BN=128 -D S=5 and -D ARCH_SPECIFIC=0: the same
# kernel, the file's other-target choice) and cuBLAS fp8, predicted in bench/RESULTS.md "2026-12-05
# (eighteenth session), branch archtile".  About 80-120 s warm.
#   here:   sh tools/carry.sh build
#   device: run command="sh bench/pending_archtile.sh .carry" carry=[".carry"] timeout_s=150
. bench/pending_env.sh
echo "== 1. correctness: gpu_test_examples on gemm_fp8.tile (every kernel vs the interpreter, which sees the"
echo "   same ARCH); test_dot_types --only fp8tn (default 128x256 s4, the other targets' 128x128 s5 bit-identical"
echo "   to it, the promote forms; fp64 reference, NaN-poisoned outputs, 11 ragged sizes)"
mkdir -p /tmp/exarch && cp examples/gemm_fp8.tile /tmp/exarch/
# the default variant only at the GEMM sizes (GPU_TEST_VARIANTS): the switches' variants are earlier
# sessions' mechanisms (note: TILEC_WS=off and TILEC_PROMOTE_PARTS=0 spill at the new 128x256 tile)
GPU_TEST_VARIANTS=default TILEC_CACHE_DIR=/tmp/carch0 timeout -k 10 45 $B/tests/gpu_test_examples /tmp/exarch > $L/examples.log 2>&1
EX="gpu_test_examples gemm_fp8 rc $?: $(tail -1 $L/examples.log)"
echo "$EX"; grep -m5 '^FAIL' $L/examples.log
timeout -k 10 35 python3 tests/gpu/test_dot_types.py --lib "$B/libtilec.so" --examples examples --only fp8tn > "$L/dot_fp8tn.log" 2>&1
TC="test_dot_types fp8tn exit $?: $(grep -c '^ok' "$L/dot_fp8tn.log") ok, $(grep -c '^FAIL' "$L/dot_fp8tn.log") FAIL; $(tail -1 "$L/dot_fp8tn.log")"
echo "$TC"; grep -m5 FAIL "$L/dot_fp8tn.log"
echo "== 2. the default beside the old tile and cuBLAS fp8 (accurate), 3 rotated rounds, 4096^3 and 8192^3 [$(el) s]"
timeout -k 10 40 python3 bench/fp8_probe.py --lib "$B/libtilec.so" --sizes 4096,8192 --rounds 3 \
  --forms "tn,tn 128x128 s5,tn arch0,tn parts 128x256 s4" > "$L/fp8_probe.log" 2>&1
echo "fp8_probe.py exit $?"; grep -E "FAILED|Error|Traceback" "$L/fp8_probe.log" | head -3
# one line a form, both sizes: TFLOP/s, x cuBLAS accurate, the range over the rounds, rel. err
python3 bench/fp8_probe_table.py "$L/fp8_probe.log" 34
echo "correctness: $EX"
echo "correctness: $TC"
echo "[all: $(el) s]"
