#!/bin/sh
# bench/pending_attn_ws.sh: the GPU call that the attention turns' fix (branch fa3b: the value dot's
# bar.sync kept after the softmax, docs/pipelines.md "Warp-specialized attention") waits for.  One
# call, about 4 minutes with a cold start; the table is last.
#
#   here:   tools/carry.sh                  (fills .carry/ from build/: stripped lib, CLI, GPU tests)
#   device: run command="sh bench/pending_attn_ws.sh .carry" carry=[".carry"] timeout_s=420
#
#  1. correctness, in parallel: gpu_test_examples on examples/attn.tile alone (cutlass_attn_fwd
#     D 64/128 x CAUSAL 0/1 under default / producer / pingpong at ragged S against the
#     interpreter), racecheck of the pingpong form (D 64/128, causal and not, S 300);
#  2. bench.py --only attn --quick: the twelve cases, the three forms beside FA2, cuDNN, Triton.
# The prediction written before the run is in bench/RESULTS.md ("waiting for a GPU", branch fa3b).
set -u
B=$(cd "${1:-.carry}" && pwd)/b
[ -d "$B" ] || B=$(cd "${1:-build}" && pwd)
R=$(pwd); L=${OUT:-/tmp}; T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
export LD_LIBRARY_PATH=$B TILEC_LIBRARY=$B/libtilec.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
mkdir -p "$L/attn"; cp "$R/examples/attn.tile" "$L/attn/"
echo "== 1. correctness"
(TILEC_CACHE_DIR=/tmp/c-pws-ex timeout 150 "$B/tests/gpu_test_examples" "$L/attn" > "$L/ex_attn.log" 2>&1
 echo "exit $?" >> "$L/ex_attn.log") &
(for d in 128 64; do for c in 0 1; do echo "== pingpong D$d CAUSAL=$c"
   TILEC_ATTN_WS=pingpong TILEC_CACHE_DIR=/tmp/c-pws-r$d$c timeout 60 compute-sanitizer --tool racecheck \
     "$B/tilec" run "$R/examples/attn.tile" --kernel cutlass_attn_fwd -D D=$d -D CAUSAL=$c \
     --size Z=1 --size H=2 --size S=300 --device 2>&1 | tail -3
 done; done > "$L/race_ws.log" 2>&1) &
wait
echo "phase 1: $(el) s"
tail -3 "$L/ex_attn.log"; echo "PASS lines: $(grep -c '^PASS' "$L/ex_attn.log")"; grep '^FAIL' "$L/ex_attn.log" | head -5
cat "$L/race_ws.log"
echo "== 2. bench"
CASES=64:1024:0,64:1024:1,64:4096:0,64:4096:1,64:16384:0,64:16384:1,128:1024:0,128:1024:1,128:4096:0,128:4096:1,128:16384:0,128:16384:1
TILEC_CACHE_DIR=/tmp/c-pws-bench timeout 220 python3 bench/bench.py --lib "$B/libtilec.so.0.1" --only attn --quick \
  --attn-cases $CASES \
  --attn-kernels cutlass_attn_fwd,cutlass_attn_fwd@TILEC_ATTN_WS=producer,cutlass_attn_fwd@TILEC_ATTN_WS=pingpong \
  --json "$L/bench.json" > "$L/bench.log" 2>&1
echo "bench exit $? at $(el) s"
grep '^|' "$L/bench.log" | tail -120
