#!/bin/sh
# bench/pending_bwd7.sh CARRY (branch bwd7, nineteenth session; ~140 s, <= 155 s): the one-pass attention
# backward (bench/variants/attn_bwd_fused.tile, TILEC_ATOMIC_TMA=1) with TILEC_WGMMA_LAZY=1 (wgmma_lazy.c:
# each wgmma group waited for before its result's first reader, dP^T issued under S^T's group) and
# TILEC_WGMMA_STAGED_A=1 (emit_dot.c stage_wgmma_a: dQ = dS K on wgmma, dS^T staged MN-major), D64 (D128
# refuses both: its kernels are the off ones, a noise control); bench/RESULTS.md "bwd7" (the per-step model,
# bench/bwd_model.py, and the prediction).  Here: `sh tools/carry.sh build`; then on the device
#   run command="sh bench/pending_bwd7.sh .carry" carry=[".carry"] timeout_s=175
# 1. correctness: tests/gpu/test_attn_bwd_fused.py --modes 1 with both switches (fp64 autograd at S 1 / 127 /
#    129 / 1000 / 4097, D64, D128, D64 128-key, causal and not, outputs NaN-poisoned); bench/bwd_once.py at
#    S 1000 causal (two heads against fp64) for lazy alone, dQ on wgmma alone, TILEC_ATOMIC_TMA=2 at 3 stages
#    with lazy
# 2. bench.py --only attnbwd --quick, S4096 Z4 H16, beside FA2 and cuDNN in one process, all four cases:
#    fused-tma (off), fused-tma-lazy, fused-tma-sa, fused-tma-lazy-sa, fused-tma2-s3 / fused-tma2-lazy-s3
#    (TILEC_ATOMIC_TMA=2 at 3 stages: two CTAs an SM at D64, the reduce's read waited two steps back, one
#    barrier less), fused-tma-probe-nodq / fused-tma-lazy-probe-nodq (timing probes, dQ wrong by design:
#    no dQ path, bench/variants/attn_bwd_fused_nodq_probe.tile), default, lazy (the three kernels with the
#    switch: their D64 dK/dV and dQ and D128's dQ change)
# 3. tests/gpu/test_attn_bwd.py with TILEC_WGMMA_LAZY=1 (the three kernels at ragged S) while under 110 s;
#    round 2 (D64 full, reversed, + fused-tma-lazy-split) while under 105 s; ncu of one launch (D64 full off /
#    lazy, D128 full: pipes and the top stall reasons, bench/bwd_once.py) while under 133 s
# 4. a short table last: x cuDNN per variant; fused kernel time off / on, the probes' and =2's ratios
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cbwd7
echo "== 1. correctness [$(el) s]"
TILEC_WGMMA_LAZY=1 TILEC_WGMMA_STAGED_A=1 timeout 30 python3 tests/gpu/test_attn_bwd_fused.py --lib $B/libtilec.so.0.1 \
  --modes 1 > $L/test_fused.log 2>&1
echo "test_attn_bwd_fused (lazy + dQ on wgmma, TMA reduce) rc $? [$(el) s]: $(tail -1 $L/test_fused.log)"
grep -E "^FAIL|self-test" $L/test_fused.log | head -8
c=64:1000:1  # ragged S, causal, two heads against fp64: lazy alone; dQ on wgmma alone; =2 at 3 stages, lazy
TILEC_ATOMIC_TMA=1 TILEC_WGMMA_LAZY=1 timeout 12 python3 bench/bwd_once.py --lib $B/libtilec.so.0.1 $c > $L/once_l.log 2>&1
echo "bwd_once lazy $c rc $? [$(el) s]: $(grep -h '^once' $L/once_l.log)"
TILEC_ATOMIC_TMA=1 TILEC_WGMMA_STAGED_A=1 timeout 12 python3 bench/bwd_once.py --lib $B/libtilec.so.0.1 $c > $L/once_s.log 2>&1
echo "bwd_once dQ on wgmma $c rc $? [$(el) s]: $(grep -h '^once' $L/once_s.log)"
TILEC_ATOMIC_TMA=2 TILEC_WGMMA_LAZY=1 timeout 12 python3 bench/bwd_once.py --lib $B/libtilec.so.0.1 $c --stages 3 \
  > $L/once_2.log 2>&1
echo "bwd_once TMA=2 lazy stages 3 $c rc $? [$(el) s]: $(grep -h '^once' $L/once_2.log)"
echo "== 2. bench [$(el) s]"
V=fused-tma,fused-tma-lazy,fused-tma-sa,fused-tma-lazy-sa,fused-tma2-s3,fused-tma2-lazy-s3,fused-tma-probe-nodq,fused-tma-lazy-probe-nodq,default,lazy
timeout 85 python3 bench/bench.py --lib $B/libtilec.so.0.1 --only attnbwd --quick \
  --attnbwd-cases 64:4096:0,64:4096:1,128:4096:0,128:4096:1 --attnbwd-variants $V > $L/bench_1.log 2>&1
