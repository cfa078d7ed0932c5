#!/bin/sh
# bench/pending_hoistop.sh: the call the twenty-first session's branch hoistop owes (built without a device):
# the materialize-once form (TILEC_HOIST_OPERAND=1, off until this runs; lib/hoist_operand.h, docs/pipelines.md
# "Materialize once: a B computed in the loop"): for examples/gemm_w4a16.tile's gemm_w4a16 a launch with M >= 128
# runs a pre-kernel writing B = bf16(q s - z) once into the handle's workspace [K, N], then the kernel with B a
# plain load of it at cutlass_gemm's tile (TMA + wgmma, warp-specialized, persistent); M < 128 the fused kernel.
# 1. `tilec run --device` against the interpreter with the switch on at M 1, 64 (the kernel), 128, 300 (the form),
#    N 1004 (the workspace's rows padded to 16 bytes; C no tensor map: the form's no-TMA form) and 4096, K 640;
#    the log's note (which path ran) before each PASS / FAIL;
# 2. tests/gpu/test_hoist_operand.py: switch on and off at M 128, 1, 64, 300, 4096 (N = K = 4096) and ragged
#    300x1004x640, 129x200x1024 against fp64 (outputs poisoned, a moved zero point caught, the log's path
#    checked); then (TEST_HOIST_TIME=1) us on / off beside cuBLAS bf16 at M 64, 128, 512, 4096 (N = K = 4096)
#    and 8192x4096x14336, 8192x14336x4096; the table last (~40-70 s).  If 1 or 2 fails, the numbers say nothing.
#   here:   sh tools/carry.sh build
#   device: run command="sh bench/pending_hoistop.sh .carry" carry=[".carry"] timeout_s=150
. bench/pending_env.sh
R=$(pwd)
export TILEC_CACHE_DIR=/tmp/choist
echo "== 1. tilec run --device against the interpreter, TILEC_HOIST_OPERAND=1 [$(el) s]"
pass=0
fail=0
i=0
while read -r m n k; do
  [ -n "$m" ] || continue
  i=$((i + 1))
  TILEC_HOIST_OPERAND=1 timeout -k 5 30 $B/tilec run examples/gemm_w4a16.tile --kernel gemm_w4a16 --size M=$m --size N=$n \
    --size K=$k --size KW=$((k / 8)) --size NG=$((k / 128)) --seed $((i + 40)) --device > $L/run$i.log 2>&1
  rc=$?
  if [ $rc = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
  pick=$(grep -oE "its materialize-once form runs it|the kernel itself runs it" $L/run$i.log | tail -1)
  echo "rc $rc M=$m N=$n K=$k: ${pick:-no note} | $(grep -E 'max abs err' $L/run$i.log | head -1 | cut -c1-140) [$(el) s]"
done << 'EOF2'
1 1004 640
64 4096 640
128 1004 640
300 4096 640
300 1004 640
EOF2
echo "tilec run: $pass PASS, $fail FAIL [$(el) s]"
echo "== 2. test_hoist_operand.py (fp64 checks on / off, the log's path, then timing) [$(el) s]"
TEST_HOIST_TIME=1 TEST_HOIST_PRE_TILES=64x256,128x128 timeout -k 10 90 python3 tests/gpu/test_hoist_operand.py --lib $B/libtilec.so --examples $R/examples \
  > $L/hoist.log 2>&1
echo "test_hoist_operand rc $? [$(el) s]"
grep -E "^(ok|FAIL)|test_hoist_operand:|Traceback|Error|skipped" $L/hoist.log | head -24
echo "== table (H200 expected; x cuB = cuBLAS us / us, same process; on = TILEC_HOIST_OPERAND=1 (pre-kernel +"
echo "   cutlass_gemm-like form at M >= 128), off = the fused gemm_w4a16; on/off = off us / on us)"
grep -E "^shape|^hoist " $L/hoist.log
echo "done [$(el) s]"
