#!/bin/sh
# bench/pending_attntiles.sh (twenty-sixth session, for the next call; ~150 s): the short causal forward's tile
# (D64 S1k causal 0.962x cuDNN, D128 S1k causal 0.872x, D256 0.938x by rotated rounds, H100), searched as the
# backward's tiles were this session (there a 64 x 64 tile won 7 %): bench/attn_ab.py, 7 rounds, beside cuDNN.
# Candidates (ptxas 13.0 here; the default first): D64 BN=64 (4 stages, 119 regs, 82 KB), BM=64 (one warpgroup,
# 167 regs, 107 KB, 3 stages), BM=64@stages=2 (150, 74 KB: three CTAs an SM); D128 stages=3 (147, 131 KB: one
# CTA), BM=64 (145, 115 KB, 3 stages), BM=64@stages=2 (147, 82 KB: two CTAs of one warpgroup); D256 BM=64 (208,
# 164 KB).  Predicted: within 0.93-1.05x the default each (the causal tile's short rows reward smaller tiles
# only where the first / last block's edges dominate); a tile >= 1.03x in the median with no round < 0.99x at
# S1k and no loss at S4k becomes a choice by S (passes/attn_form.c's pattern).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_attntiles.sh .carry" carry=[".carry"] timeout_s=240
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cattntiles
timeout -k 10 80 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 --cases 64:1024:1,64:4096:1 \
  --forms "default,BN=64,BM=64,BM=64@stages=2" > $L/at64.log 2>&1; echo "D64 rc $? [$(el) s]"
timeout -k 10 80 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 --cases 128:1024:1,128:4096:1 \
  --forms "default,stages=3,BM=64,BM=64@stages=2" > $L/at128.log 2>&1; echo "D128 rc $? [$(el) s]"
timeout -k 10 60 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 --cases 256:1024:1,256:4096:1 \
  --forms "default,BM=64" > $L/at256.log 2>&1; echo "D256 rc $? [$(el) s]"
grep -hE "^\| D|Error" $L/at64.log $L/at128.log $L/at256.log | cut -c1-150
