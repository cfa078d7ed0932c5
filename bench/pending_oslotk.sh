# bench/pending_oslotk.sh (twenty-ninth session, branch oslotk): O through the last stage's K slot after "q empty"
# (TILEC_ATTN_O_SLOT_K=1, lib/codegen/emit_o_slot.c) instead of its V slot after bar.sync 9 -- each warpgroup's
# epilogue waits only for every score dot of the tile (q empty's 8 arrivals at the loop's exit), not for the other
# warpgroup's last value dot.  Correctness first: gpu_test_examples' two O_SLOT_K variants (the default kernel's form
# at every S on 5 CTAs with the bounded slot; fa3 BN 128 with the counter, the slot on every causal tile; D64 and
# D128, ragged S, 4097, 144 tiles), `tilec run --device` of attn.tile and GQA through their forms; then the switch
# against the default by interleaved rounds.  Predicted (the later warpgroup's last value dot, ~0.2-0.4 us of a
# tile's ~2.5 us outside its loop, off the earlier one's path): D128 full S1k +1-2.5 %, S1280 +1-2 %, S2k+ +-0.3 %
# (q's slot: not taken); causal (every tile, the counter) S1k +1-3 %, S2k +0.5-1.5 %, S4k +0.3-1 %, S16k +-0.3 %.
# A default only if every row it touches gains >= 2 % (else it stays opt-in, recorded).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_oslotk.sh .carry" carry=[".carry"] timeout_s=360
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/coslotk TILEC_LATE_FORMS=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
attn_variants oslotk O_SLOT_K 150
for s in 1000 4097; do
  TILEC_ATTN_O_SLOT_K=1 TILEC_ATTN_FORM_MIN_S=1 TILEC_CACHE_DIR=/tmp/cok$s timeout -k 10 60 $B/tilec run examples/attn.tile \
    --kernel cutlass_attn_fwd -D D=128 -D CAUSAL=1 --size Z=2 --size H=3 --size S=$s --scalar scale=0.0884 --device > $L/a$s.log 2>&1
  echo "attn causal S$s rc $?: $(grep -E 'PASS|FAIL' $L/a$s.log | tr '\n' ' ' | cut -c1-100)"
  TILEC_ATTN_O_SLOT_K=1 TILEC_CACHE_DIR=/tmp/cokg$s timeout -k 10 60 $B/tilec run examples/llama/attn_gqa.tile --kernel cutlass_attn_gqa \
    -D D=128 -D CAUSAL=0 --size Z=2 --size H=4 --size HKV=1 --size S=$s --scalar scale=0.0625 --device > $L/g$s.log 2>&1
  echo "gqa full S$s rc $?: $(grep -E 'PASS|FAIL' $L/g$s.log | tr '\n' ' ' | cut -c1-100)"
done
timeout -k 10 130 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 \
  --cases 128:1024:0,128:1280:0,128:2048:0,128:1024:1,128:2048:1,128:4096:1,128:16384:1 \
  --forms default,TILEC_ATTN_O_SLOT_K=1 > $L/ab.log 2>&1
echo "ab rc $? [$(el) s]"
grep -E "^\| D|rror" $L/ab.log | cut -c1-120
