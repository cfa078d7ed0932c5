#!/bin/sh
# bench/pending_bwd9.sh (twenty-sixth session; ~200 s): the dQ kernel on 128 queries and two warpgroups (`dq128`:
# 8 warps, 64 keys a step; D128 3 stages, one CTA an SM, 202 registers; D64 4 stages, two CTAs an SM, 127
# registers) against the example's 64 queries on one warpgroup, alone and with TILEC_WGMMA_LAZY_WIDE=1, on the
# whole backward, two rounds in reversed order.  Predicted (bench/RESULTS.md "bwd9"): dQ kernel 1.05-1.20x at
# D128 and D64 (two warpgroups share one K/V stream; at D64 16 warps an SM instead of 8), the whole +2-8 %;
# lazywide +0-3 % on the whole at D128 (the dK/dV kernel +7 % measured).  Rule, written before the run: a
# variant becomes the default if D128 (or D64) full and causal each gain >= 2 % in both rounds with rel. err
# beside the default's.
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_bwd9.sh .carry" carry=[".carry"] timeout_s=300
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cbwd9
r=0
for order in default,dq128,lazywide,lazywide-dq128 lazywide-dq128,lazywide,dq128,default; do
  r=$((r + 1))
  timeout -k 10 130 python3 bench/bench.py --lib $B/libtilec.so --only attnbwd --quick \
    --attnbwd-cases 128:4096:0,128:4096:1,64:4096:0,64:4096:1 --attnbwd-variants $order > $L/bwd9_bench_$r.log 2>&1
  echo "round $r ($order) rc $? [$(el) s]"
done
echo "== kernels (ms; r1 then r2)"
grep -h "dK/dV kernel" $L/bwd9_bench_1.log $L/bwd9_bench_2.log | cut -c1-150
echo "== table (x cuDNN; r1 then r2)"
grep -hE "^attn bwd D.* cuDNN" $L/bwd9_bench_1.log $L/bwd9_bench_2.log | cut -c1-150
grep -h "Error\|error\|Traceback" $L/bwd9_bench_*.log | head -5
echo "[$(el) s]"
