#!/bin/sh
# bench/pending.sh: the GPU call the ninth session owes (its last call ran at 5d15fd8 and was cut at
# its budget; bench/RESULTS.md "ninth session, the last call"): every GPU test of the merged main at
# the defaults (gpu_test_examples did not finish in 240 s there: 400 now), the fallback-group fix
# (78245f4: gpu_test_random seed 60153, gpu_test_alignment's shifted_views.tile), then the row
# kernels' launch-variant rule and the branches' scripts.  One call, about 8 minutes; table last.
#
#   here:   OLD_LIB_XZ=lib.xz tools/carry.sh (fills .carry/ from build/: stripped lib, CLI, GPU tests;
#                                            OLD_LIB_XZ: the stripped library of 7802415, xz'd)
#   device: run command="sh bench/pending.sh .carry" carry=[".carry"] timeout_s=600
#
#  1. every GPU test of tests/gpu (run.sh's set, without the sanitizers) at the defaults, in
#     parallel; gpu_test_random on the seed that failed at 7802415 (60153) and on a new range;
#     with OLD_LIB_XZ, gpu_test_alignment and the seed on an earlier library (they should fail there);
#  2. the row kernels' launch variants under the final rule (branch rows5: bench/rows5_check.sh's
#     bench part), on and off;
#  3. the branches' own items (bench/pending_*.sh that exist), each given what time is left.
set -u
B=$(cd "${1:-.carry}" && pwd)/b
[ -d "$B" ] || B=$(cd "${1:-build}" && pwd)
OLD=$(dirname "$B")/old
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
  (TILEC_CACHE_DIR=/tmp/c-$n timeout 400 $t > /tmp/$n.log 2>&1; echo "exit $?" >> /tmp/$n.log) & done
for p in tests/gpu/test_decode.py tests/gpu/test_attn_bwd.py tests/gpu/test_dot_types.py tests/gpu/test_small_m.py; do n=$(basename $p .py)
  (TILEC_CACHE_DIR=/tmp/c-$n timeout 220 python3 $p --lib $B/libtilec.so > /tmp/$n.log 2>&1; echo "exit $?" >> /tmp/$n.log) & done
(TILEC_CACHE_DIR=/tmp/c-w4 timeout 200 python3 tests/gpu/test_w4a16.py --lib $B/libtilec.so --examples $R/examples > /tmp/test_w4a16.log 2>&1; echo "exit $?" >> /tmp/test_w4a16.log) &
(TILEC_CACHE_DIR=/tmp/c-rows timeout 240 sh tests/gpu/rows.sh $B > /tmp/rows_sh.log 2>&1; echo "exit $?" >> /tmp/rows_sh.log) &
(cd python/tests && TILEC_CACHE_DIR=/tmp/c-pyt timeout 200 python3 -m pytest -q -p no:cacheprovider test_gpu.py > /tmp/pytest_gpu.log 2>&1; echo "exit $?" >> /tmp/pytest_gpu.log) &
(TILEC_CACHE_DIR=/tmp/c-rr timeout 200 $B/tests/gpu_test_random --seeds 61000:61299 > /tmp/random.log 2>&1; echo "exit $?" >> /tmp/random.log) &
(for i in 1 2 3; do TILEC_CACHE_DIR=/tmp/c-r153 timeout 60 $B/tests/gpu_test_random --seeds 60153:60153 --transcendental half | tail -1; done > /tmp/random_60153.log 2>&1; echo "exit 0" >> /tmp/random_60153.log) &
[ -f "$OLD/libtilec.so.0.1.xz" ] && python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" "$OLD/libtilec.so.0.1.xz" /tmp/old_lib.so.0.1 && OLD=/tmp/oldlib && mkdir -p $OLD && mv /tmp/old_lib.so.0.1 $OLD/libtilec.so.0.1
if [ -f "$OLD/libtilec.so.0.1" ]; then
  ln -sf libtilec.so.0.1 "$OLD/libtilec.so"
  (LD_LIBRARY_PATH=$OLD TILEC_LIBRARY=$OLD/libtilec.so TILEC_CACHE_DIR=/tmp/c-old timeout 200 $B/tests/gpu_test_alignment > /tmp/old_alignment.log 2>&1; echo "exit $? (expected 1: the fix is not in it)" >> /tmp/old_alignment.log
   for i in 1 2 3; do LD_LIBRARY_PATH=$OLD TILEC_LIBRARY=$OLD/libtilec.so TILEC_CACHE_DIR=/tmp/c-old153 timeout 60 $B/tests/gpu_test_random --seeds 60153:60153 --transcendental half | tail -1; done >> /tmp/old_alignment.log 2>&1) &
fi
wait
echo "[tests: $(el) s]"
cat /tmp/*.log > $L/tests.log
grep -hE '^FAIL' /tmp/*.log | head -20
for f in /tmp/gpu_test_*.log /tmp/test_*.log /tmp/rows_sh.log /tmp/pytest_gpu.log /tmp/random.log /tmp/random_60153.log /tmp/old_alignment.log; do
  [ -f "$f" ] || continue
  printf '%-26s %s | %s\n' "$(basename $f .log)" "$(tail -1 $f | cut -c1-60)" "$(grep -E 'passed|failed|PASS|FAIL|hazard|ERROR SUMMARY' $f | tail -1 | cut -c1-100)"; done > $L/table.txt
cat $L/table.txt
echo "== 2. the row kernels' launch variants, the final rule (branch rows5) [$(el) s]"
BENCH_LAUNCH_NOTES=1 FUSED_ONLY=rmsnorm,layernorm,add_rmsnorm,swiglu,rope,embedding_rmsnorm,dropout_residual,moe_permute \
FUSED_TAGS="LAUNCH_VARIANTS" timeout 100 python3 bench/bench.py --lib $B/libtilec.so --only fused --quick --json $L/fused.json > $L/fused.log 2>&1
grep "launch variant" $L/fused.log | sort -u | cut -c1-160 > $L/rows5_table.txt
grep -A30 "^## fused kernels" $L/fused.log | head -22 >> $L/rows5_table.txt
cat $L/rows5_table.txt
echo "== 3. the branches' items [$(el) s]"
for p in bench/pending_*.sh; do [ -f "$p" ] || continue
  left=$(( 560 - $(el) )); [ $left -gt 20 ] || { echo "no time left for $p"; continue; }
  n=$(basename $p .sh); mkdir -p $L/$n
  echo "-- $p ($left s left)"
  CTIME_RUNS=5 CTIME_PACK=0 OUT=$L/$n timeout $left sh $p "$(dirname "$B")" > $L/$n.log 2>&1; echo "$p exit $?"
  tail -25 $L/$n.log
done
echo "[all: $(el) s]"
cat $L/table.txt
