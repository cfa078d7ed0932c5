#!/bin/sh
# bench/cluster_run.sh CARRY: the device call of the cluster work (docs/pipelines.md "Clusters"), one
# call of about 3 minutes; the table is last.  CARRY holds b/ (stripped libtilec, tilec,
# gpu_test_examples), ex/ (the cutlass GEMM examples) and bench.py of the branch.
#  1. correctness, in parallel: gpu_test_examples on the cutlass GEMMs under TILEC_CLUSTER=2x1 / 1x2 /
#     2x1+TILEC_EPI=regs (ragged pairs included), against the interpreter; compute-sanitizer memcheck
#     and racecheck of `tilec run` on one cluster kernel (3 x 3 tiles: a pair past the grid);
#  2. bench: gemm (4096^3, 8192^3, 8192x28672x4096) and linear (8192x4096x4096, nn.Linear storage),
#     default / TILEC_WS=coop / TILEC_CLUSTER=2x1 (and its cluster-scope release) / 1x2 beside cuBLAS;
#  3. ncu (launch statistics, occupancy: the clusters that fit) of the cooperative and 2x1 kernels.
set -u
C=$(cd "${1:-.carry-cluster}" && pwd); B=$C/b
R=$(pwd); L=${OUT:-/tmp}; T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
export LD_LIBRARY_PATH=$B TILEC_LIBRARY=$B/libtilec.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
RUNARGS="run $C/ex/gemm.tile --size M=300 --size N=700 --size K=200 --device"
echo "== 0. smoke: one cluster kernel each way, against the interpreter (3 x 3 tiles: pairs past the grid)"
for c in 2x1 1x2; do
  TILEC_CACHE_DIR=/tmp/c-smoke timeout 25 $B/tilec $RUNARGS --cluster=$c > $L/smoke$c.log 2>&1; rc=$?
  echo "smoke $c: exit $rc [$(el) s]"; tail -3 $L/smoke$c.log
  [ $rc = 0 ] || { echo "smoke failed: stopping here"; exit 1; }
done
echo "== 1. correctness"
(GPU_TEST_VARIANTS=TILEC_CLUSTER TILEC_CACHE_DIR=/tmp/c-ex timeout 90 $B/tests/gpu_test_examples $C/ex > $L/examples.log 2>&1; echo "exit $?" >> $L/examples.log) &
(TILEC_CACHE_DIR=/tmp/c-s1 timeout 60 $SAN --tool memcheck --error-exitcode 99 $B/tilec $RUNARGS --cluster=2x1 > $L/memcheck21.log 2>&1; echo "exit $?" >> $L/memcheck21.log
 TILEC_CACHE_DIR=/tmp/c-s1 timeout 30 $SAN --tool memcheck --error-exitcode 99 $B/tilec $RUNARGS --cluster=1x2 > $L/memcheck12.log 2>&1; echo "exit $?" >> $L/memcheck12.log) &
(TILEC_CACHE_DIR=/tmp/c-s2 timeout 90 $SAN --tool racecheck --racecheck-report hazard --error-exitcode 99 $B/tilec $RUNARGS --cluster=2x1 > $L/racecheck21.log 2>&1; echo "exit $?" >> $L/racecheck21.log) &
wait
echo "[tests: $(el) s]"
grep -hE '^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|hazard|max abs|exit ' $L/*.log | head -30
tail -2 $L/examples.log
echo "== 2. bench"
V=TILEC_WS=coop,TILEC_CLUSTER=2x1,TILEC_CLUSTER=2x1+TILEC_CLUSTER_SCOPE=cluster,TILEC_CLUSTER=1x2
TILEC_CACHE=0 timeout $(( 150 - $(el) )) python3 $C/bench.py --lib $B/libtilec.so --quick --only gemm,linear \
  --gemm-variants $V --gemm-sizes 4096x4096x4096,8192x8192x8192,8192x28672x4096 \
  --linear-variants $V --linear-sizes 8192x4096x4096 --linear-no-compile --json $L/bench.json > $L/bench.log 2>&1
echo "== 3. ncu: the cooperative kernel and the 2x1 cluster at 8192^3, two launches each [$(el) s]"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
TILEC_CACHE=0 timeout $(( 200 - $(el) )) $NCU -k regex:cutlass_gemm --section LaunchStats --section Occupancy \
  --metrics gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum \
  python3 $C/ncu_cluster.py $B/libtilec.so 8192 TILEC_WS=coop TILEC_CLUSTER=2x1 > $L/ncu.log 2>&1
echo "[all: $(el) s]"
grep -E 'FAILED|cuBLAS [0-9]' $L/bench.log | head
grep -E '^(gemm bf16|linear plain)' $L/bench.log
grep -E 'cutlass_gemm|Duration|luster|tensor_cycles|lts__t_bytes|Grid Size|Waves|Achieved Occ|launched' $L/ncu.log | head -60
