#!/bin/sh
# bench/pending.sh: the GPU call the sixth session could not make (its last device call was
# refused): everything merged after the branches' own runs, and the opt-in switches that wait for
# an H200 before they become defaults.  One call, about 9 minutes at most; the table is last.
#
#   here:   tools/carry.sh                  (fills .carry/ from build/: stripped lib, CLI, GPU tests)
#   device: run command="sh bench/pending.sh .carry" carry=[".carry"] timeout_s=600
#
# In order of importance, each step under its own limit (the last ones skipped when time is short):
#  1. every GPU test of tests/gpu (run.sh's set, without the sanitizers) at the defaults;
#  2. gpu_test_examples with the opt-in forms on: TILEC_PROLOGUE=1 (operand prologues),
#     TILEC_EPI_LOAD=split + TILEC_RCP=approx (the epilogue's loads ahead, rcp.approx in
#     sigmoid / tanh); test_w4a16.py (prologue on and off); approx-compare seeds with rcp.approx;
#     ping-pong (TILEC_WS=pingpong) on tests/gpu/pingpong against the interpreter;
#  3. bench: linear, residual (each opt-in form on and off), w4a16, attnrope, moe, topk, int8, gemm;
#  4. examples/llama/layer.py: prefill with --fp8, decode at batch 64.
# A form whose tests pass and whose rows win becomes the default (docs/pipelines.md says where).
set -u
B=$(cd "${1:-.carry}" && pwd)/b
[ -d "$B" ] || B=$(cd "${1:-build}" && pwd)
R=$(pwd); L=${OUT:-/tmp}; T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
export LD_LIBRARY_PATH=$B TILEC_LIBRARY=$B/libtilec.so PYTHONUNBUFFERED=1 TILEC_EXAMPLES=$R/examples TILEC_CLI=$B/tilec
W=$(dirname "$B")/whl
if ls "$W"/*.whl >/dev/null 2>&1; then  # apache-tvm-ffi, for the Python launch path (optional)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$W"/*.whl 2>&1 | tail -1
  export PYTHONPATH=/tmp/site
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
echo "== 1. GPU tests at the defaults"
for t in $B/tests/gpu_test_*; do n=$(basename $t); case $n in gpu_test_random) continue;; esac
  (TILEC_CACHE_DIR=/tmp/c-$n timeout 200 $t > /tmp/$n.log 2>&1; echo "exit $?" >> /tmp/$n.log) & done
for p in tests/gpu/test_decode.py tests/gpu/test_attn_bwd.py tests/gpu/test_dot_types.py; do n=$(basename $p .py)
  (TILEC_CACHE_DIR=/tmp/c-$n timeout 200 python3 $p --lib $B/libtilec.so > /tmp/$n.log 2>&1; echo "exit $?" >> /tmp/$n.log) & done
(TILEC_CACHE_DIR=/tmp/c-rows timeout 200 sh tests/gpu/rows.sh $B > /tmp/rows_sh.log 2>&1; echo "exit $?" >> /tmp/rows_sh.log) &
(cd python/tests && TILEC_CACHE_DIR=/tmp/c-pyt timeout 200 python3 -m pytest -q -p no:cacheprovider test_gpu.py > /tmp/pytest_gpu.log 2>&1; echo "exit $?" >> /tmp/pytest_gpu.log) &
(TILEC_CACHE_DIR=/tmp/c-rr timeout 200 $B/tests/gpu_test_random --seeds 50000:50299 > /tmp/random.log 2>&1; echo "exit $?" >> /tmp/random.log) &
echo "== 2. the opt-in forms"
(export TILEC_PROLOGUE=1 TILEC_EPI_LOAD=split TILEC_RCP=approx TILEC_CACHE_DIR=/tmp/c-optin
 timeout 200 $B/tests/gpu_test_examples $R/examples > /tmp/optin_examples.log 2>&1; echo "exit $?" >> /tmp/optin_examples.log) &
(TILEC_CACHE_DIR=/tmp/c-w4 timeout 200 python3 tests/gpu/test_w4a16.py --lib $B/libtilec.so --examples $R/examples > /tmp/test_w4a16.log 2>&1; echo "exit $?" >> /tmp/test_w4a16.log) &
(TILEC_RCP=approx TILEC_CACHE_DIR=/tmp/c-ra timeout 200 $B/tests/gpu_test_random --seeds 40000:40499 --approx-compare > /tmp/optin_approx.log 2>&1; echo "exit $?" >> /tmp/optin_approx.log) &
(TILEC_WS=pingpong TILEC_CACHE_DIR=/tmp/c-pp timeout 200 $B/tests/gpu_test_examples $R/tests/gpu/pingpong > /tmp/optin_pingpong.log 2>&1; echo "exit $?" >> /tmp/optin_pingpong.log) &
wait
echo "[tests: $(el) s]"
cat /tmp/*.log > $L/tests.log
grep -hE '^FAIL' /tmp/*.log | head -20
for f in /tmp/gpu_test_*.log /tmp/test_*.log /tmp/rows_sh.log /tmp/pytest_gpu.log /tmp/random.log /tmp/optin_*.log; do
  printf '%-26s %s | %s\n' "$(basename $f .log)" "$(tail -1 $f)" "$(grep -E 'passed|failed|PASS|FAIL' $f | tail -1 | cut -c1-100)"; done > $L/table.txt
echo "== 3. bench"
export TILEC_CACHE_DIR=/tmp/c-bench TILEC_CACHE=0
left=$(( 480 - $(el) ))
[ $left -gt 60 ] && timeout $left python3 bench/bench.py --lib $B/libtilec.so --quick \
  --only linear,residual,w4a16,attnrope,moe,topk,int8,gemm --json $L/bench.json > $L/bench.log 2>&1
grep -E 'FAILED' $L/bench.log | head
unset TILEC_CACHE
echo "== 4. the Llama layer [$(el) s]"
left=$(( 570 - $(el) ))
[ $left -gt 40 ] && timeout $left python3 examples/llama/layer.py --batch 1 --seq 2048 --fp8 2>&1 | grep -v -i warn | tail -14 > $L/layer.log
left=$(( 590 - $(el) ))
[ $left -gt 20 ] && timeout $left python3 examples/llama/layer.py --mode decode --batch 64 --seq 4096 2>&1 | grep -v -i warn | tail -9 >> $L/layer.log
echo "[all: $(el) s]"
sed -n '/## tilec vs/,$p' $L/bench.log
cat $L/layer.log 2>/dev/null; cat $L/table.txt
