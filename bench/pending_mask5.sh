#!/bin/sh
# bench/pending_mask5.sh (branch mask5, sixteenth session; not run: no device this session): the masks'
# compares rebuilt in their masked path (TILEC_MASK_DIFF=1, lib/codegen/mask_diff.c, opt-in; =2 forces
# the exact i32 form that real sizes never reach).  1. correctness against the interpreter at the ragged
# sizes with the switch on (=1 and =2), causal first: attn.tile (every kernel, and cutlass_attn_fwd at
# D 64 / 128 / 256 x causal 0 / 1), attn_gqa.tile, attn_decode.tile, attn_bwd.tile (their masks take
# the switch too).  2. bench.py --quick, D64 S 1k / 4k / 16k causal and full, the default and =1
# interleaved A B A B beside cuDNN and FA2.  About 115 s warm (the example rounds cut at 60 s: their log says how far they got).
#   here:   tools/carry.sh build        device: run command="sh bench/pending_mask5.sh .carry" carry=[".carry"]
. bench/pending_env.sh
echo "== 1. correctness [$(el) s]"
mkdir -p /tmp/ex5 /tmp/ex5w && cp examples/attn.tile examples/llama/attn_gqa.tile examples/attn_decode.tile examples/attn_bwd.tile /tmp/ex5/
cp examples/attn.tile /tmp/ex5w/
# causal first: tilec run at the D64 causal case the switch is for (S 1000, 777: ragged), then the rounds
( for m in 1 2; do for s in 1000 777; do
  TILEC_MASK_DIFF=$m TILEC_CACHE_DIR=/tmp/c5r$m timeout 30 $B/tilec run examples/attn.tile --kernel cutlass_attn_fwd -D D=64 \
    -D CAUSAL=1 --size Z=1 --size H=3 --size S=$s --scalar scale=0.125 --device > $L/run_$m$s.log 2>&1
  echo "tilec run MASK_DIFF=$m D64 causal S$s: rc $? $(grep -E 'PASS|FAIL' $L/run_$m$s.log | tr '\n' ' ' | cut -c1-140)"
done; done > $L/runs.txt ) &
R=$!
# =2 (the exact form) on attn.tile's default variants only, beside =1 on the four files
GPU_TEST_ATTN_VARIANTS=default TILEC_MASK_DIFF=2 TILEC_CACHE_DIR=/tmp/c5e2 timeout 60 $B/tests/gpu_test_examples /tmp/ex5w \
  > $L/examples2.log 2>&1 &
E2=$!
GPU_TEST_ATTN_VARIANTS=default TILEC_MASK_DIFF=1 TILEC_CACHE_DIR=/tmp/c5e1 timeout 60 $B/tests/gpu_test_examples /tmp/ex5 \
  > $L/examples1.log 2>&1
RC=$?
wait $E2; RC2=$?
wait $R; cat $L/runs.txt
echo "examples MASK_DIFF=1 (attn, attn_gqa, attn_decode, attn_bwd) rc $RC: $(tail -1 $L/examples1.log)"
echo "examples MASK_DIFF=2 (attn, exact form) rc $RC2: $(tail -1 $L/examples2.log)"
grep -hE "^FAIL" $L/examples1.log $L/examples2.log | head -5
echo "== 2. bench [$(el) s]"
K="cutlass_attn_fwd,cutlass_attn_fwd@TILEC_MASK_DIFF=1"
BENCH_ATTN_NO_TRITON=1 TILEC_CACHE_DIR=/tmp/c5b timeout 45 python3 bench/bench.py --lib $B/libtilec.so.0.1 --only attn --quick \
  --attn-cases 64:1024:1,64:4096:1,64:16384:1,64:4096:0 --attn-kernels "$K,$K" > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -E "\| cuDNN \|" $L/bench.log | awk -F' [|] ' '{printf "%-62s %-20s %7s %16s %7s %8s\n", $1, $2, $3, $4, $7, $8}'
grep -E "FAILED|Error|error" $L/bench.log | head -5
