#!/bin/sh
# .carry-attn7/go.sh, call 2 (branch attn7): TILEC_ATTN_RED_CHAINS=all (4 reduction chains in the
# two-program attention kernels too) against the interpreter, then the twelve cases + S 2048 with the
# default, one chain (=0) and all chains (=all), each timed twice in the order A B C A B C (call 1's
# same-PTX rows differed by up to 6 % with their position).
set -u
C=$PWD/.carry-attn7; B=$C/b; L=${OUT:-/tmp/L}; mkdir -p $L; T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
export LD_LIBRARY_PATH=$B PYTHONUNBUFFERED=1
echo "== 1. correctness of RED_CHAINS=all [$(el) s]"
for a in "64 1 1000" "64 0 777" "128 1 1000" "128 0 777"; do set -- $a
  TILEC_ATTN_RED_CHAINS=all TILEC_CACHE_DIR=/tmp/c7r timeout 60 $B/tilec run examples/attn.tile --kernel cutlass_attn_fwd -D D=$1 -D CAUSAL=$2 \
    --size Z=1 --size H=3 --size S=$3 --scalar scale=0.088 --device > $L/rc_$1_$2.log 2>&1
  echo "chains=all D$1 causal $2 S$3: rc $? $(grep -E 'PASS|FAIL' $L/rc_$1_$2.log | tr '\n' ' ' | cut -c1-160)"
done
echo "== 2. bench [$(el) s]"
K="cutlass_attn_fwd,cutlass_attn_fwd@TILEC_ATTN_RED_CHAINS=0,cutlass_attn_fwd@TILEC_ATTN_RED_CHAINS=all"
BENCH_ATTN_NO_TRITON=1 TILEC_CACHE_DIR=/tmp/c7b timeout 300 python3 bench/bench.py --lib $B/libtilec.so.0.1 --only attn \
  --attn-cases 128:1024:0,128:1024:1,128:2048:0,128:2048:1,128:4096:0,128:4096:1,128:16384:0,128:16384:1,64:1024:0,64:1024:1,64:4096:0,64:4096:1,64:16384:0,64:16384:1 \
  --attn-kernels "$K,$K" > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -E "\| cuDNN \|" $L/bench.log | awk -F' [|] ' '{printf "%-44s %-20s %7s %7s\n", $1, $2, $3, $7}'
grep -E "FAILED|Error" $L/bench.log | head -5