echo "bench round 1 rc $? [$(el) s]"
if [ "$(el)" -lt 110 ]; then
  TILEC_WGMMA_LAZY=1 timeout 35 python3 tests/gpu/test_attn_bwd.py --lib $B/libtilec.so.0.1 > $L/test_3k.log 2>&1
  echo "test_attn_bwd (lazy, three kernels) rc $? [$(el) s]: $(tail -1 $L/test_3k.log)"
  grep -E "^FAIL" $L/test_3k.log | head -8
else
  echo "test_attn_bwd (lazy) skipped (past 110 s): the bench rows' err column checks the lazy three kernels at S 4096"
fi
: > $L/bench_2.log
if [ "$(el)" -lt 105 ]; then
  timeout 25 python3 bench/bench.py --lib $B/libtilec.so.0.1 --only attnbwd --quick \
    --attnbwd-cases 64:4096:0 --attnbwd-variants lazy,default,fused-tma-lazy-sa,fused-tma-lazy-split,fused-tma-lazy,fused-tma \
    > $L/bench_2.log 2>&1
  echo "bench round 2 rc $? [$(el) s]"
else
  echo "bench round 2 skipped (past 105 s)"
fi
for r in 1 2; do grep -E "^attn bwd D.*: (pre\+zero|dK/dV kernel)|FAILED|Error|error" $L/bench_$r.log | sed "s/^/  r$r /" | cut -c1-170; done
echo "== 3. ncu, one launch of the fused kernel: D64 full off / lazy, D128 full: where its step waits [$(el) s]"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
. bench/ncu_metrics.sh
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,\
sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,$NCU_PIPES,$NCU_STALLS
for c in 64:0 64:1 128:0; do
  D=${c%:*}; z=${c#*:}
  if [ -z "$NCU" ] || [ "$(el)" -ge 133 ]; then echo "ncu D$D lazy=$z skipped (no ncu, or past 133 s)"; continue; fi
  TILEC_ATOMIC_TMA=1 TILEC_WGMMA_LAZY=$z timeout 15 "$NCU" --metrics "$M" --kernel-name regex:attn_bwd_fused \
    --launch-count 1 --csv --page raw python3 bench/bwd_once.py --lib $B/libtilec.so.0.1 $D:4096:0 \
    > $L/ncu_${D}_$z.csv 2> $L/ncu_${D}_$z.err
  echo "ncu D$D lazy=$z rc $? [$(el) s]: $(grep -h '^once' $L/ncu_${D}_$z.csv)"
  python3 bench/ncu_csv.py attn $L/ncu_${D}_$z.csv 2>&1 | tail -1 | sed "s/^/  D$D lazy=$z /" | cut -c1-230
done
echo "== 4. table (x cuDNN of the same process; err = max rel. err of dQ/dK/dV vs fp64) [$(el) s]"
for r in 1 2; do
  grep -E "^attn bwd .*\| cuDNN SDPA \|" $L/bench_$r.log | awk -F' [|] ' -v r=$r '{printf "r%s %-62s %8s ms x cuDNN %s err %s\n", r, $2, $3, $7, $8}'
done
for r in 1 2; do
  awk -v r=$r '/: pre\+zero/ {c=$3" "$4" "$5; v=$6; sub(":","",v); t[c" "v]=$12}
    END {for (w in t) if (w ~ /lazy/) {o=w; sub(/-lazy/,"",o); sub(/-split$/,"",o); if (o in t)
      printf "r%s %s fused kernel %s / lazy: %.3f (%s / %s ms)\n", r, w, substr(o, index(o, "fused")), t[o] / t[w], t[o], t[w]}
      for (w in t) if (w ~ /probe-nodq$/) {o=w; sub(/-probe-nodq$/,"",o); if (o in t)
      printf "r%s %s: the dQ path, %s / probe: %.3f (%s / %s ms)\n", r, w, substr(o, index(o, "fused")), t[o] / t[w], t[o], t[w]}
      for (w in t) if (w ~ /-sa$/) {o=w; sub(/-sa$/,"",o); if (o in t)
      printf "r%s %s: dQ on wgmma, %s / it: %.3f (%s / %s ms)\n", r, w, substr(o, index(o, "fused")), t[o] / t[w], t[o], t[w]}
      for (w in t) if (w ~ /tma2/) {o=w; sub(/tma2/,"tma",o); sub(/-s3$/,"",o); if (o in t)
      printf "r%s %s: the reduce two steps back, %s / it: %.3f (%s / %s ms)\n", r, w, substr(o, index(o, "fused")), t[o] / t[w], t[o], t[w]}}' \
    $L/bench_$r.log | sort
done
