# bench/pending_lazydef.sh: the wide lazy waits on the one-warpgroup D128 dK/dV loop by default (twenty-seventh
# session; TILEC_WGMMA_LAZY_WIDE=0 off): test_attn_bwd at the new defaults, then the default against =0 by
# bench/bwd_ab.py's interleaved rounds (bench.py bench_interleaved).  Expected: the interleaved call before the
# default (lazywide x default 1.035 / 1.059, rounds 1.030-1.061), i.e. default x nowide 1.03-1.06.
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_lazydef.sh .carry" carry=[".carry"] timeout_s=200
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/clazydef TILEC_LATE_FORMS=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
ATTN_BWD_PIPES=default,cutlass timeout -k 10 120 python3 tests/gpu/test_attn_bwd.py --lib $B/libtilec.so > $L/tab.log 2>&1
echo "test_attn_bwd rc $?: $(grep -E 'passed' $L/tab.log | tail -1) [$(el) s]"; grep FAIL $L/tab.log | head -4
timeout -k 10 80 python3 bench/bwd_ab.py --lib $B/libtilec.so --cases 128:4096:0,128:4096:1 --rounds 9 \
  --variants default,nowide > $L/ab.log 2>&1; echo "ab rc $? [$(el) s]"
grep -h "^ab \|^ref .*cuDNN\|rel. err\|Error" $L/ab.log | cut -c1-170
