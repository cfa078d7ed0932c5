#!/bin/sh
# bench/pending_rr.sh (twenty-fifth session; ~150 s): TILEC_RING_IN_RANGE's scoped default -- a cp.async ring
# copies a stage only when its iteration runs, for loops whose range starts at a program's own offset (split-K /
# split-KV programs; lib/codegen/ring_range.c).  W4A16 split-K x8 measured +4-12 % with the switch on (H100,
# w4small); the scope moves 5 example files: gemm_w4a16, gemm_w4a16_packed, splitk_gemm, llama/decode_splitk
# (registers only) and attn_decode (paged 144 -> 138 registers, contig 138 -> 128, fused 0 -> 8 B of spills).
# Rule, written before the run: the scoped default stays if every check passes and the paged decode at
# default is no more than 2 % slower than with TILEC_RING_IN_RANGE=0 at each quick case; else it goes back to
# opt-in.   device: run command="sh bench/pending_rr.sh .carry" carry=[".carry"] timeout_s=200
. bench/pending_env.sh
D=/tmp/ex_rr && mkdir -p $D && cp examples/attn_decode.tile examples/splitk_gemm.tile examples/gemm_w4a16.tile \
  examples/gemm_w4a16_packed.tile examples/llama/decode_splitk.tile $D/
echo "== 1. correctness at the default (the scope on) [$(el) s]"
(TILEC_CACHE_DIR=/tmp/crr1 timeout -k 5 100 $B/tests/gpu_test_examples $D > $L/rr_ex.log 2>&1; echo "exit $?" >> $L/rr_ex.log) &
(TILEC_CACHE_DIR=/tmp/crr2 timeout -k 5 100 python3 tests/gpu/test_decode.py --lib $B/libtilec.so > $L/rr_dec.log 2>&1; echo "exit $?" >> $L/rr_dec.log) &
wait
for f in ex dec; do echo "$f: $(tail -2 $L/rr_$f.log | tr '\n' ' ' | cut -c1-160)"; grep -E "^FAIL" $L/rr_$f.log | head -3 | cut -c1-200; done
echo "== 2. paged decode (bench.py --only decode --quick): default, =0, default [$(el) s]"
r=0
for v in "" 0 ""; do r=$((r + 1))
  TILEC_RING_IN_RANGE=$v TILEC_CACHE_DIR=/tmp/crr3$v timeout -k 5 45 python3 bench/bench.py --lib $B/libtilec.so --only decode --quick > $L/rr_bench_$r.log 2>&1
  echo "round $r (TILEC_RING_IN_RANGE='$v') rc $? [$(el) s]"
  grep -E "^\| decode" $L/rr_bench_$r.log | cut -c1-160 | sed "s/^/  r$r /"
done
echo "[$(el) s]"
