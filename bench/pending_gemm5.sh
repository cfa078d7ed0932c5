#!/bin/sh
# gemm5 call 2: the cooperative default for a plain 16-bit GEMM: correctness (gemm.tile at ragged sizes
# against the interpreter, default and every TILEC_WS variant; a plain nn.Linear kernel by `tilec run`),
# then the default against TILEC_WS=off on the 18 cases, then linear + bias + GELU ring vs coop
C=$PWD/${1:-.carry-gemm5}  # (sh bench/pending_gemm5.sh CARRY: CARRY holds b/ (libtilec, tilec, tests/gpu_test_examples), bench/, examples/, linear_plain.tile)
export LD_LIBRARY_PATH=$C/b PYTHONUNBUFFERED=1
mkdir -p /tmp/ex1 /tmp/ex2 && cp $C/examples/gemm.tile /tmp/ex1/ && cp $C/examples/gemm_bias_gelu.tile /tmp/ex2/
( GPU_TEST_VARIANTS=default $C/b/tests/gpu_test_examples /tmp/ex1 > $OUT/ex_default.log 2>&1; echo "default rc=$?" >> $OUT/ex_default.log ) &
( GPU_TEST_VARIANTS=TILEC_WS $C/b/tests/gpu_test_examples /tmp/ex1 > $OUT/ex_ws.log 2>&1; echo "ws rc=$?" >> $OUT/ex_ws.log ) &
( GPU_TEST_VARIANTS=TILEC_WS $C/b/tests/gpu_test_examples /tmp/ex2 > $OUT/ex_gelu.log 2>&1; echo "gelu rc=$?" >> $OUT/ex_gelu.log ) &
( TILEC_TMA_FORM=0 GPU_TEST_VARIANTS=default $C/b/tests/gpu_test_examples /tmp/ex1 > $OUT/ex_inline.log 2>&1; echo "inline rc=$?" >> $OUT/ex_inline.log ) &
( for s in "M=131 N=263 K=511" "M=1537 N=2600 K=33" "M=257 N=509 K=127" "M=1 N=300 K=511"; do
    set -- $s; $C/b/tilec run $C/linear_plain.tile --size $1 --size $2 --size $3 --device 2>&1 | tail -2; done > $OUT/linear_run.log 2>&1 ) &
wait
tail -n 2 $OUT/ex_default.log $OUT/ex_ws.log $OUT/ex_inline.log $OUT/ex_gelu.log; grep -c PASS $OUT/linear_run.log; grep -v PASS $OUT/linear_run.log | head -5
grep -E 'FAIL' $OUT/ex_default.log $OUT/ex_ws.log $OUT/ex_inline.log $OUT/ex_gelu.log | head -5
python3 $C/bench/gemm_probe.py --lib $C/b/libtilec.so --storage kn,nk --forms default,off --rounds 3 --rep 50 --warm-ms 300 \
  --sizes 4096x4096x4096,8192x8192x8192,8192x6144x4096,8192x4096x4096,8192x28672x4096,8192x4096x14336,8192x10240x8192,8192x28672x8192,8192x8192x28672 \
  > $OUT/probe2.log 2>&1
grep -A40 '^| shape' $OUT/probe2.log
python3 $C/bench/bench.py --lib $C/b/libtilec.so --root $C --only linear --quick --linear-no-compile --linear-variants "TILEC_WS=coop" > $OUT/linear2.log 2>&1
grep -E '^linear' $OUT/linear2.log
