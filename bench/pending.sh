#!/bin/sh
# bench/pending.sh: the GPU call the eighth session could not make (its helpers' branch runs used the
# device time; the merged main has not run as a whole): every GPU test of the merged main at the
# defaults, then branch attn4's pending form (bench/pending_attn_overlap.sh).  One call, about
# 5 minutes; the table is last.  Branch gemm4's forms are a second call: bench/pending_gemm4.sh.
#
#   here:   tools/carry.sh                  (fills .carry/ from build/: stripped lib, CLI, GPU tests)
#   device: run command="sh bench/pending.sh .carry" carry=[".carry"] timeout_s=600
#           run command="sh bench/pending_gemm4.sh .carry" carry=[".carry"] timeout_s=420
#
#  1. every GPU test of tests/gpu (run.sh's set, without the sanitizers) at the defaults: new since
#     the last whole run are the defaults TILEC_SLOT_CSE and TILEC_EXACT_FMA (branch w4a16c; they
#     change the PTX of the W4A16, RMSNorm, attn_bwd and llama kernels), the back end's IR passes in
#     tilec's pipeline (branch ctime2; PTX byte-identical), the decode split-K files (decode3), the
#     row kernels' changes (rows4), and the gpu_test_examples variants of gemm4 / attn4;
#  2. bench/pending_attn_overlap.sh (TILEC_ATTN_OVERLAP=4: correctness, racecheck, the twelve cases);
#  3. the Llama layer's decode step (layer.py --mode decode, batch 64 and 1) beside torch.compile.
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
mkdir -p /tmp/attn_only && cp examples/attn.tile /tmp/attn_only/
for t in $B/tests/gpu_test_*; do n=$(basename $t); case $n in gpu_test_random) continue;; esac
  (TILEC_CACHE_DIR=/tmp/c-$n timeout 240 $t > /tmp/$n.log 2>&1; echo "exit $?" >> /tmp/$n.log) & done
for p in tests/gpu/test_decode.py tests/gpu/test_attn_bwd.py tests/gpu/test_dot_types.py; do n=$(basename $p .py)
  (TILEC_CACHE_DIR=/tmp/c-$n timeout 200 python3 $p --lib $B/libtilec.so > /tmp/$n.log 2>&1; echo "exit $?" >> /tmp/$n.log) & done
(TILEC_CACHE_DIR=/tmp/c-w4 timeout 200 python3 tests/gpu/test_w4a16.py --lib $B/libtilec.so --examples $R/examples > /tmp/test_w4a16.log 2>&1; echo "exit $?" >> /tmp/test_w4a16.log) &
(TILEC_CACHE_DIR=/tmp/c-rows timeout 240 sh tests/gpu/rows.sh $B > /tmp/rows_sh.log 2>&1; echo "exit $?" >> /tmp/rows_sh.log) &
(cd python/tests && TILEC_CACHE_DIR=/tmp/c-pyt timeout 200 python3 -m pytest -q -p no:cacheprovider test_gpu.py > /tmp/pytest_gpu.log 2>&1; echo "exit $?" >> /tmp/pytest_gpu.log) &
(TILEC_CACHE_DIR=/tmp/c-rr timeout 200 $B/tests/gpu_test_random --seeds 60000:60299 > /tmp/random.log 2>&1; echo "exit $?" >> /tmp/random.log) &
(TILEC_CACHE_DIR=/tmp/c-attn timeout 200 $B/tests/gpu_test_examples /tmp/attn_only > /tmp/attn_forms.log 2>&1; echo "exit $?" >> /tmp/attn_forms.log) &
(for d in 128 64; do for c in 0 1; do echo "== pingpong D$d CAUSAL=$c"
   TILEC_ATTN_WS=pingpong TILEC_CACHE_DIR=/tmp/c-race$d$c timeout 60 compute-sanitizer --tool racecheck \
     $B/tilec run examples/attn.tile --kernel cutlass_attn_fwd -D D=$d -D CAUSAL=$c \
     --size Z=1 --size H=2 --size S=300 --device 2>&1 | tail -3
 done; done > /tmp/race_pingpong.log 2>&1; echo "exit 0" >> /tmp/race_pingpong.log) &
wait
echo "[tests: $(el) s]"
cat /tmp/*.log > $L/tests.log
grep -hE '^FAIL' /tmp/*.log | head -20
for f in /tmp/gpu_test_*.log /tmp/test_*.log /tmp/rows_sh.log /tmp/pytest_gpu.log /tmp/random.log /tmp/attn_forms.log /tmp/race_pingpong.log; do
  printf '%-26s %s | %s\n' "$(basename $f .log)" "$(tail -1 $f)" "$(grep -E 'passed|failed|PASS|FAIL|hazard|ERROR SUMMARY' $f | tail -1 | cut -c1-100)"; done > $L/table.txt
echo "== 2. attention's late value dot, form 4 [$(el) s]"
mkdir -p $L/overlap
OUT=$L/overlap timeout $(( 480 - $(el) )) sh bench/pending_attn_overlap.sh "$(dirname "$B")" > $L/overlap.log 2>&1
echo "== 3. the decode step [$(el) s]"
left=$(( 585 - $(el) ))
[ $left -gt 30 ] && timeout $left python3 examples/llama/layer.py --mode decode --batch 64 --seq 4096 2>&1 | grep -v -i warn | tail -9 > $L/layer.log
echo "[all: $(el) s]"
tail -40 $L/overlap.log
cat $L/layer.log 2>/dev/null; cat $L/table.txt
