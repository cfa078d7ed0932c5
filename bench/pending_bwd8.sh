#!/bin/sh
# bench/pending_bwd8.sh CARRY (branch bwd8, twenty-second session; ~150 s, <= 190 s): the attention backward
# at D128 (issue 11: >= 0.8x cuDNN).  TILEC_WGMMA_LAZY_WIDE=1 (lib/codegen/wgmma_lazy.c "Wide loops"): the
# D128 dK/dV loop (192 accumulator registers, one CTA an SM) with FlashAttention-3's order of waits (S^T and
# dP^T together, the exp under dP^T, dS under dV); and dq64: the dQ kernel at D128 with 64 keys a step on 2
# stages (-D BN=64 --stages=2, two CTAs an SM as the default's 32 x 4), bench/RESULTS.md "bwd8".  Here:
# `sh tools/carry.sh build`; on the device:
#   run command="sh bench/pending_bwd8.sh .carry" carry=[".carry"] timeout_s=200
# 1. correctness: `tilec run --device` (GPU against the interpreter) of dK/dV D128 with the switch, full and
#    causal, S 1000 and 4097 (ragged), and of dQ D128 at 64 keys x 2 stages (with TILEC_WGMMA_LAZY=1 too);
#    tests/gpu/test_attn_bwd.py at D128 (fp64 autograd, S 1/127/129/1000/4097, outputs NaN-poisoned): the
#    default and 8-warp dK/dV with the switch, the dq-bn64 pipe with and without TILEC_WGMMA_LAZY=1; the
#    one-pass kernel (test_attn_bwd_fused.py --modes 1, D64 and D128) with the switch
# 2. bench.py --only attnbwd --quick, S4096 Z4 H16, D128 full / causal: default, lazywide, dq64,
#    lazywide-dq64, lazywide-dq64-lazy beside FA2 and cuDNN, two processes with the order reversed; D64
#    default / lazywide (a control: the switch leaves D64's PTX byte-identical) / lazy (TILEC_WGMMA_LAZY=1)
# 3. (while under 150 s) the one-pass kernel at D128 with the rows (never timed): fused-tma-rows and
#    fused-tma-rows-wide (the switch: 24-28 bytes of spills); (under 160 s) at D64 full fused-tma-rows against
#    fused-tma-lazy-rows (did bwd7's lazy loss come from the global row loads' latency?)
# 4. a short table (x cuDNN per process; time default / variant, per kernel).
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cbwd8
echo "== 1. correctness [$(el) s]"
for C in 0 1; do for S in 1000 4097; do for W in 0 1; do
  ( TILEC_WGMMA_LAZY_WIDE=$W timeout -k 10 40 $B/tilec run examples/attn_bwd.tile --kernel=attn_bwd_dkdv -D D=128 -D CAUSAL=$C \
      --size Z=1 --size H=2 --size S=$S --scalar scale=0.088 --seed 2 --device > $L/run_kv${W}_${C}_$S.log 2>&1
    echo "dkdv D128 causal=$C S$S lazywide=$W vs interpreter: rc $? $(grep -c PASS $L/run_kv${W}_${C}_$S.log) PASS $(grep -c FAIL $L/run_kv${W}_${C}_$S.log) FAIL" \
      > $L/run_kv${W}_${C}_$S.txt ) &
done
  ( timeout -k 10 40 $B/tilec run examples/attn_bwd.tile --kernel=attn_bwd_dq -D D=128 -D CAUSAL=$C -D BN=64 --stages=2 \
      --size Z=1 --size H=2 --size S=$S --scalar scale=0.088 --seed 2 --device > $L/run_q_${C}_$S.log 2>&1
    echo "dq D128 causal=$C S$S 64 keys x 2 stages vs interpreter: rc $? $(grep -c PASS $L/run_q_${C}_$S.log) PASS $(grep -c FAIL $L/run_q_${C}_$S.log) FAIL" \
      > $L/run_q_${C}_$S.txt ) &
done; done
( TILEC_WGMMA_LAZY=1 timeout -k 10 40 $B/tilec run examples/attn_bwd.tile --kernel=attn_bwd_dq -D D=128 -D CAUSAL=1 -D BN=64 --stages=2 \
    --size Z=1 --size H=2 --size S=1000 --scalar scale=0.088 --seed 2 --device > $L/run_ql.log 2>&1
  echo "dq D128 causal=1 S1000 64 keys x 2 stages, TILEC_WGMMA_LAZY=1 vs interpreter: rc $? $(grep -c PASS $L/run_ql.log) PASS $(grep -c FAIL $L/run_ql.log) FAIL" \
    > $L/run_ql.txt ) &
wait
cat $L/run_*.txt
grep -hE "FAIL|error" $L/run_*.log | head -6
TILEC_WGMMA_LAZY_WIDE=1 ATTN_BWD_D=128 ATTN_BWD_PIPES=default,cutlass-8w,dq-bn64 timeout -k 10 40 \
  python3 tests/gpu/test_attn_bwd.py --lib $B/libtilec.so.0.1 > $L/test_wide.log 2>&1
