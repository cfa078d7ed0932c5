#!/bin/sh
# bench/pending_bwdtiles.sh (twenty-sixth session, for the next card; ~110 s): the attention backward's sm_90a
# tiles made the default on an H100 (dQ on 128 queries at D64; dK/dV 64 keys x 64 queries on 2 stages at D64 and
# D128) against the tiles before them, by bench/bwd_ab.py's rotated rounds (9): D64 kv64.32.4.4+q64.64.4.4, D128
# kv128.64.8.4; and D64 kv64.64.4.3 (the tile on 3 stages: 155 regs, 66 KB, still three CTAs an SM).  The H100 read: D64 1.144 / 1.130x (full / causal), D128 1.038-1.048 / 1.032-1.042x.  Predicted on
# an H200: within +-3 % of those (the same SM; more bandwidth helps the two-CTA tiles' extra Q / dO reads).  If a
# case reads < 1.0 in the median there, the tile becomes a choice by card (ARCH_SPECIFIC cannot tell them apart:
# docs/decisions.md).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_bwdtiles.sh .carry" carry=[".carry"] timeout_s=200
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cbwdtiles
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
timeout -k 10 80 python3 bench/bwd_ab.py --lib $B/libtilec.so --cases 64:4096:0,64:4096:1 --rounds 9 \
  --variants default,kv64.32.4.4+q64.64.4.4,kv64.64.4.3 > $L/bt64.log 2>&1; echo "D64 rc $? [$(el) s]"
timeout -k 10 90 python3 bench/bwd_ab.py --lib $B/libtilec.so --cases 128:4096:0,128:4096:1 --rounds 9 \
  --variants default,kv128.64.8.4 > $L/bt128.log 2>&1; echo "D128 rc $? [$(el) s]"
grep -h "^ab \|^ref \|rel. err\|Error" $L/bt64.log $L/bt128.log | cut -c1-170
