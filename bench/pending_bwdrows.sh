#!/bin/sh
# bench/pending_bwdrows.sh CARRY (branch bwdrows, twenty-first session; ~130 s, <= 150 s): TILEC_ROW_STREAM=1
# (lib/codegen/emit_ring_rows.c): a loop's 1-D row loads as boxes of its TMA ring, read back from shared
# memory -- attn_bwd_dkdv's per-step LSE and Dl rows: SASS a step D64 348 -> 199, D128 636 -> 345
# (bench/RESULTS.md "bwdrows").  Here: `sh tools/carry.sh build`; on the device:
#   run command="sh bench/pending_bwdrows.sh .carry" carry=[".carry"] timeout_s=170
# 1. correctness under the switch: `tilec run --device` (GPU against the interpreter) of the rank-1 row with
#    other = 1.0 (tests/lit/codegen/ring-rows.tile rows_gemm, K 1000: a ragged last row, the tail branch)
#    and of dK/dV at S 301 (rows of 1204 bytes: the row tensors repacked to 16-byte rows by the launcher) and
#    1000, D 64 / 128, causal and not; then tests/gpu/test_attn_bwd.py (fp64 autograd, S 1/127/129/1000/4097,
#    outputs NaN-poisoned) with the switch on
# 2. bench.py --only attnbwd --quick, S4096 Z4 H16, default / rows / split-load beside FA2 and cuDNN, two
#    processes with the order reversed
# 3. (while under 100 s) the one-pass kernel, D64: test_attn_bwd_fused.py --modes 1 with lazy waits, dQ on
#    wgmma and the rows, then bench.py fused-tma-lazy-sa against fused-tma-lazy-sa-rows
# 4. a short table (x cuDNN per process; time default / rows, dK/dV kernel default / rows).
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cbwdrows
echo "== 1. correctness, TILEC_ROW_STREAM=1 [$(el) s]"
( TILEC_ROW_STREAM=1 timeout -k 10 25 $B/tilec run tests/lit/codegen/ring-rows.tile --kernel=rows_gemm \
    --size M=130 --size N=70 --size K=1000 --device > $L/run_rows_gemm.log 2>&1
  echo "rows_gemm (rank-1 row, other 1.0) K1000 vs interpreter: rc $? $(grep -cE 'PASS' $L/run_rows_gemm.log) PASS $(grep -cE 'FAIL' $L/run_rows_gemm.log) FAIL" \
    > $L/run_rows_gemm.txt ) &
for D in 64 128; do for C in 0 1; do for S in 301 1000; do
  ( TILEC_ROW_STREAM=1 timeout -k 10 25 $B/tilec run examples/attn_bwd.tile --kernel=attn_bwd_dkdv -D D=$D -D CAUSAL=$C \
      --size Z=1 --size H=3 --size S=$S --scalar scale=0.1 --device > $L/run_${D}_${C}_$S.log 2>&1
    echo "dkdv D$D causal=$C S$S vs interpreter: rc $? $(grep -cE 'PASS' $L/run_${D}_${C}_$S.log) PASS $(grep -cE 'FAIL' $L/run_${D}_${C}_$S.log) FAIL" \
      > $L/run_${D}_${C}_$S.txt ) &
done; done; done
wait
cat $L/run_*.txt
grep -hE "FAIL|error" $L/run_*.log | head -6
TILEC_ROW_STREAM=1 timeout -k 10 40 python3 tests/gpu/test_attn_bwd.py --lib $B/libtilec.so.0.1 > $L/test_on.log 2>&1
echo "test_attn_bwd (switch on) rc $? [$(el) s]: $(tail -1 $L/test_on.log)"
grep -E "^FAIL" $L/test_on.log | head -8
echo "== 2. bench [$(el) s]"
r=0
for order in default,rows,split-load split-load,rows,default; do
  r=$((r + 1))
  timeout -k 10 40 python3 bench/bench.py --lib $B/libtilec.so.0.1 --only attnbwd --quick \
    --attnbwd-cases 64:4096:0,64:4096:1,128:4096:0,128:4096:1 --attnbwd-variants $order > $L/bench_$r.log 2>&1
  echo "bench round $r ($order) rc $? [$(el) s]"
  grep -E "^attn bwd D.*(default|rows|split-load): dK/dV" $L/bench_$r.log | sed "s/^/  r$r /"
done
if [ "$(el)" -lt 100 ]; then
  echo "== 3. the one-pass kernel with the rows, D64 [$(el) s]"
  TILEC_ATOMIC_TMA=1 TILEC_WGMMA_LAZY=1 TILEC_WGMMA_STAGED_A=1 TILEC_ROW_STREAM=1 timeout -k 5 20 \
    python3 tests/gpu/test_attn_bwd_fused.py --lib $B/libtilec.so.0.1 --modes 1 > $L/test_fused.log 2>&1
  echo "test_attn_bwd_fused (lazy + dQ on wgmma + rows) rc $? [$(el) s]: $(tail -1 $L/test_fused.log)"
  grep -E "^FAIL" $L/test_fused.log | head -4
  timeout -k 5 25 python3 bench/bench.py --lib $B/libtilec.so.0.1 --only attnbwd --quick \
    --attnbwd-cases 64:4096:0,64:4096:1 --attnbwd-variants fused-tma-lazy-sa,fused-tma-lazy-sa-rows > $L/bench_3.log 2>&1
  echo "bench round 3 (one-pass) rc $? [$(el) s]"
  grep -E "^attn bwd D.*fused-tma-lazy-sa(-rows)?:" $L/bench_3.log | sed "s/^/  r3 /"
else
  echo "== 3. skipped (the one-pass kernel): $(el) s already"
fi
echo "== table (x cuDNN of the same process; time off / on) [$(el) s]"
for r in 1 2 3; do
  [ -f $L/bench_$r.log ] || continue
  grep -E "^attn bwd .*\| cuDNN SDPA \|" $L/bench_$r.log | awk -F' [|] ' -v r=$r '{printf "r%s %-58s %8s ms x cuDNN %s err %s\n", r, $2, $3, $7, $8}'
done
for r in 1 2; do
  awk -v r=$r '/: dK\/dV kernel/ {c=$3" "$4" "$5; v=$6; sub(":","",v); t[c" "v]=$(NF-1); k2[c" "v]=$9}
    END {for (k in t) if (k ~ / default$/) {b=k; sub(/ default$/,"",b); o=b" rows"; s=b" split-load"; if (o in t)
      printf "r%s %s time default/rows: all %.3f (%s / %s ms), dK/dV kernel %.3f (%s / %s ms); split-load/rows dK/dV %.3f\n", r, b, t[k]/t[o], t[k], t[o], k2[k]/k2[o], k2[k], k2[o], (s in k2) ? k2[s]/k2[o] : 0}}' $L/bench_$r.log | sort
done
echo "[all: $(el) s]"
