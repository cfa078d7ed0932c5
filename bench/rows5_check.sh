#!/bin/sh
# bench/rows5_check.sh CARRY: the GPU check branch rows5 owes (bench/RESULTS.md, branch rows5): the final
# rule of the launch variants (the default keeps fewer than 24 warps an SM: lib/api/jit.c ROW_VARIANT_WARPS)
# on the device, its decision per kernel (the launcher's notes: CTAs an SM of the default and of the
# variant, as the driver's JIT allocated) beside TILEC_LAUNCH_VARIANTS=0, and rows.sh stage 1.  CARRY holds
# build/ (libtilec.so.0.1, libtilec.so, tilec), bench/ (bench.py, variants/), examples/, tests/gpu/rows.sh
# of the branch; run on the device as `sh CARRY/bench/rows5_check.sh CARRY` (~80 s with a cold start).
C=$(cd "${1:?usage: rows5_check.sh CARRY}" && pwd); B=$C/build
export LD_LIBRARY_PATH=$B TILEC_LIBRARY=$B/libtilec.so PYTHONUNBUFFERED=1 TILEC_CACHE_DIR=/tmp/c-rows5c
OUT=${OUT:-/tmp}
(cd $C && ROWS_STAGE_LIST=1 sh tests/gpu/rows.sh build > $OUT/rows.log 2>&1
 echo "rows.sh rc=$?: $(grep -c ^PASS $OUT/rows.log) PASS, $(grep -c ^FAIL $OUT/rows.log) FAIL")
python3 $C/bench/bench.py --lib $B/libtilec.so --only veconly --json $OUT/veconly.json 2>&1 | grep -E "^variants|^veconly"
BENCH_LAUNCH_NOTES=1 FUSED_ONLY=rmsnorm,layernorm,add_rmsnorm,swiglu,rope,embedding_rmsnorm,dropout_residual,moe_permute \
FUSED_TAGS="LAUNCH_VARIANTS" python3 $C/bench/bench.py --lib $B/libtilec.so --only fused --quick --json $OUT/fused.json > $OUT/fused.log 2>&1
grep "launch variant" $OUT/fused.log | sort -u
grep -A30 "^## fused kernels" $OUT/fused.log | head -22