echo "test_attn_bwd D128 (lazywide: default, cutlass-8w, dq-bn64) rc $? [$(el) s]: $(tail -1 $L/test_wide.log)"
grep -E "^FAIL" $L/test_wide.log | head -6
TILEC_WGMMA_LAZY=1 TILEC_WGMMA_LAZY_WIDE=1 ATTN_BWD_D=128 ATTN_BWD_PIPES=dq-bn64 timeout -k 10 25 \
  python3 tests/gpu/test_attn_bwd.py --lib $B/libtilec.so.0.1 > $L/test_lazy.log 2>&1
echo "test_attn_bwd D128 (lazywide + lazy: dq-bn64) rc $? [$(el) s]: $(tail -1 $L/test_lazy.log)"
grep -E "^FAIL" $L/test_lazy.log | head -4
TILEC_WGMMA_LAZY_WIDE=1 timeout -k 5 25 python3 tests/gpu/test_attn_bwd_fused.py --lib $B/libtilec.so.0.1 --modes 1 > $L/test_fused.log 2>&1
echo "test_attn_bwd_fused (TMA reduce, rows, lazywide) rc $? [$(el) s]: $(tail -1 $L/test_fused.log)"
grep -E "^FAIL" $L/test_fused.log | head -4
echo "== 2. bench [$(el) s]"
V=default,lazywide,dq64,lazywide-dq64,lazywide-dq64-lazy
VR=lazywide-dq64-lazy,lazywide-dq64,dq64,lazywide,default
r=0
for order in $V $VR; do
  r=$((r + 1))
  if [ $r -eq 2 ] && [ "$(el)" -gt 120 ]; then echo "bench round 2 skipped: $(el) s already"; break; fi
  timeout -k 10 45 python3 bench/bench.py --lib $B/libtilec.so.0.1 --only attnbwd --quick \
    --attnbwd-cases 128:4096:0,128:4096:1 --attnbwd-variants $order > $L/bench_$r.log 2>&1
  echo "bench round $r ($order) rc $? [$(el) s]"
  grep -E "^attn bwd D.*: dK/dV kernel" $L/bench_$r.log | sed "s/^/  r$r /"
done
timeout -k 10 30 python3 bench/bench.py --lib $B/libtilec.so.0.1 --only attnbwd --quick \
  --attnbwd-cases 64:4096:0,64:4096:1 --attnbwd-variants lazywide,default,lazy > $L/bench_3.log 2>&1
echo "bench round 3 (D64: lazywide (control), default, lazy (TILEC_WGMMA_LAZY=1 with the rows)) rc $? [$(el) s]"
grep -E "^attn bwd D.*: dK/dV kernel" $L/bench_3.log | sed "s/^/  r3 /"
if [ "$(el)" -lt 150 ]; then
  echo "== 3. the one-pass kernel at D128 with the rows [$(el) s]"
  timeout -k 5 25 python3 bench/bench.py --lib $B/libtilec.so.0.1 --only attnbwd --quick \
    --attnbwd-cases 128:4096:0,128:4096:1 --attnbwd-variants fused-tma-rows,fused-tma-rows-wide > $L/bench_4.log 2>&1
  echo "bench round 4 (one-pass D128) rc $? [$(el) s]"
  grep -E "^attn bwd D.*fused-tma-rows(-wide)?:" $L/bench_4.log | sed "s/^/  r4 /"
else
  echo "== 3. skipped (the one-pass kernel at D128): $(el) s already"
fi
if [ "$(el)" -lt 160 ]; then
  timeout -k 5 20 python3 bench/bench.py --lib $B/libtilec.so.0.1 --only attnbwd --quick \
    --attnbwd-cases 64:4096:0 --attnbwd-variants fused-tma-rows,fused-tma-lazy-rows > $L/bench_5.log 2>&1
  echo "bench round 5 (one-pass D64 full: rows, lazy + rows) rc $? [$(el) s]"
  grep -E "^attn bwd D.*fused-tma-(lazy-)?rows:" $L/bench_5.log | sed "s/^/  r5 /"
fi
echo "== table (x cuDNN of the same process; time default / variant) [$(el) s]"
for r in 1 2 3 4 5; do
  [ -f $L/bench_$r.log ] || continue
  grep -E "^attn bwd .*\| cuDNN SDPA \|" $L/bench_$r.log | awk -F' [|] ' -v r=$r '{printf "r%s %-62s %8s ms x cuDNN %s err %s\n", r, $2, $3, $7, $8}'
done
for r in 1 2 3; do
  [ -f $L/bench_$r.log ] || continue
  awk -v r=$r '/: dK\/dV kernel/ {c=$3" "$4" "$5; v=$6; sub(":","",v); t[c" "v]=$(NF-1); k2[c" "v]=$9; k3[c" "v]=$13}
    END {for (k in t) if (k ~ / default$/) {b=k; sub(/ default$/,"",b);
      for (o in t) if (index(o, b" ") == 1 && o != k) {v=o; sub(b" ","",v);
        printf "r%s %s default/%s: all %.3f (%s / %s ms), dK/dV %.3f (%s / %s), dQ %.3f (%s / %s)\n", r, b, v,
          t[k]/t[o], t[k], t[o], k2[k]/k2[o], k2[k], k2[o], k3[k]/k3[o], k3[k], k3[o]}}}' $L/bench_$r.log | sort
done
echo "[all: $(el) s]"
