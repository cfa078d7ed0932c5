# bench/pending_oslotband.sh: TILEC_ATTN_O_SLOT=1 across S (twenty-eighth session).  The twenty-seventh session's
# remeasure (H100, interleaved rounds) read O_SLOT +2.4-2.7 % at D128 S1k full in two calls and -0.7 % at S4k, -0.8 %
# at S16k: a switch that pays at short S only.  This places the band: D128 full S 1k / 1.5k / 2k / 3k / 8k, D256 full
# S 1k / 2k, GQA's form at S1k (examples/llama/attn_gqa.tile through bench.py is not in attn_ab: left out).
# Rule for a default inside a band: median >= 1.02x at every S of the band, no round < 0.99x.
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_oslotband.sh .carry" carry=[".carry"] timeout_s=300
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/coslotband TILEC_LATE_FORMS=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
timeout -k 10 250 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 --interleave 1 \
  --cases 128:1024:0,128:1536:0,128:2048:0,128:3072:0,128:8192:0,256:1024:0,256:2048:0 \
  --forms default,TILEC_ATTN_O_SLOT=1 > $L/band.log 2>&1; echo "band rc $? [$(el) s]"
grep -E "^\| D|Error" $L/band.log | cut -c1-120
