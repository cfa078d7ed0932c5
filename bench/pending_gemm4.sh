#!/bin/sh
# bench/pending_gemm4.sh: the GPU call branch gemm4 could not make (its device time went to finding
# what cuBLAS runs at 4096^3 and that the order of timing moves the ratio; bench/RESULTS.md "eighth
# session, branch gemm4", where the prediction is).  One call, about 3-4 minutes; tables last.
#
#   here:   tools/carry.sh                  (fills .carry/ from build/: stripped lib, CLI, GPU tests)
#   device: run command="sh bench/pending_gemm4.sh .carry" carry=[".carry"] timeout_s=420
#   (before the merge: /work/main/.carry-gemm4 holds the branch's build in b/ and its bench/ and
#   examples/: run command="sh .carry-gemm4/bench/pending_gemm4.sh .carry-gemm4" carry=[".carry-gemm4"])
#
#  1. correctness: gpu_test_examples on the cutlass GEMM examples under TILEC_EPI_PACK=1 (alone and
#     with TILEC_WS=coop), TILEC_TILE_PREFETCH=1 (alone and with the pack) and TILEC_TILE_GROUP=3,
#     against the interpreter at the GEMM sizes; `tilec run --device` of gemm.tile with each at a
#     ragged size, and compute-sanitizer racecheck / memcheck of the prefetch (persistent: 143 tiles);
#  2. the 4096^3 and 8192^3 forms in rotated rounds after a warm-up (gemm_probe.py): the default, the
#     pack, the prefetch, both, the group of 16, coop, coop + pack, cuBLAS's own form (256x128, coop, cluster 1x2) with
#     and without the pack;
#  3. bench.py --only gemm --rounds 5 on the three default shapes with the pack, prefetch, both and
#     coop rows, and the linear section (--quick) with the pack and prefetch rows (nn.Linear storage,
#     bias + GELU).
set -u
B=$(cd "${1:-.carry}" && pwd)/b
[ -d "$B" ] || B=$(cd "${1:-build}" && pwd)
R=$(cd "$(dirname "$0")/.." && pwd); L=${OUT:-/tmp}; T0=$(date +%s)  # R: the tree this script is in
el() { echo $(( $(date +%s) - T0 )); }
export LD_LIBRARY_PATH=$B TILEC_LIBRARY=$B/libtilec.so PYTHONUNBUFFERED=1 TILEC_CLI=$B/tilec
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader

echo "== 1. correctness (t=$(el)s)"
mkdir -p /tmp/g4ex && for f in gemm gemm_bias_gelu gemm_tf32 quant_int8_gemm gemm_fp8; do cp "$R/examples/$f.tile" /tmp/g4ex/; done
cp "$R/examples/llama/gemm_residual.tile" /tmp/g4ex/
TILEC_CACHE_DIR=/tmp/c-g4-1 GPU_TEST_VARIANTS=TILEC_EPI_PACK timeout 150 "$B/tests/gpu_test_examples" /tmp/g4ex \
  > "$L/examples_pack.log" 2>&1; echo "examples, TILEC_EPI_PACK: rc $? $(tail -1 "$L/examples_pack.log")"
grep -E "FAIL|mismatch" "$L/examples_pack.log" | head -5
TILEC_CACHE_DIR=/tmp/c-g4-1 GPU_TEST_VARIANTS=TILEC_TILE_PREFETCH timeout 150 "$B/tests/gpu_test_examples" /tmp/g4ex \
  > "$L/examples_prefetch.log" 2>&1; echo "examples, TILEC_TILE_PREFETCH: rc $? $(tail -1 "$L/examples_prefetch.log")"
grep -E "FAIL|mismatch" "$L/examples_prefetch.log" | head -5
mkdir -p /tmp/g4ex2 && cp "$R/examples/gemm.tile" /tmp/g4ex2/
TILEC_CACHE_DIR=/tmp/c-g4-2 GPU_TEST_VARIANTS=TILEC_TILE_GROUP timeout 60 "$B/tests/gpu_test_examples" /tmp/g4ex2 \
  > "$L/examples_group.log" 2>&1; echo "examples, TILEC_TILE_GROUP=3: rc $? $(tail -1 "$L/examples_group.log")"
for v in TILEC_EPI_PACK=1 TILEC_TILE_PREFETCH=1 "TILEC_TILE_PREFETCH=1 TILEC_EPI_PACK=1"; do
  echo "tilec run --device, $v:"; env $v TILEC_CACHE_DIR=/tmp/c-g4-3 timeout 60 "$B/tilec" run "$R/examples/gemm.tile" --device \
    --size M=1537 --size N=2600 --size K=333 2>&1 | tail -2
done
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in racecheck memcheck; do
  echo "compute-sanitizer $tool, TILEC_TILE_PREFETCH=1:"; TILEC_TILE_PREFETCH=1 TILEC_CACHE_DIR=/tmp/c-g4-3s timeout 120 \
    "$CS" --tool $tool "$B/tilec" run "$R/examples/gemm.tile" --device --size M=1537 --size N=2600 --size K=200 2>&1 | tail -3
done

echo "== 2. gemm_probe, rotated rounds (t=$(el)s)"
export PROBE_FORMS="pack=TILEC_EPI_PACK=1;prefetch=TILEC_TILE_PREFETCH=1;prefetch+pack=TILEC_TILE_PREFETCH=1+TILEC_EPI_PACK=1;coop+pack=TILEC_WS=coop+TILEC_EPI_PACK=1;cublas-form=TILEC_WS=coop+TILEC_CLUSTER=1x2|BM=256,BN=128;cublas-form+pack=TILEC_WS=coop+TILEC_CLUSTER=1x2+TILEC_EPI_PACK=1|BM=256,BN=128"
TILEC_CACHE_DIR=/tmp/c-g4-4 timeout 150 python3 "$R/bench/gemm_probe.py" --lib "$B/libtilec.so.0.1" --rounds 5 --rep 50 \
  --sizes 4096x4096x4096,8192x8192x8192 --forms default,pack,prefetch,prefetch+pack,g16,coop,coop+pack,cublas-form,cublas-form+pack \
  > "$L/probe.log" 2>&1; echo "probe rc $?"

echo "== 3. bench.py gemm (rounds) and linear (t=$(el)s)"
TILEC_CACHE_DIR=/tmp/c-g4-5 timeout 120 python3 "$R/bench/bench.py" --lib "$B/libtilec.so.0.1" --only gemm --quick --rounds 5 \
  --gemm-sizes 4096x4096x4096,8192x8192x8192,8192x28672x4096 --gemm-variants TILEC_EPI_PACK=1,TILEC_TILE_PREFETCH=1,TILEC_TILE_PREFETCH=1+TILEC_EPI_PACK=1,TILEC_WS=coop \
  --json "$L/gemm.json" > "$L/gemm.log" 2>&1; echo "gemm rc $?"
TILEC_CACHE_DIR=/tmp/c-g4-6 timeout 90 python3 "$R/bench/bench.py" --lib "$B/libtilec.so.0.1" --only linear --quick \
  --linear-no-compile --linear-variants TILEC_EPI_PACK=1,TILEC_TILE_PREFETCH=1,TILEC_TILE_PREFETCH=1+TILEC_EPI_PACK=1 --json "$L/linear.json" > "$L/linear.log" 2>&1; echo "linear rc $?"

echo "== tables (t=$(el)s)"
grep -E "^\| |rounds:|^cuBLAS" "$L/probe.log"
grep -E "rounds:|^\| gemm" "$L/gemm.log"
grep -E "^\| linear" "$L/linear.log"
