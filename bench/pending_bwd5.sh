#!/bin/sh
# bench/pending_bwd5.sh CARRY (branch bwd5, sixteenth session; <= 120 s): the one-pass attention
# backward (bench/variants/attn_bwd_fused.tile) with dQ's partials by a TMA bulk reduce-add
# (TILEC_ATOMIC_TMA=1, emit_atomic_tma.c) and by red per element (=0), and its D128 form (the dQ dot,
# mma.sync, reading k's wgmma atoms).  Here: `sh tools/carry.sh build`; on the device:
#   run command="sh bench/pending_bwd5.sh .carry" carry=[".carry"]
# 1. correctness: split-K's atomic by the TMA reduce vs the interpreter (tilec run), then
#    tests/gpu/test_attn_bwd_fused.py (fp64 autograd, S 1/127/129/1000/4097, D 64/128, modes 1, 2, 0,
#    causal and not, outputs and scratch NaN-poisoned; TMA reduce first, then red)
# 2. bench.py --only attnbwd --quick: the three-kernel default, fused (red), fused-tma (=1), fused-tma-bn128
#    (D64, 128 keys on 8 warps), fused-tma2 (=2: two buffers, one barrier) beside FA2 and cuDNN in
#    one process (S4096, Z4, H16); a short table last.
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cbwd5
echo "== 1. correctness [$(el) s]"
# split-K's partial product by the TMA reduce (rank 2, ragged M and N: boxes partly and wholly past the
# end), then a row stride a map cannot take (N 201: the no-TMA form), against the interpreter
for n in 200 201; do
  TILEC_ATOMIC_TMA=1 timeout 8 $B/tilec run examples/splitk_gemm.tile --pipeline=cutlass --size M=100 --size N=$n \
    --size K=1000 --device > $L/splitk_$n.log 2>&1
  echo "splitk_gemm TMA reduce M100 N$n K1000: rc $? $(grep -E 'PASS|FAIL' $L/splitk_$n.log | tr '\n' ' ' | cut -c1-160)"
done
timeout 45 python3 tests/gpu/test_attn_bwd_fused.py --lib $B/libtilec.so.0.1 --modes 1,2,0 > $L/test_fused.log 2>&1
echo "test_attn_bwd_fused rc $? [$(el) s]: $(tail -1 $L/test_fused.log)"
grep -E "^FAIL|self-test" $L/test_fused.log | head -8
echo "== 2. bench [$(el) s]"
timeout 58 python3 bench/bench.py --lib $B/libtilec.so.0.1 --only attnbwd --quick \
  --attnbwd-cases 64:4096:1,128:4096:0,128:4096:1,64:4096:0 --attnbwd-variants default,fused,fused-tma,fused-tma-bn128,fused-tma2 \
  > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -E "fused(-tma)?: pre|attn bwd (fused|fused-tma):|FAILED" $L/bench.log | cut -c1-200
grep -E "^attn bwd .*\| (cuDNN SDPA|FA2 \(SDPA flash\)) \|" $L/bench.log | \
  awk -F' [|] ' '{printf "%-52s %-17s %8s ms %14s %7s %8s\n", $2, $5, $3, $4, $7, $8}'
