#!/bin/sh
# bench/pending_gelu6.sh: the call gelu6 owes (sixteenth session, no device): linear + bias + GELU with
# TILEC_TANH_APPROX=1 (sigmoid / tanh by one tanh.approx.f32: one MUFU an element instead of two) and
# TILEC_EPI_PACK=1 (the staging words by one cvt.rn.bf16x2.f32: F2FP instead of two F2F), predicted in
# bench/RESULTS.md "2026-12-04 (sixteenth session), branch gelu6".  About 110 s warm.
#   here:   tools/carry.sh build
#   device: run command="sh bench/pending_gelu6.sh .carry" carry=[".carry"] timeout_s=240
#   (or with others: OWED='gelu6:180 ...' sh bench/owed.sh .carry)
. bench/pending_env.sh
echo "== 1. correctness: gemm_bias_gelu.tile against the interpreter at ragged sizes, outputs poisoned (gpu_test_examples:"
echo "   the 4 example rounds by default, then 8 GEMM sizes 1x1x1 .. 131x263x511, 1x300x511, 1537x2600x33 (143 tiles) under"
echo "   TILEC_TANH_APPROX=1 + TILEC_EPI_PACK=1 and TILEC_TANH_APPROX=1 + TILEC_WS=coop)"
mkdir -p /tmp/gelu6ex && cp examples/gemm_bias_gelu.tile /tmp/gelu6ex/
GPU_TEST_VARIANTS=TILEC_TANH timeout 100 "$B/tests/gpu_test_examples" /tmp/gelu6ex > "$L/ex_tanh.log" 2>&1
EX="gpu_test_examples exit $?: $(tail -1 "$L/ex_tanh.log")"; echo "$EX"; grep -m3 FAIL "$L/ex_tanh.log"
echo "== 2. the instruction's error (f32 results against float64, 2^22 arguments in [-12, 12]) [$(( $(date +%s) - T0 )) s]"
timeout 60 python3 bench/tanh_approx_err.py --lib "$B/libtilec.so" 2>&1 | tail -6
echo "== 3. linear + bias + GELU beside the plain linear, cuBLAS and torch.compile, 3 rotated rounds [$(( $(date +%s) - T0 )) s]"
timeout 150 python3 bench/bench.py --lib "$B/libtilec.so" --only linear --quick --rounds 3 --warm-ms 500 \
  --linear-sizes 8192x4096x4096,8192x14336x4096 \
  --linear-variants "TILEC_EPI_PACK=1,TILEC_TANH_APPROX=1,TILEC_TANH_APPROX=1+TILEC_EPI_PACK=1,TILEC_TANH_APPROX=1+TILEC_EPI_PACK=1+TILEC_WS=coop,TILEC_TANH_APPROX=1+TILEC_EPI_PACK=1+TILEC_TILE_PREFETCH=1" \
  > "$L/linear.log" 2>&1
echo "bench.py exit $?"; grep -E "FAILED|Error" "$L/linear.log" | head -3
grep -E "^linear [0-9]|^  (tilec|gelu)" "$L/linear.log"
echo "correctness: $EX"
echo "[all: $(( $(date +%s) - T0 )) s]"
