#!/bin/sh
# bench/rows8_call.sh CARRY_DIR: branch rows8's device call (docs/rows.md "rows8"), run from a copy of the
# repository with CARRY_DIR holding b/ (stripped libtilec, tilec, gpu_test_examples) and tree/ (this branch's
# examples/, bench/, tests/gpu/rows.sh, tests/lit/codegen/rand-cmp.tile):
#   1. correctness: the changed row examples against the interpreter with every new form forced on
#      (TILEC_ROW_PREFETCH=1: a 1 MB cap, so the prefetch fires at the tests' few hundred rows; all hints),
#      rows.sh stages 1 and 2 and gpu_test_examples over the row examples, in parallel;
#   2. bench.py --only fused at 4096 and 8192 columns: default (prefetch on) / prefetch off / stores
#      evict-first; then the full rows8 sweep on rmsnorm and softmax; then --only splitk.
# Logs and tables under $OUT.
set -u
C=$(cd "${1:-.carry-rows8}" && pwd); B=$C/b; T=$C/tree; L=${OUT:-/tmp/rows8}; mkdir -p "$L"
export LD_LIBRARY_PATH=$B TILEC_LIBRARY=$B/libtilec.so PYTHONUNBUFFERED=1 TILEC_CLI=$B/tilec
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
cd "$T"
mkdir -p /tmp/exsub
for f in rmsnorm layernorm add_rmsnorm add_rmsnorm_fp8 softmax swiglu rope embedding_rmsnorm moe_permute dropout_residual cross_entropy; do
  cp examples/$f.tile /tmp/exsub/; done
F="TILEC_ROW_PREFETCH=1 TILEC_ROW_HINTS=nfSp"
(env $F TILEC_CACHE_DIR=/tmp/c-ex timeout 100 $B/tests/gpu_test_examples /tmp/exsub > $L/t_examples.log 2>&1; echo "exit $?" >> $L/t_examples.log) &
(env $F ROWS_STAGE_LIST=1 TILEC_CACHE_DIR=/tmp/c-r1 timeout 100 sh tests/gpu/rows.sh $B > $L/t_rows1.log 2>&1; echo "exit $?" >> $L/t_rows1.log) &
(env $F ROWS_STAGE_LIST=2 TILEC_CACHE_DIR=/tmp/c-r2 timeout 100 sh tests/gpu/rows.sh $B > $L/t_rows2.log 2>&1; echo "exit $?" >> $L/t_rows2.log) &
(ROWS_STAGE_LIST=1 TILEC_CACHE_DIR=/tmp/c-r0 timeout 100 sh tests/gpu/rows.sh $B > $L/t_rows_default.log 2>&1; echo "exit $?" >> $L/t_rows_default.log) &
wait
echo "[tests: $(el) s]"
for f in $L/t_*.log; do printf '%-20s %s | %s\n' "$(basename $f .log)" "$(tail -1 $f)" "$(grep -E 'passed|PASS$|of .* PASS' $f | tail -1 | cut -c1-90)"; grep -h '^FAIL' $f | head -5; done
echo "== fused, both ends of the range [$(el) s]"
FUSED_TAGS="ROW_PREFETCH=0 (no,ROW_HINTS=S (,MAXNREG=64" TILEC_CACHE_DIR=/tmp/c-f1 timeout ${MAIN_TIMEOUT:-150} \
  python3 bench/bench.py --lib $B/libtilec.so --only fused --quick --json $L/fused.json > $L/fused.log 2>&1
echo "bench exit $? [$(el) s]"
grep -A80 "^## fused kernels" $L/fused.log | grep -E "^\| " | grep -E "default|ROW_|MAXNREG=64" | cut -c1-150
echo "== the rows8 sweep: rmsnorm 4096, softmax 4096 / 32768 [$(el) s]"
FUSED_ONLY=rmsnorm,softmax FUSED_COLS=4096 FUSED_TAGS="ROW_,stages=2" TILEC_CACHE_DIR=/tmp/c-f2 timeout ${SWEEP_TIMEOUT:-60} \
  python3 bench/bench.py --lib $B/libtilec.so --only fused --quick --json $L/sweep.json > $L/sweep.log 2>&1
echo "bench exit $? [$(el) s]"
grep -A60 "^## fused kernels" $L/sweep.log | grep -E "^\| " | grep -E "default|ROW_|stages" | cut -c1-150
echo "== splitk [$(el) s]"
TILEC_CACHE_DIR=/tmp/c-sk timeout 40 python3 bench/bench.py --lib $B/libtilec.so --only splitk --quick > $L/splitk.log 2>&1
echo "bench exit $? [$(el) s]"
grep -E "^splitk " $L/splitk.log
