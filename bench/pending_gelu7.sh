#!/bin/sh
# bench/pending_gelu7.sh (branch gelu7, eighteenth session; not run: no device that session): the scoped
# GELU approximation, TILEC_TANH_APPROX=2 (lib/narrow_store.h: tanh / sigmoid by tanh.approx.f32 only where
# the value reaches memory through a bf16 / f16 store after tame elementwise ops, with the packed staging
# words), predicted in bench/RESULTS.md "2026-12-05 (eighteenth session), branch gelu7".  =2 changes the
# PTX of exactly four example files (tools/ptxsnap.sh, 16 of 140 PTX files): gemm_bias_gelu.tile,
# swiglu.tile, llama/decode_fused.tile, llama/decode_splitk.tile; the run below tests exactly those.
# If it passes, =2 is meant to become the default (docs/decisions.md "gelu7").  About 140 s warm.
#   here:   tools/carry.sh build        device: run command="sh bench/pending_gelu7.sh .carry" carry=[".carry"] timeout_s=240
. bench/pending_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader 2>/dev/null
echo "== 0. the switch is read by this build: tanh.approx.f32 in swiglu.tile's PTX, unset / =2 (expected 0 / 32)"
N0=$(TILEC_TANH_APPROX= "$B/tilec" examples/swiglu.tile --arch=sm_90a -o - 2>&1 | grep -c 'tanh.approx.f32')
N2=$(TILEC_TANH_APPROX=2 "$B/tilec" examples/swiglu.tile --arch=sm_90a -o - 2>&1 | grep -c 'tanh.approx.f32')
echo "unset $N0, =2 $N2"
echo "== 1. correctness under TILEC_TANH_APPROX=2 (process-wide): the four files against the interpreter at ragged"
echo "   sizes, outputs poisoned (gpu_test_examples; gemm_bias_gelu also at its 8 GEMM sizes under =2 and =2 + WS=coop) [$(el) s]"
rm -rf /tmp/g7a /tmp/g7b; mkdir -p /tmp/g7a /tmp/g7b
cp examples/gemm_bias_gelu.tile examples/swiglu.tile /tmp/g7a/
cp examples/llama/decode_fused.tile examples/llama/decode_splitk.tile /tmp/g7b/
GPU_TEST_VARIANTS=TILEC_TANH_APPROX=2 TILEC_TANH_APPROX=2 TILEC_CACHE_DIR=/tmp/c7a timeout -k 10 70 "$B/tests/gpu_test_examples" /tmp/g7a \
  > "$L/ex_a.log" 2>&1 &
A=$!
TILEC_TANH_APPROX=2 TILEC_CACHE_DIR=/tmp/c7b timeout -k 10 70 "$B/tests/gpu_test_examples" /tmp/g7b > "$L/ex_b.log" 2>&1
RB=$?
wait $A; RA=$?
EXA="gemm_bias_gelu + swiglu: exit $RA, $(tail -1 "$L/ex_a.log")"
EXB="llama decode_fused + decode_splitk: exit $RB, $(tail -1 "$L/ex_b.log")"
echo "$EXA"; echo "$EXB"; grep -h -m5 FAIL "$L/ex_a.log" "$L/ex_b.log"
echo "== 2. linear + bias + GELU, unset (default) / =2 / =2 with EPI_PACK=0, beside the plain linear, cuBLAS and"
echo "   torch.compile, 4 rotated rounds, 8192x4096x4096 and 8192x14336x4096 [$(el) s]"
TILEC_CACHE_DIR=/tmp/c7l timeout -k 10 100 python3 bench/bench.py --lib "$B/libtilec.so" --only linear --quick --rounds 4 --warm-ms 300 \
  --linear-sizes 8192x4096x4096,8192x14336x4096 \
  --linear-variants "TILEC_TANH_APPROX=2,TILEC_TANH_APPROX=2+TILEC_EPI_PACK=0" > "$L/linear.log" 2>&1
echo "bench.py exit $?"; grep -E "FAILED|Error" "$L/linear.log" | head -3
echo "== table [$(el) s]"
echo "switch read: unset $N0 / =2 $N2 tanh.approx (want 0 / 32)"
echo "$EXA"; echo "$EXB"
grep -E "^linear [0-9]+x[0-9]+x[0-9]+, |^  (tilec|gelu)" "$L/linear.log"
echo "[all: $(el) s]"
