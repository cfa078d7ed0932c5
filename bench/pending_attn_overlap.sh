#!/bin/sh
# bench/pending_attn_overlap.sh: the GPU call that attention's late value dot, form 4
# (TILEC_ATTN_OVERLAP=4: a CTA barrier after the score dots, so both warpgroups' scores are queued
# before any late O += P V; emit_overlap.c, docs/pipelines.md "Attention: the value dot one step
# late") waits for.  One call, about 2 minutes warm; the table is last.
#
#   here:   tools/carry.sh                  (fills .carry/ from build/)
#   device: run command="sh bench/pending_attn_overlap.sh .carry" carry=[".carry"] timeout_s=300
#
#  1. correctness, in parallel: gpu_test_examples on examples/attn.tile alone (cutlass_attn_fwd
#     D 64/128 x CAUSAL 0/1 under default / producer / pingpong / overlap 3 / overlap 4 at ragged S
#     against the interpreter), on examples/llama/attn_gqa.tile under form 4 (the other kernel the
#     switch changes), racecheck of form 4 (D 64/128, causal and not, S 300);
#  2. bench.py --only attn --quick: the twelve cases, default and forms 3 and 4 beside FA2, cuDNN
#     and Triton.  The prediction is in bench/RESULTS.md (eighth session, branch attn4).
set -u
B=$(cd "${1:-.carry}" && pwd)/b
[ -d "$B" ] || B=$(cd "${1:-build}" && pwd)
R=$(pwd); L=${OUT:-/tmp}; T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
export LD_LIBRARY_PATH=$B TILEC_LIBRARY=$B/libtilec.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
mkdir -p "$L/attn"; cp "$R/examples/attn.tile" "$L/attn/"
echo "== 1. correctness"
(TILEC_CACHE_DIR=/tmp/c-pov-ex timeout 150 "$B/tests/gpu_test_examples" "$L/attn" > "$L/ex_attn.log" 2>&1
 echo "exit $?" >> "$L/ex_attn.log") &
# the other kernel the switch changes (--explain): the grouped-query attention, all its rounds under form 4
mkdir -p "$L/gqa"; cp "$R/examples/llama/attn_gqa.tile" "$L/gqa/"
(TILEC_ATTN_OVERLAP=4 TILEC_CACHE_DIR=/tmp/c-pov-gqa timeout 150 "$B/tests/gpu_test_examples" "$L/gqa" > "$L/ex_gqa.log" 2>&1
 echo "exit $?" >> "$L/ex_gqa.log") &
(for d in 128 64; do for c in 0 1; do echo "== overlap 4 D$d CAUSAL=$c"
   TILEC_ATTN_OVERLAP=4 TILEC_CACHE_DIR=/tmp/c-pov-r$d$c timeout 60 compute-sanitizer --tool racecheck \
     "$B/tilec" run "$R/examples/attn.tile" --kernel cutlass_attn_fwd -D D=$d -D CAUSAL=$c \
     --size Z=1 --size H=2 --size S=300 --device 2>&1 | tail -2
 done; done > "$L/race.log" 2>&1) &
wait
echo "phase 1: $(el) s"
tail -2 "$L/ex_attn.log"; echo "PASS lines: $(grep -c '^PASS' "$L/ex_attn.log")"; grep '^FAIL' "$L/ex_attn.log" | head -5
tail -2 "$L/ex_gqa.log"; grep '^FAIL' "$L/ex_gqa.log" | head -5
cat "$L/race.log"
echo "== 2. bench"
CASES=64:1024:0,64:1024:1,64:4096:0,64:4096:1,64:16384:0,64:16384:1,128:1024:0,128:1024:1,128:4096:0,128:4096:1,128:16384:0,128:16384:1
TILEC_CACHE_DIR=/tmp/c-pov-bench timeout 150 python3 bench/bench.py --lib "$B/libtilec.so.0.1" --only attn --quick \
  --attn-cases $CASES \
  --attn-kernels cutlass_attn_fwd,cutlass_attn_fwd@TILEC_ATTN_OVERLAP=3,cutlass_attn_fwd@TILEC_ATTN_OVERLAP=4 \
  --json "$L/bench.json" > "$L/bench.log" 2>&1
echo "bench exit $? at $(el) s"
grep '^|' "$L/bench.log" | tail -120
