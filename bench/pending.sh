#!/bin/sh
# bench/pending.sh: the GPU call the seventh session could not make (device loans paused after its
# branches' own runs): the merged main as a whole, and what was built with no GPU at all.  One call,
# about 9 minutes at most; the table is last.
#
#   here:   tools/carry.sh                  (fills .carry/ from build/: stripped lib, CLI, GPU tests)
#   device: run command="sh bench/pending.sh .carry" carry=[".carry"] timeout_s=600
#
# In order of importance, each step under its own limit (the last ones skipped when time is short):
#  1. every GPU test of tests/gpu (run.sh's set, without the sanitizers) at the defaults, rows.sh in
#     full (the rows2 branch's run stopped in its stage 2), gpu_test_examples on attn.tile (the three
#     attention forms at ragged S) and a racecheck of the ping-pong attention (branch fa3b's fix of
#     its turns, never run: docs/pipelines.md "Warp-specialized attention");
#  2. bench attn: the twelve cases, cutlass_attn_fwd default / TILEC_ATTN_WS=producer / =pingpong
#     beside FA2, cuDNN, Triton (the prediction is in bench/RESULTS.md, branch fa3b);
#  3. bench linear, w4a16, attnrope, rows, gemm (quick): the merged defaults (operand prologues on,
#     split epilogue loads, rcp.approx, row_loads) and their off switches;
#  4. examples/llama/layer.py: prefill (bf16 and --fp8) and decode at batch 64.
# Branch rows3 (no GPU when built; docs/rows.md "rows3", the prediction in bench/RESULTS.md) adds
# to 1: the examples whose PTX the two switches change (embedding_rmsnorm, moe_permute,
# dropout_residual, topk_sample) and gpu_test_lang_memory (rand bit-exact) with
# TILEC_GATHER_LAYOUT=1 TILEC_PHILOX_ASM=1, rows.sh's stage 1 with them; to 3: `--only fused` for
# embedding_rmsnorm, moe_permute, dropout_residual, each with its switch on and off.
# Branch w4frag adds (no GPU when it was built): test_w4a16.py runs TILEC_PROLOGUE_FRAG=1 (B in its
# mma.sync fragments) against the fp64 reference and the interpreter at ragged sizes (step 1), and
# bench w4a16 has the "frag" rows beside the default ones (step 3; prediction in bench/RESULTS.md).
set -u
B=$(cd "${1:-.carry}" && pwd)/b
[ -d "$B" ] || B=$(cd "${1:-build}" && pwd)
R=$(pwd); L=${OUT:-/tmp}; T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
export LD_LIBRARY_PATH=$B TILEC_LIBRARY=$B/libtilec.so PYTHONUNBUFFERED=1 TILEC_EXAMPLES=$R/examples TILEC_CLI=$B/tilec
W=$(dirname "$B")/whl
if ls "$W"/*.whl >/dev/null 2>&1; then  # apache-tvm-ffi, for the Python launch path (optional)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$W"/*.whl 2>&1 | tail -1
  export PYTHONPATH=/tmp/site
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
echo "== 1. GPU tests at the defaults"
mkdir -p /tmp/attn_only && cp examples/attn.tile /tmp/attn_only/
for t in $B/tests/gpu_test_*; do n=$(basename $t); case $n in gpu_test_random) continue;; esac
  (TILEC_CACHE_DIR=/tmp/c-$n timeout 240 $t > /tmp/$n.log 2>&1; echo "exit $?" >> /tmp/$n.log) & done
for p in tests/gpu/test_decode.py tests/gpu/test_attn_bwd.py tests/gpu/test_dot_types.py; do n=$(basename $p .py)
  (TILEC_CACHE_DIR=/tmp/c-$n timeout 200 python3 $p --lib $B/libtilec.so > /tmp/$n.log 2>&1; echo "exit $?" >> /tmp/$n.log) & done
(TILEC_CACHE_DIR=/tmp/c-w4 timeout 200 python3 tests/gpu/test_w4a16.py --lib $B/libtilec.so --examples $R/examples > /tmp/test_w4a16.log 2>&1; echo "exit $?" >> /tmp/test_w4a16.log) &
(TILEC_CACHE_DIR=/tmp/c-rows timeout 240 sh tests/gpu/rows.sh $B > /tmp/rows_sh.log 2>&1; echo "exit $?" >> /tmp/rows_sh.log) &
(cd python/tests && TILEC_CACHE_DIR=/tmp/c-pyt timeout 200 python3 -m pytest -q -p no:cacheprovider test_gpu.py > /tmp/pytest_gpu.log 2>&1; echo "exit $?" >> /tmp/pytest_gpu.log) &
(TILEC_CACHE_DIR=/tmp/c-rr timeout 200 $B/tests/gpu_test_random --seeds 60000:60299 > /tmp/random.log 2>&1; echo "exit $?" >> /tmp/random.log) &
(TILEC_CACHE_DIR=/tmp/c-attn timeout 200 $B/tests/gpu_test_examples /tmp/attn_only > /tmp/attn_forms.log 2>&1; echo "exit $?" >> /tmp/attn_forms.log) &
(for d in 128 64; do for c in 0 1; do echo "== pingpong D$d CAUSAL=$c"
   TILEC_ATTN_WS=pingpong TILEC_CACHE_DIR=/tmp/c-race$d$c timeout 60 compute-sanitizer --tool racecheck \
     $B/tilec run examples/attn.tile --kernel cutlass_attn_fwd -D D=$d -D CAUSAL=$c \
     --size Z=1 --size H=2 --size S=300 --device 2>&1 | tail -3
 done; done > /tmp/race_pingpong.log 2>&1; echo "exit 0" >> /tmp/race_pingpong.log) &
mkdir -p /tmp/rows3_ex && for f in embedding_rmsnorm moe_permute dropout_residual topk_sample; do cp examples/$f.tile /tmp/rows3_ex/; done
(export TILEC_GATHER_LAYOUT=1 TILEC_PHILOX_ASM=1; TILEC_CACHE_DIR=/tmp/c-r3ex timeout 200 $B/tests/gpu_test_examples /tmp/rows3_ex > /tmp/rows3_examples.log 2>&1; echo "exit $?" >> /tmp/rows3_examples.log
 TILEC_CACHE_DIR=/tmp/c-r3lm timeout 200 $B/tests/gpu_test_lang_memory > /tmp/rows3_lang_memory.log 2>&1; echo "exit $?" >> /tmp/rows3_lang_memory.log) &
(TILEC_GATHER_LAYOUT=1 TILEC_PHILOX_ASM=1 ROWS_STAGE_LIST=1 TILEC_CACHE_DIR=/tmp/c-r3rows timeout 200 sh tests/gpu/rows.sh $B > /tmp/rows3_rows_sh.log 2>&1; echo "exit $?" >> /tmp/rows3_rows_sh.log) &
wait
echo "[tests: $(el) s]"
cat /tmp/*.log > $L/tests.log
grep -hE '^FAIL' /tmp/*.log | head -20
for f in /tmp/gpu_test_*.log /tmp/test_*.log /tmp/rows_sh.log /tmp/rows3_*.log /tmp/pytest_gpu.log /tmp/random.log /tmp/attn_forms.log /tmp/race_pingpong.log; do
  printf '%-26s %s | %s\n' "$(basename $f .log)" "$(tail -1 $f)" "$(grep -E 'passed|failed|PASS|FAIL|hazard|ERROR SUMMARY' $f | tail -1 | cut -c1-100)"; done > $L/table.txt
echo "== 2. bench attn [$(el) s]"
export TILEC_CACHE_DIR=/tmp/c-bench TILEC_CACHE=0
CASES=64:1024:0,64:1024:1,64:4096:0,64:4096:1,64:16384:0,64:16384:1,128:1024:0,128:1024:1,128:4096:0,128:4096:1,128:16384:0,128:16384:1
left=$(( 380 - $(el) )); [ $left -gt 150 ] && left=150
[ $left -gt 40 ] && timeout $left python3 bench/bench.py --lib $B/libtilec.so --only attn --quick --attn-cases $CASES \
  --attn-kernels cutlass_attn_fwd,cutlass_attn_fwd@TILEC_ATTN_WS=producer,cutlass_attn_fwd@TILEC_ATTN_WS=pingpong \
  --json $L/bench_attn.json > $L/bench_attn.log 2>&1
echo "== 3. bench [$(el) s]"
left=$(( 420 - $(el) )); [ $left -gt 80 ] && left=80  # branch rows3: the gather layout and the Philox asm, on and off
[ $left -gt 30 ] && FUSED_ONLY=embedding_rmsnorm,moe_permute,dropout_residual timeout $left python3 bench/bench.py \
  --lib $B/libtilec.so --quick --only fused --json $L/bench_rows3.json > $L/bench_rows3.log 2>&1
left=$(( 500 - $(el) ))
[ $left -gt 40 ] && timeout $left python3 bench/bench.py --lib $B/libtilec.so --quick \
  --only linear,w4a16,attnrope,rows,gemm --json $L/bench.json > $L/bench.log 2>&1
unset TILEC_CACHE
echo "== 4. the Llama layer [$(el) s]"
left=$(( 565 - $(el) ))
[ $left -gt 30 ] && timeout $left python3 examples/llama/layer.py --batch 1 --seq 2048 --fp8 2>&1 | grep -v -i warn | tail -14 > $L/layer.log
left=$(( 590 - $(el) ))
[ $left -gt 20 ] && timeout $left python3 examples/llama/layer.py --mode decode --batch 64 --seq 4096 2>&1 | grep -v -i warn | tail -9 >> $L/layer.log
echo "[all: $(el) s]"
grep -E 'FAILED' $L/bench_attn.log $L/bench.log 2>/dev/null | head
sed -n '/## tilec vs/,$p' $L/bench_attn.log 2>/dev/null | grep -E 'cutlass|cuDNN' | head -40
sed -n '/## tilec vs/,$p' $L/bench.log 2>/dev/null
sed -n '/## fused kernels/,$p' $L/bench_rows3.log 2>/dev/null
cat $L/layer.log 2>/dev/null; cat $L/table.txt
