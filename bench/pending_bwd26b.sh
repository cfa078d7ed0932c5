#!/bin/sh
# bench/pending_bwd26b.sh (twenty-sixth session; ~60 s): D128's dK/dV on sm_90a on 64 keys x 64 queries, 4 warps,
# 2 stages (bwd_ab twice: 1.048 / 1.032 and 1.038 / 1.042, full / causal) made the default: its checks.
#   device: run command="sh bench/pending_bwd26b.sh .carry" carry=[".carry"] timeout_s=150
. bench/pending_env.sh
ATTN_BWD_D=128 timeout -k 10 70 python3 tests/gpu/test_attn_bwd.py --lib $B/libtilec.so > $L/t128.log 2>&1
echo "test_attn_bwd D128 rc $?: $(tail -1 $L/t128.log | cut -c1-100) [$(el) s]"; grep FAIL $L/t128.log | head -3
E=/tmp/exb26b; rm -rf $E; mkdir -p $E; ln -s $PWD/examples/attn_bwd.tile $E/
timeout -k 10 60 $B/tests/gpu_test_examples $E > $L/exb.log 2>&1; echo "gpu_test_examples attn_bwd rc $?: $(tail -1 $L/exb.log | cut -c1-100) [$(el) s]"
grep FAIL $L/exb.log | head -3 | cut -c1-200
