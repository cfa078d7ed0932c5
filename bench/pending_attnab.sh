#!/bin/sh
# bench/pending_attnab.sh (twenty-sixth session; ~90 s): the forward's ratios to cuDNN by rotated rounds
# (bench/attn_ab.py, 7 rounds) on the 18 cases (D 64 / 128 / 256, S 1k / 4k / 16k, full / causal), beside
# bench.py's back-to-back numbers of call 1.  Predicted: within +-3 % of call 1's ratios; where call 1 read 0.96-1.0,
# the rounds say which side of 1.0 the median is.
#   device: run command="sh bench/pending_attnab.sh .carry" carry=[".carry"] timeout_s=150
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cattnab
timeout -k 10 140 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 \
  --cases 64:1024:0,64:1024:1,64:4096:0,64:4096:1,64:16384:0,64:16384:1,128:1024:0,128:1024:1,128:4096:0,128:4096:1,128:16384:0,128:16384:1,256:1024:0,256:1024:1,256:4096:0,256:4096:1,256:16384:0,256:16384:1 \
  > $L/attnab.log 2>&1; echo "rc $? [$(el) s]"
grep -E "^\||Error" $L/attnab.log | cut -c1-150
