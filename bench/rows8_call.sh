#!/bin/sh
# bench/rows8_call.sh CARRY_DIR: branch rows8's device call (docs/rows.md "rows8"), run from a copy of the
# repository with CARRY_DIR holding b/ (stripped libtilec, tilec, gpu_test_examples) and tree/ (this branch's
# examples/, bench/, tests/gpu/rows.sh, tests/lit/codegen/rand-cmp.tile):
#   1. correctness: the changed row examples against the interpreter with every new form forced on
#      (TILEC_ROW_PREFETCH=1: a 1 MB cap, so the prefetch fires at the tests' few hundred rows; all hints),
#      rows.sh (stage 1, in 4 parts) and gpu_test_examples over the row examples, in parallel;
#   2. bench.py --only fused at 4096 and 8192 columns: default (prefetch on) / prefetch off / stores
#      evict-first, every rows8 form on rmsnorm, softmax 32768 and embedding (4096); 3. --only splitk.
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
(env $F TILEC_CACHE_DIR=/tmp/c-ex timeout 60 $B/tests/gpu_test_examples /tmp/exsub > $L/t_examples.log 2>&1; echo "exit $?" >> $L/t_examples.log) &
for i in 0 1 2 3; do
  (env $F ROWS_STAGE_LIST=1 ROWS_PART=$i/4 TILEC_CACHE_DIR=/tmp/c-r$i timeout 60 sh tests/gpu/rows.sh $B > $L/t_rows$i.log 2>&1; echo "exit $?" >> $L/t_rows$i.log) &
done
wait
echo "[tests: $(el) s]"
for f in $L/t_*.log; do printf '%-14s %s | %s\n' "$(basename $f .log)" "$(tail -1 $f)" "$(grep -E 'passed|of .* PASS' $f | tail -1 | cut -c1-90)"; grep -h '^FAIL' $f | head -5; done
echo "== fused, both ends of the range; the rows8 sweep on rmsnorm, softmax 32768, embedding (4096) [$(el) s]"
FUSED_TAGS="ROW_PREFETCH=0 (no,ROW_HINTS=S (,MAXNREG=64" FUSED_SWEEP="rmsnorm 16384x4096;softmax f32 2048x32768;embedding_rmsnorm 16384x4096" \
  FUSED_SWEEP_TAGS="ROW_,stages=2" TILEC_CACHE_DIR=/tmp/c-f1 timeout ${MAIN_TIMEOUT:-150} \
  python3 bench/bench.py --lib $B/libtilec.so --only fused --quick --json $L/fused.json > $L/fused.log 2>&1
echo "bench exit $? [$(el) s]"
grep -E "^fused: copy" $L/fused.log; grep -E "^fused .*of copy BW" $L/fused.log | sed 's/ (eager .*//; s/ of a same-size copy, [0-9]* GB.s)/)/' | cut -c1-170
echo "== splitk [$(el) s]"
TILEC_CACHE_DIR=/tmp/c-sk timeout 40 python3 bench/bench.py --lib $B/libtilec.so --only splitk --quick > $L/splitk.log 2>&1
echo "bench exit $? [$(el) s]"
grep -E "^splitk " $L/splitk.log
