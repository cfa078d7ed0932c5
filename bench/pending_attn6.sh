#!/bin/sh
# bench/pending_attn6.sh: the call attn6 (fourteenth session) owes for TILEC_ATTN_WS=fa3 after the merge
# (bench/RESULTS.md "branch attn6"): its correctness in a TMA form (24 / 240 registers; the three
# measured calls ran the inline fallback's 40 / 232), then fa3 with the softmax's row reductions in 4
# chains against one (TILEC_ATTN_RED_CHAINS=0) and the default, the D128 cases in one process.
# Predicted: chains 1.02-1.05x one chain at S4k / S16k, S1k within noise; the TMA form within 2 % of
# the inline numbers (0.94 / 0.94 x cuDNN at S4k full / causal).  About 90 s warm.
#   here:   tools/carry.sh
#   device: run command="sh bench/pending_attn6.sh .carry" carry=[".carry"] timeout_s=240
set -u
B=$(cd "${1:-.carry}" && pwd)/b
[ -d "$B" ] || B=$(cd "${1:-build}" && pwd)
R=$(pwd); L=${OUT:-/tmp/L}; mkdir -p $L; T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
export LD_LIBRARY_PATH=$B PYTHONUNBUFFERED=1
mkdir -p /tmp/ex6 && cp examples/attn.tile /tmp/ex6/
echo "== 1. fa3 against the interpreter (gpu_test_examples' fa3 variants) and racecheck [$(el) s]"
( for c in "128 0" "128 1"; do set -- $c
  TILEC_ATTN_WS=fa3 TILEC_CACHE_DIR=/tmp/c6s timeout 60 compute-sanitizer --tool racecheck $B/tilec run examples/attn.tile \
    --kernel cutlass_attn_fwd -D D=$1 -D CAUSAL=$2 -D BN=128 --size Z=1 --size H=140 --size S=256 --scalar scale=0.088 --device > $L/a6_san_$1_$2.log 2>&1
  echo "racecheck fa3 D$1 causal $2 H140 S256: rc $? $(grep -E 'SUMMARY|FAIL' $L/a6_san_$1_$2.log | tr '\n' ' ' | cut -c1-160)"
done > $L/a6_san.txt ) &
SP=$!
GPU_TEST_ATTN_VARIANTS=fa3 TILEC_CACHE_DIR=/tmp/c6e timeout 120 $B/tests/gpu_test_examples /tmp/ex6 > $L/a6_examples.log 2>&1
RC=$?
wait $SP; cat $L/a6_san.txt
echo "examples rc $RC: $(tail -1 $L/a6_examples.log)"
[ $RC -eq 0 ] || { grep -E "^FAIL" $L/a6_examples.log | head; exit 1; }
echo "== 2. D128: default, fa3, fa3 with one reduction chain [$(el) s]"
BENCH_ATTN_NO_TRITON=1 TILEC_CACHE_DIR=/tmp/c6b timeout 150 python3 bench/bench.py --lib $B/libtilec.so.0.1 --only attn \
  --attn-cases 128:1024:0,128:1024:1,128:4096:0,128:4096:1,128:16384:0,128:16384:1 \
  --attn-kernels "cutlass_attn_fwd,cutlass_attn_fwd@TILEC_ATTN_WS=fa3:BN=128,cutlass_attn_fwd@TILEC_ATTN_WS=fa3@TILEC_ATTN_RED_CHAINS=0:BN=128" \
  > $L/a6_bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -E "cuDNN" $L/a6_bench.log | grep -v "^|" | awk -F'|' '{printf "%-66s %-18s %8s %16s %8s\n", $1, $2, $3, $4, $7}'
