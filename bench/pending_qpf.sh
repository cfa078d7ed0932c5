# bench/pending_qpf.sh (thirty-first session): fa3's producer asks L2 for the tile's q at the tile's start
# (TILEC_ATTN_Q_PREFETCH=1, lib/codegen/emit_q_tma.c cg_q_tma_prefetch_l2: two cp.async.bulk.prefetch.tensor at D128,
# four at D256), so q's load at the previous tile's loop exit -- the one DRAM read on a tile's edge, q being read once
# -- reads L2.  Correctness first: gpu_test_examples' two Q_PREFETCH variants (the default kernel's form at every S on
# 5 CTAs, D128 and D256; fa3 BN 128 with the counter), `tilec run --device` of attn.tile causal and GQA; then the
# switch against the default by interleaved rounds (bench/attn_ab.py; rel. err against fp32 SDPA in its table).
# Predicted (written before the run; bench/attn_tile_model.py's edge: q's ~1200-2000 clocks from DRAM against the
# later warpgroup's ~1600-2200 of last value dot and epilogue, and the earlier warpgroup needs its half of q about
# half a step sooner; from L2 ~500-800): D128 full / causal S1k +1-3 %, D256 S1k +1.5-4 % (64 KiB of q), S4k +0.3-1 %,
# S16k +-0.3 %.  Rule (written before): the default if every S1k row (D128, D256; full, causal) reads >= 1.015 and
# no row reads < 0.995; else it stays opt-in, recorded.
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_qpf.sh .carry" carry=[".carry"] timeout_s=360
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cqpf TILEC_LATE_FORMS=0
# (the thirty-second session's short causal form off: both forms measured on the base the prediction was written for)
export TILEC_ATTN_FORM_KSLOT=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
# QPF_QUICK=1: the timing alone (attn_ab checks each form against fp32 SDPA at its sizes), for a short budget
if [ -z "${QPF_QUICK:-}" ]; then
attn_variants qpf Q_PREFETCH 90
attn_runs TILEC_ATTN_Q_PREFETCH=1
fi
timeout -k 10 120 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 5 --triton 0 \
  --cases 128:512:0,128:1024:0,128:1024:1,128:4096:0,128:4096:1,128:16384:0,128:16384:1,256:1024:0,256:1024:1,256:4096:0,256:4096:1,256:16384:0,256:16384:1 \
  --forms default,TILEC_ATTN_Q_PREFETCH=1 > $L/ab.log 2>&1
echo "ab rc $? [$(el) s]"
grep -E "^\| D|rror" $L/ab.log | cut -c1-120
