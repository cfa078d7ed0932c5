#!/bin/sh
# bench/pending_conv26.sh (twenty-sixth session; ~330 s): the two changes of this session on the GPU.
# 1. The warp's reconvergence after thread 0's TMA store (cg_warp_converge): the 128x128 block-scaled
#    spelling's inline form, which failed from 144 tiles on (bsinline3/4: illegal instruction at 2048^3,
#    2048x1152x1024; a hang at 2048x2048x512), now runs at those shapes and 4096^3 (and not persistent).
#    Predicted: every launch done, C finite; TILEC_WARP_CONVERGE=0 brings the failure back (control).
# 2. Correctness of every example whose PTX moved (the 16 TMA-store epilogue files, attn_bwd.tile's D64 dQ
#    on 128 queries): gpu_test_examples over them (interpreter at ragged sizes), test_attn_bwd.py at D64.
# 3. The reconvergence's cost: gemm_probe (bf16 4096^3, 8192^3) and fp8_probe (TN) default against
#    TILEC_WARP_CONVERGE=0 in rotated rounds.  Predicted 1.00 +-1 % (one WARPSYNC, a NOP in the SASS here,
#    once a sub-tile).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_conv26.sh .carry" carry=[".carry"] timeout_s=420
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cconv26
echo "== 1. inline blockscale 128x128 [$(el) s]"
for s in 2048,1152,1024 2048,2048,512 2048,2048,2048 4096,4096,4096; do
  TILEC_CACHE=0 timeout -k 3 15 python3 bench/inline_probe.py --lib $B/libtilec.so --form bs-inline --size 0 --mnk $s > $L/c1_$s.log 2>&1
  echo "bs-inline $s: rc $? $(grep -o 'done; C finite: [A-Za-z]*\|3 more launches done\|cudaError[A-Za-z]*' $L/c1_$s.log | tr '\n' ' ') [$(el) s]"
done
TILEC_PERSIST=0 TILEC_CACHE=0 timeout -k 3 15 python3 bench/inline_probe.py --lib $B/libtilec.so --form bs-inline --size 2048 > $L/c1_np.log 2>&1
echo "bs-inline 2048 not persistent: rc $? $(grep -o 'done; C finite: [A-Za-z]*\|cudaError[A-Za-z]*' $L/c1_np.log | tr '\n' ' ') [$(el) s]"
TILEC_WARP_CONVERGE=0 TILEC_CACHE=0 timeout -k 3 12 python3 bench/inline_probe.py --lib $B/libtilec.so --form bs-inline --size 2048 > $L/c1_off.log 2>&1
echo "control TILEC_WARP_CONVERGE=0 at 2048: rc $? $(grep -o 'done; C finite: [A-Za-z]*\|cudaError[A-Za-z]*' $L/c1_off.log | tr '\n' ' ') [$(el) s]"
echo "== 2. examples whose PTX moved, test_attn_bwd D64 [$(el) s]"
E=/tmp/ex26; rm -rf $E; mkdir -p $E
for f in attn_bwd gemm gemm_bias_gelu gemm_fp8 gemm_fp8_blockscale moe_gemm quant_int8_gemm; do ln -s $PWD/examples/$f.tile $E/; done
TILEC_CACHE_DIR=/tmp/c-ex26 timeout -k 10 230 $B/tests/gpu_test_examples $E > $L/ex26.log 2>&1; echo "gpu_test_examples rc $?: $(tail -1 $L/ex26.log | cut -c1-120) [$(el) s]"
grep "FAIL" $L/ex26.log | head -5 | cut -c1-200
ATTN_BWD_D=64 timeout -k 10 80 python3 tests/gpu/test_attn_bwd.py --lib $B/libtilec.so > $L/bwd64.log 2>&1
echo "test_attn_bwd D64 rc $?: $(tail -1 $L/bwd64.log | cut -c1-120) [$(el) s]"
grep FAIL $L/bwd64.log | head -3 | cut -c1-200
echo "== 3. the cost [$(el) s]"
timeout -k 5 60 python3 bench/gemm_probe.py --lib $B/libtilec.so --sizes 4096x4096x4096,8192x8192x8192 --forms default,noconv --rounds 5 --warm-ms 500 > $L/gp.log 2>&1
echo "gemm_probe rc $?"; grep -E "^\|" $L/gp.log | tail -8 | cut -c1-160
timeout -k 5 60 python3 bench/fp8_probe.py --lib $B/libtilec.so --sizes 4096,8192 --forms "tn,tn noconv" --rounds 5 --warm-ms 500 > $L/fp.log 2>&1
echo "fp8_probe rc $?"; grep -E "^\|" $L/fp.log | tail -8 | cut -c1-160
echo "[$(el) s]"
