#!/bin/sh
# bench/pending_smallm512.sh: the call the twenty-first session's branch smallm512 owes (built without a device):
# the small-M waves form (TILEC_SMALL_M_WAVES=1, off until this runs; docs/small_m.md "Waves"): above M 256 a
# GEMM kernel's own 128x256 tile or a 128x128 form, picked at each launch by a wave model from M, N and the
# SM count (on 132 SMs at N 4096: the form at M 257..512, the kernel from 513; N 14336 the kernel).
# 1. correctness against the interpreter: `tilec run --device` with the switch on at ragged M around the
#    boundary (M 383, 511 the form; 513, 769 the kernel; N 4096 and a ragged 4000; K 1000 / 264) for
#    cutlass_gemm, cutlass_linear_bias_gelu (W [N, K], fused epilogue) and llama's cutlass_gemm_residual,
#    and the form forced at M 1151 (three waves of its tiles); each prints the launch's note (which form ran,
#    why) before its PASS / FAIL;
# 2. bench/smallm512_probe.py: the same kernels and nn.Linear's storage against fp64 with outputs poisoned,
#    the log's pick checked against the model for this device; then timing beside cuBLAS (a @ b, F.linear)
#    in 3 rounds: on / off (=0, the kernel above 256) / the 128x128 form forced to M 2048, at M 384, 512, 768,
#    1024, 1152 (N = K = 4096), 512x14336x4096, 512x4096x14336, linear 512 / 1024; a table last (~60-90 s).
#    If 1 or 2's correctness fails, the numbers say nothing.
#   here:   sh tools/carry.sh build
#   device: run command="sh bench/pending_smallm512.sh .carry" carry=[".carry"] timeout_s=150
#           (or OWED="smallm512:120" sh bench/owed.sh .carry)
. bench/pending_env.sh
R=$(pwd)
export TILEC_CACHE_DIR=/tmp/cs512
echo "== 1. tilec run --device against the interpreter, TILEC_SMALL_M_WAVES=1 [$(el) s]"
pass=0
fail=0
i=0
# file M N K [table]: the kernel, the waves form on (or the table given: the form forced)
while read -r f m n k tab; do
  [ -n "$f" ] || continue
  i=$((i + 1))
  if [ -n "$tab" ]; then
    TILEC_SMALL_M_WAVES=0 TILEC_SMALL_M_FORMS=$tab timeout -k 5 40 $B/tilec run examples/$f --size M=$m --size N=$n --size K=$k \
      --seed $((i + 11)) --device > $L/run$i.log 2>&1
  else
    TILEC_SMALL_M_WAVES=1 timeout -k 5 40 $B/tilec run examples/$f --size M=$m --size N=$n --size K=$k --seed $((i + 11)) \
      --device > $L/run$i.log 2>&1
  fi
  rc=$?
  if [ $rc = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
  pick=$(grep -o "the [a-z]* runs it" $L/run$i.log | tail -1)
  echo "rc $rc $f M=$m N=$n K=$k${tab:+ (forced 128x128)}: ${pick:-no note} | $(grep -E 'max abs err' $L/run$i.log | head -2 | tr '\n' ' ' | cut -c1-160) [$(el) s]"
done << 'EOF'
gemm.tile 383 4096 1000
gemm.tile 511 4000 1000
gemm.tile 513 4096 264
gemm.tile 769 4096 1000
gemm_bias_gelu.tile 511 4000 1000
gemm_bias_gelu.tile 769 4096 264
llama/gemm_residual.tile 383 4096 1000
llama/gemm_residual.tile 513 4000 264
gemm.tile 1151 4096 264 16=16x32x256/multistage/5,128=64x64x128/cutlass/6,256=64x128x128/cutlass/4,2048=128x128x64/cutlass/4
EOF
echo "tilec run: $pass PASS, $fail FAIL [$(el) s]"
echo "== 2. smallm512_probe.py (fp64 checks, the log's pick, then timing) [$(el) s]"
timeout -k 10 100 python3 bench/smallm512_probe.py --lib $B/libtilec.so --examples $R/examples --rounds 3 > $L/probe.log 2>&1
echo "probe rc $? [$(el) s]"
grep -E "^(ok|FAIL)|correctness:|Traceback|Error|skipped" $L/probe.log | head -20
grep -E "^smallm512 " $L/probe.log
echo "== table (H200 expected; x cuB = cuBLAS us / us, same process; on = TILEC_SMALL_M_WAVES=1, off = =0 (the"
echo "   128x256 kernel above M 256), forced = the 128x128 form at every M <= 2048; pick = the wave model's)"
grep -E "^\|" $L/probe.log
tail -1 $L/probe.log
echo "done [$(el) s]"
