#!/bin/sh
# bench/pending_defaults23.sh: the twenty-third session's new defaults together, checked on the GPU and
# dq64 timed on the H200 (bwd8 timed it on an H100): attn_bwd.tile's dQ at D128 (64 keys, 2 stages), the
# small-M waves form, W4A16's materialize-once form at M >= 256, gather_runs.  ~150 s warm.
#   here:   tools/carry.sh build        device: run command="sh bench/pending_defaults23.sh .carry" carry=[".carry"] timeout_s=240
. bench/pending_env.sh
R=$(pwd)
echo "== 1. GPU tests at the defaults, in parallel [$(el) s]"
(ATTN_BWD_D=128 ATTN_BWD_PIPES=default TILEC_CACHE_DIR=/tmp/c23-bwd timeout -k 10 60 python3 tests/gpu/test_attn_bwd.py \
  --lib $B/libtilec.so > $L/t_bwd.log 2>&1; echo "exit $?" >> $L/t_bwd.log) &
(TILEC_CACHE_DIR=/tmp/c23-hoist timeout -k 10 90 python3 tests/gpu/test_hoist_operand.py --lib $B/libtilec.so \
  --examples $R/examples > $L/t_hoist.log 2>&1; echo "exit $?" >> $L/t_hoist.log) &
(TILEC_CACHE_DIR=/tmp/c23-sm timeout -k 10 120 python3 tests/gpu/test_small_m.py --lib $B/libtilec.so > $L/t_sm.log 2>&1
  echo "exit $?" >> $L/t_sm.log) &
(TILEC_CACHE_DIR=/tmp/c23-dt timeout -k 10 120 python3 tests/gpu/test_dot_types.py --lib $B/libtilec.so --examples $R/examples --only fp8,bs \
  > $L/t_dt.log 2>&1; echo "exit $?" >> $L/t_dt.log) &
wait
for t in bwd hoist sm dt; do echo "test $t: $(grep -c '^FAIL' $L/t_$t.log) FAIL lines; $(tail -2 $L/t_$t.log | tr '\n' ' ' | cut -c1-150)"; done
grep -h "^FAIL" $L/t_*.log | head -8
echo "== 2. attention backward D128 S4096, the default (dq64) beside dq32 (the old dQ tile), two rounds [$(el) s]"
for order in default,dq32 dq32,default; do
  timeout -k 10 45 python3 bench/bench.py --lib $B/libtilec.so --only attnbwd --quick \
    --attnbwd-cases 128:4096:0,128:4096:1 --attnbwd-variants $order > $L/bench_$order.log 2>&1
  echo "bench ($order) rc $? [$(el) s]"
  grep -E "^attn bwd D.*: dK/dV kernel|cuDNN" $L/bench_$order.log | grep -v "^|" | sed "s/^/  /" | head -12
done
echo "[all: $(el) s]"
