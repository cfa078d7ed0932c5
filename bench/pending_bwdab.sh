#!/bin/sh
# bench/pending_bwdab.sh (twenty-sixth session; ~100 s): bench/bwd_ab.py's rotated rounds (9) for the two
# candidates bwd9 left undecided by the noise of back-to-back medians: D64's dQ kernel on 128 queries (dq128;
# its kernel measured 1.11-1.13x in both of bwd9's rounds) and D128's TILEC_WGMMA_LAZY_WIDE=1.  Rule, written
# before the run: a candidate becomes the default where the median per-round speed of the whole backward is
# >= 1.02x for full and causal, and no round is below 0.99x.
#   device: run command="sh bench/pending_bwdab.sh .carry" carry=[".carry"] timeout_s=200
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cbwdab
timeout -k 10 90 python3 bench/bwd_ab.py --lib $B/libtilec.so --cases 64:4096:0,64:4096:1 --variants default,dq128 \
  --rounds 9 > $L/bwdab64.log 2>&1; echo "D64 rc $? [$(el) s]"
timeout -k 10 100 python3 bench/bwd_ab.py --lib $B/libtilec.so --cases 128:4096:0,128:4096:1 --variants default,lazywide \
  --rounds 9 > $L/bwdab128.log 2>&1; echo "D128 rc $? [$(el) s]"
grep -h "^ab \|rel. err\|Error" $L/bwdab64.log $L/bwdab128.log | cut -c1-170
