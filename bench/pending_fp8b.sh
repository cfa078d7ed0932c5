#!/bin/sh
# bench/pending_fp8b.sh: the GPU call branch fp8b could not make (its device time went to the two calls
# of bench/RESULTS.md "ninth session, branch fp8b", before the cooperative kernel became the default
# for fp8 promote on 8 warps).  One call, about a minute; the table last.
#
#   here:   tools/carry.sh                  (fills .carry/ from build/: stripped lib, CLI, GPU tests)
#   device: run command="sh bench/pending_fp8b.sh .carry" carry=[".carry"] timeout_s=240
#
#  1. correctness: gpu_test_examples on gemm_fp8.tile (its default cutlass_gemm_fp8_tn is now the
#     8-warp cooperative kernel) at the GEMM sizes, default and every TILEC_WS variant (off = the ring),
#     against the interpreter; racecheck and memcheck of `tilec run --device` at 200x300x511;
#  2. fp8_probe.py: the new default beside the ring, 6 stages, the old 64x128 tile, cuBLAS fp8;
#  3. bench.py --only fp8,fp8x --quick (the sections on the new default; blockscale vs per-tensor).
set -u
B=$(cd "${1:-.carry}" && pwd)/b
[ -d "$B" ] || B=$(cd "${1:-build}" && pwd)
R=$(cd "$(dirname "$0")/.." && pwd); L=${OUT:-/tmp}; T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
export LD_LIBRARY_PATH=$B TILEC_LIBRARY=$B/libtilec.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader
echo "== 1. correctness (t=$(el)s)"
mkdir -p /tmp/f8p && cp "$R/examples/gemm_fp8.tile" /tmp/f8p/
TILEC_CACHE_DIR=/tmp/c-f8p-1 GPU_TEST_VARIANTS=TILEC_WS timeout 120 "$B/tests/gpu_test_examples" /tmp/f8p > "$L/examples_ws.log" 2>&1
echo "examples gemm_fp8.tile, default + TILEC_WS variants: rc $? $(tail -1 "$L/examples_ws.log")"
grep -E "FAIL|mismatch" "$L/examples_ws.log" | head -5
for tool in racecheck memcheck; do
  TILEC_CACHE_DIR=/tmp/c-f8p-$tool timeout 60 compute-sanitizer --tool $tool "$B/tilec" run "$R/examples/gemm_fp8.tile" \
    --kernel cutlass_gemm_fp8_tn --size M=200 --size N=300 --size K=511 --device > "$L/$tool.log" 2>&1
  echo "$tool: rc $? $(grep -E 'SUMMARY|PASS|FAIL' "$L/$tool.log" | tr '\n' ' ' | cut -c1-200)"
done
echo "== 2. forms (t=$(el)s)"
TILEC_CACHE_DIR=/tmp/c-f8p-2 timeout 120 python3 "$R/bench/fp8_probe.py" --lib "$B/libtilec.so" --sizes 4096,8192 --rounds 3 \
  --forms "tn,tn ring,tn s6,tn ring 64x128 w4 s3,tn fast 128x256 w8 s4,nn" 2>&1 | tee "$L/probe.log" | grep -E "^\||FAIL|rror" | tail -20
echo "== 3. bench.py fp8, fp8x (t=$(el)s)"
TILEC_CACHE_DIR=/tmp/c-f8p-3 timeout 120 python3 "$R/bench/bench.py" --lib "$B/libtilec.so" --only fp8,fp8x --quick 2>&1 | tail -12
echo "done t=$(el)s"
