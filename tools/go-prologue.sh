#!/bin/sh
# The prologue helper's GPU call (operand prologues, gemm_w4a16, attn_rope): from the repo root on
# the device, carry [".carry-prologue"] (filled by tools/carry-prologue.sh):  sh .carry-prologue/go.sh
# In order of importance, each step with its own limit, the last ones skipped when the call's
# ~560 s run out:
# 1. tests/gpu/test_w4a16.py: gemm_w4a16 and _splitk, prologue on and off, at decode shapes up to
#    16x4096x5248 and ragged ones, against fp64 and the interpreter;
# 2. bench --only w4a16 (each variant beside cuBLAS bf16 in one run);
# 3. gpu_test_examples over all examples against the interpreter (every other example's PTX is
#    unchanged, but the ring's element copy of 4-byte words and boxes of fewer chunks than threads
#    are new; attn_rope.tile is new);
# 4. tilec run --device (against the interpreter) and compute-sanitizer memcheck / racecheck on the
#    prologue lit kernels, both w4a16 kernels and attn_rope D64 / D128;
# 5. bench --only attnrope --quick (attn_rope beside the plain forward, rope.tile + attn_fwd,
#    torch RoPE + cuDNN).  Tables last.
set -u
C=$(pwd)/.carry-prologue; B=$C/b
export LD_LIBRARY_PATH=$B TILEC_LIBRARY=$B/libtilec.so PYTHONUNBUFFERED=1 TILEC_CACHE_DIR=/tmp/c-prologue-$$
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
echo "== 1. test_w4a16.py"
timeout 100 python3 $C/tests/gpu/test_w4a16.py --lib $B/libtilec.so --examples $C/examples > $OUT/w4a16.log 2>&1; echo "rc=$? [$(el)s]"
grep -E "FAIL|PASS|route" $OUT/w4a16.log | head -20
echo "== 2. bench --only w4a16"
(cd $C && timeout 150 python3 bench/bench.py --lib $B/libtilec.so --root $C --only w4a16 --json $OUT/bench-w4a16.json > $OUT/bench.log 2>&1); echo "rc=$? [$(el)s]"
grep -E "^w4a16 .*us|FAILED" $OUT/bench.log
echo "== 3. gpu_test_examples (all examples)"
timeout 150 $B/tests/gpu_test_examples $C/examples > $OUT/examples.log 2>&1; echo "rc=$? [$(el)s]"
grep -E "^FAIL|example files" $OUT/examples.log | head -20; grep -E "^PASS .*(w4a16|attn_rope)" $OUT/examples.log | head -12
echo "== 4. tilec run --device (against the interpreter) and sanitizers"
for spec in "$C/lit/prologue.tile scaled_b --size M=100 --size N=130 --size K=200 --size NS=7" \
            "$C/lit/prologue.tile f32_a --size M=100 --size N=130 --size K=200" \
            "$C/lit/prologue.tile boxed_b --size M=70 --size N=100 --size K=300 --size R=80" \
            "$C/examples/gemm_w4a16.tile gemm_w4a16 --size M=17 --size N=130 --size K=640 --size KW=80 --size NG=5" \
            "$C/examples/gemm_w4a16.tile gemm_w4a16_splitk --size M=17 --size N=64 --size K=1664 --size KW=208 --size NG=13" \
            "$C/examples/attn_rope.tile attn_rope_fwd --size Z=2 --size H=3 --size S=333 --scalar scale=0.125" \
            "$C/examples/attn_rope.tile attn_rope_fwd -D D=128 --warps=8 --size Z=1 --size H=2 --size S=300 --scalar scale=0.09"; do
  [ $(el) -gt 420 ] && { echo "skipped (time): $spec"; continue; }
  set -- $spec; f=$1; k=$2; shift 2
  timeout 40 $B/tilec run $f --kernel $k --device "$@" > $OUT/run.$k.log 2>&1; echo "run $k $* rc=$? $(tail -1 $OUT/run.$k.log)"
  for tool in memcheck racecheck; do
    [ $(el) -gt 440 ] && continue
    timeout 40 compute-sanitizer --tool $tool $B/tilec run $f --kernel $k --device "$@" > $OUT/$tool.$k.log 2>&1
    echo "  $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/$tool.$k.log | tr '\n' ' ')"
  done
done
echo "[$(el)s]"
left=$(( 560 - $(el) ))
echo "== 5. bench --only attnrope --quick (limit ${left}s)"
if [ $left -gt 30 ]; then
  (cd $C && timeout $left python3 bench/bench.py --lib $B/libtilec.so --root $C --only attnrope --quick --json $OUT/bench-rope.json > $OUT/bench-rope.log 2>&1); echo "rc=$? [$(el)s]"
  grep -E "FAILED|rel.err" $OUT/bench-rope.log
fi
sed -n '/## tilec vs/,$p' $OUT/bench.log $OUT/bench-rope.log 2>/dev/null
