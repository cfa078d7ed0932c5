#!/bin/sh
# bench/pending_bwdab2.sh (twenty-sixth session; ~150 s): the dK/dV kernel's tile, read with bench/bwd_ab.py's
# rotated rounds (7), now that D64's dQ runs on 128 queries (the default since call 3; q64.64.4.4 is the tile
# before it, the control that re-reads call 3's 1.045-1.061x on whatever card this is).  dK/dV today: D64 64 keys x
# 32 queries on 4 warps (128 registers, 50 KB: four CTAs an SM), D128 128 x 64 on 8 warps (254 registers, 199 KB:
# one).  Candidates (ptxas 13.0 here): D64 kv128.32.8.4 (128 regs, 67 KB, 2 CTAs), kv128.64.8.4 (172, 100 KB, 1),
# kv64.64.4.2 (155, 50 KB, 3); D128 kv64.32.4.4 (191, 99 KB, 2 CTAs: one CTA's exp under the other's dots),
# kv64.64.4.2 (238, 99 KB, 2), and lazywide again, lazy (TILEC_WGMMA_LAZY=1: D128's dQ loop waits each dot late) and both.  Predicted: D128 two CTAs an SM
# 0.95-1.10x (more overlap, but 64-key blocks read Q / dO twice as often); D64 0.9-1.05x.  Rule (written before):
# a tile becomes the default where its median per-round speed of the whole is >= 1.02x for full and causal and no
# round is below 0.99x.
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_bwdab2.sh .carry" carry=[".carry"] timeout_s=240
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cbwdab2
timeout -k 10 110 python3 bench/bwd_ab.py --lib $B/libtilec.so --cases 64:4096:0,64:4096:1 --rounds 7 \
  --variants default,q64.64.4.4,kv128.32.8.4,kv128.64.8.4,kv64.64.4.2 > $L/ab2_64.log 2>&1; echo "D64 rc $? [$(el) s]"
timeout -k 10 120 python3 bench/bwd_ab.py --lib $B/libtilec.so --cases 128:4096:0,128:4096:1 --rounds 7 \
  --variants default,kv64.32.4.4,kv64.64.4.2,lazywide,lazy,lazywide+lazy > $L/ab2_128.log 2>&1; echo "D128 rc $? [$(el) s]"
grep -h "^ab \|Error\|error" $L/ab2_64.log $L/ab2_128.log | cut -c1-170
grep -h "rel. err" $L/ab2_64.log $L/ab2_128.log | awk '{print $NF}' | sort | uniq -c
