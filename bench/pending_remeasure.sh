# bench/pending_remeasure.sh: the mechanisms earlier sessions left opt-in on 1-5 % readings, measured again launch
# by launch (bench.py bench_interleaved: the rounds' spread fell from +-8 % to +-0.5 % on the backward, twenty-
# seventh session).  First the instrument on the forward (attn_ab --interleave 1 beside 0, same cases and forms),
# then each family; a default needs the rule (median >= 1.02x in every case it touches, no round < 0.99x).
#   Forward (D128 / D256 short, D128 long): O_SLOT (H200 +1.9 % at S1k full), SCHED, KV_SPLIT=1, RED_CHAINS,
#   FORM_MIN_S=1.  Backward: the narrow lazy waits (D128's dQ, D64's both), dQ on 128 queries at D128, D64's dK/dV
#   on 3 stages.  GEMM: TILEC_TILE_PREFETCH=1, the tile group 16.  fp8: the fast forms (256x128 coop, 2x1 cluster).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_remeasure.sh .carry" carry=[".carry"] timeout_s=560
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cremeasure TILEC_LATE_FORMS=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
C1=128:1024:0,128:1024:1,128:16384:0
for i in 1 0; do
  timeout -k 10 70 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 --interleave $i --cases $C1 \
    --forms default,TILEC_ATTN_O_SLOT=1 > $L/fw_i$i.log 2>&1; echo "forward instrument interleave=$i rc $? [$(el) s]"
done
timeout -k 10 150 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 --interleave 1 \
  --cases 64:1024:1,128:1024:0,128:1024:1,128:4096:0,128:16384:0,256:1024:0,256:1024:1 \
  --forms default,TILEC_ATTN_O_SLOT=1,TILEC_ATTN_SCHED=1,TILEC_ATTN_KV_SPLIT=1,TILEC_ATTN_RED_CHAINS=1,TILEC_ATTN_FORM_MIN_S=1 \
  > $L/fw.log 2>&1; echo "forward rc $? [$(el) s]"
timeout -k 10 100 python3 bench/bwd_ab.py --lib $B/libtilec.so --cases 128:4096:0,128:4096:1,64:4096:0,64:4096:1 --rounds 9 \
  --variants default,lazy,dq128,kv64.64.4.3 > $L/bw.log 2>&1; echo "backward rc $? [$(el) s]"
BENCH_INTERLEAVE=1 timeout -k 10 80 python3 bench/bench.py --lib $B/libtilec.so --only gemm --rounds 9 \
  --gemm-sizes 4096x4096x4096,8192x4096x14336 --gemm-variants TILEC_TILE_PREFETCH=1,TILEC_TILE_GROUP=16 > $L/gemm.log 2>&1
echo "gemm rc $? [$(el) s]"
BENCH_INTERLEAVE=1 timeout -k 10 90 python3 bench/fp8_probe.py --lib $B/libtilec.so --sizes 4096,8192 --rounds 9 \
  --forms "tn,tn fast,tn fast 256x128 coop s4,tn fast 128x256 s4 c2x1" > $L/fp8.log 2>&1; echo "fp8 rc $? [$(el) s]"
for i in 1 0; do grep -E "^\| D" $L/fw_i$i.log | sed "s/^/i$i /" | cut -c1-130; done
grep -E "^\| D|Error" $L/fw.log | cut -c1-130
grep -h "^ab \|^ref .*cuDNN\|Error" $L/bw.log | cut -c1-170
grep -E "rounds|^\| gemm|Error" $L/gemm.log | cut -c1-150
grep -E "^\||Error|rounds" $L/fp8.log | cut -c1-150 | head -20
