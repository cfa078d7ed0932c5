#!/bin/sh
# The prologue helper's GPU call (operand prologues, gemm_w4a16): run from the repo root on the
# device with carry [".carry-prologue"]:  sh .carry-prologue/go.sh
# 1. gpu_test_examples over all examples (the ring's element copy of 4-byte words and boxes of
#    fewer chunks than threads are new; every other example's PTX is unchanged), 2. the w4a16 test
#    (fp64 reference, interpreter, prologue on/off, split-K), 3. the prologue lit kernels and
#    gemm_w4a16 under tilec run --device (against the interpreter) and compute-sanitizer,
#    4. bench --only w4a16 (each variant beside cuBLAS bf16 in one run).  A table comes last.
set -u
C=$(pwd)/.carry-prologue; B=$C/b
export LD_LIBRARY_PATH=$B TILEC_LIBRARY=$B/libtilec.so PYTHONUNBUFFERED=1 TILEC_CACHE_DIR=/tmp/c-prologue-$$
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
t0=$(date +%s)
echo "== gpu_test_examples (all examples)"
timeout 150 $B/tests/gpu_test_examples $C/examples > $OUT/examples.log 2>&1; echo "rc=$? [$(( $(date +%s) - t0 ))s]"
grep -E "^FAIL|example files" $OUT/examples.log | head -20; grep -E "w4a16" $OUT/examples.log | head -12
echo "== gpu_test_alignment"
timeout 60 $B/tests/gpu_test_alignment $C/examples > $OUT/align.log 2>&1; echo "rc=$? [$(( $(date +%s) - t0 ))s]"; tail -1 $OUT/align.log
echo "== test_w4a16.py"
timeout 120 python3 $C/tests/gpu/test_w4a16.py --lib $B/libtilec.so --examples $C/examples > $OUT/w4a16.log 2>&1; echo "rc=$? [$(( $(date +%s) - t0 ))s]"
grep -E "FAIL|PASS|route" $OUT/w4a16.log | head -20
echo "== tilec run --device (against the interpreter) and sanitizers"
for spec in "$C/lit/prologue.tile scaled_b --size M=100 --size N=130 --size K=200 --size NS=7" \
            "$C/lit/prologue.tile f32_a --size M=100 --size N=130 --size K=200" \
            "$C/examples/gemm_w4a16.tile gemm_w4a16 --size M=17 --size N=130 --size K=640 --size KW=80 --size NG=5" \
            "$C/examples/gemm_w4a16.tile gemm_w4a16_splitk --size M=17 --size N=64 --size K=1664 --size KW=208 --size NG=13" \
            "$C/examples/attn_rope.tile attn_rope_fwd --size Z=2 --size H=3 --size S=333 --scalar scale=0.125" \
            "$C/examples/attn_rope.tile attn_rope_fwd -D D=128 --warps=8 --size Z=1 --size H=2 --size S=300 --scalar scale=0.09"; do
  set -- $spec; f=$1; k=$2; shift 2
  timeout 40 $B/tilec run $f --kernel $k --device "$@" > $OUT/run.$k.log 2>&1; echo "run $k rc=$? $(tail -1 $OUT/run.$k.log)"
  for tool in memcheck racecheck; do
    timeout 60 compute-sanitizer --tool $tool $B/tilec run $f --kernel $k --device "$@" > $OUT/$tool.$k.log 2>&1
    echo "$tool $k rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/$tool.$k.log | tr '\n' ' ')"
  done
done
echo "[$(( $(date +%s) - t0 ))s]"
echo "== bench --only w4a16, then attnrope --quick"
cd $C && timeout 200 python3 bench/bench.py --lib $B/libtilec.so --root $C --only w4a16 --json $OUT/bench-w4a16.json > $OUT/bench.log 2>&1
echo "bench w4a16 rc=$? [$(( $(date +%s) - t0 ))s]"
timeout 120 python3 bench/bench.py --lib $B/libtilec.so --root $C --only attnrope --quick --json $OUT/bench-rope.json > $OUT/bench-rope.log 2>&1
echo "bench attnrope rc=$? [$(( $(date +%s) - t0 ))s]"
grep -E "^w4a16 .*us|FAILED" $OUT/bench.log $OUT/bench-rope.log
sed -n '/## tilec vs/,$p' $OUT/bench.log $OUT/bench-rope.log
