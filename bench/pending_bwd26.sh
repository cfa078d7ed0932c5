#!/bin/sh
# bench/pending_bwd26.sh (twenty-sixth session; ~150 s): D64's dK/dV on sm_90a on 64 queries x 2 stages (bwdab2:
# 1.073x full, 1.078x causal, every round >= 1.040) made the default: its checks (test_attn_bwd D64 against
# autograd, gpu_test_examples over attn_bwd.tile against the interpreter at ragged S), the whole backward against
# the session's start (kv64.32.4.4+q64.64.4.4 = both D64 tiles before), and D128's two near-misses read again
# with 9 rounds (kv64.64.4.2: 1.048 / 1.032 with one round at 0.976; lazywide+lazy 1.046 / 1.033, rounds to 0.973).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_bwd26.sh .carry" carry=[".carry"] timeout_s=240
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cbwd26
ATTN_BWD_D=64 timeout -k 10 60 python3 tests/gpu/test_attn_bwd.py --lib $B/libtilec.so > $L/t64.log 2>&1
echo "test_attn_bwd D64 rc $?: $(tail -1 $L/t64.log | cut -c1-100) [$(el) s]"; grep FAIL $L/t64.log | head -3
E=/tmp/exb26; rm -rf $E; mkdir -p $E; ln -s $PWD/examples/attn_bwd.tile $E/
timeout -k 10 60 $B/tests/gpu_test_examples $E > $L/exb.log 2>&1; echo "gpu_test_examples attn_bwd rc $?: $(tail -1 $L/exb.log | cut -c1-100) [$(el) s]"
grep FAIL $L/exb.log | head -3 | cut -c1-200
timeout -k 10 50 python3 bench/bwd_ab.py --lib $B/libtilec.so --cases 64:4096:0,64:4096:1 --rounds 7 \
  --variants default,kv64.32.4.4+q64.64.4.4 > $L/b64.log 2>&1; echo "D64 rc $? [$(el) s]"
timeout -k 10 90 python3 bench/bwd_ab.py --lib $B/libtilec.so --cases 128:4096:0,128:4096:1 --rounds 9 \
  --variants default,kv64.64.4.2,lazywide+lazy,kv64.64.4.2+lazy > $L/b128.log 2>&1; echo "D128 rc $? [$(el) s]"
grep -h "^ab " $L/b64.log $L/b128.log | cut -c1-170
