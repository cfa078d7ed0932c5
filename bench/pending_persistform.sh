#!/bin/sh
# bench/pending_persistform.sh (branch persistform, eighteenth session; not run: no device this session):
# the persistent form of a D256 full wgmma attention kernel picked at launch by S (passes/
# attn_persist_form.c, lib/attn_persist_form.h: S <= 2048 runs the kernel compiled with attn-persist=1,
# longer S the kernel; TILEC_ATTN_PERSIST=0 turns the pick off; bench/RESULTS.md "branch persistform"
# has the prediction).
# 1. correctness against the interpreter: gpu_test_examples' default variant (at D256 full every ragged
#    size up to (1, 2, 1000) runs the form) and its PERSIST_MAX_S variant (the bound at 1024: up to
#    (1, 2, 1000) the form, (2, 8, 1100) and 4097 the kernel, in one handle; 5 CTAs so the form runs
#    several tiles a CTA), D 64 / 128 / 256, causal 0 / 1; beside `tilec run --device` at D256 full
#    (1, 1, 2048) (the form at the bound) and (1, 1, 2049) (the kernel).  bench.py's rows (step 2) check
#    each kernel against SDPA in fp32.
# 2. bench.py --quick: D256 / D128 full at S 1k / 2k / 4k, the default (A: the form at D256 S <= 2048)
#    and TILEC_ATTN_PERSIST=0 (B: the kernel alone), timed A B B A beside cuDNN and FA2 in one process
#    (D128: no such form, A and B the same kernels: the noise; S 2k / 4k at D128 run the fa3 form in
#    both).  TILEC_LATE_FORMS=0 so the forms compile while bench.py holds the switch set.
# A short table last.  About 110 s warm (60 s + 50 s at most).
#   here:   tools/carry.sh build        device: run command="sh bench/pending_persistform.sh .carry" carry=[".carry"] timeout_s=180
. bench/pending_env.sh
echo "== 1. correctness, the persistent form picked by S [$(el) s]"
mkdir -p /tmp/ex_pf && cp examples/attn.tile /tmp/ex_pf/
for s in 2048 2049; do
  ( TILEC_CACHE_DIR=/tmp/pfr$s timeout -k 10 55 $B/tilec run examples/attn.tile --kernel cutlass_attn_fwd -D D=256 \
      --size Z=1 --size H=1 --size S=$s --scalar scale=0.0625 --device > $L/run_$s.log 2>&1
    echo "tilec run D256 full Z1 H1 S$s: rc $? $(grep -E 'PASS|FAIL' $L/run_$s.log | tr '\n' ' ' | cut -c1-140)" \
      > $L/run_$s.txt ) &
done
GPU_TEST_VARIANTS_ONLY=1 GPU_TEST_ATTN_VARIANTS=default,PERSIST_MAX_S TILEC_CACHE_DIR=/tmp/pfe timeout -k 10 60 $B/tests/gpu_test_examples /tmp/ex_pf \
  > $L/examples.log 2>&1
echo "examples (default, PERSIST_MAX_S variants) rc $? [$(el) s]: $(tail -1 $L/examples.log)"
grep -E "^FAIL" $L/examples.log | head -5
wait; cat $L/run_*.txt
echo "== 2. bench [$(el) s]"
A="cutlass_attn_fwd"; Bk="cutlass_attn_fwd@TILEC_ATTN_PERSIST=0"
TILEC_LATE_FORMS=0 BENCH_ATTN_NO_TRITON=1 TILEC_CACHE_DIR=/tmp/pfb timeout -k 10 50 python3 bench/bench.py --lib $B/libtilec.so.0.1 --quick \
  --only attn --attn-cases 256:1024:0,256:2048:0,256:4096:0,128:1024:0,128:2048:0,128:4096:0 \
  --attn-kernels "$A,$Bk,$Bk,$A" > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -E "FAILED|Error|error" $L/bench.log | head -5
echo "== table: x cuDNN (same run), A default (D256 S <= 2048: the persistent form), B TILEC_ATTN_PERSIST=0"
grep -E "\| cuDNN \|" $L/bench.log | awk -F' [|] ' '{printf "%-52s %-18s %7s %16s %7s %8s\n", $1, $2, $3, $4, $7, $8}'
echo "[all: $(el) s]"
