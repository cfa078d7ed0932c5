#!/bin/sh
# bench/pending_ctime.sh: compile time on the GPU machine's CPU (issue 13 item 3; docs/codegen.md
# "Round 8", "Round 9"), and the GPU check of the fourteenth session's TMA forms.  Each argument is a
# carry folder whose b/ holds a `tilec` and its `libtilec.so.0.1` (tools/carry.sh); with two (say
# main's and a branch's) the rows alternate, in one process, same host, same load.
#   1. bench/ctime.py: whole-process medians per compile, at the default (TMA forms) and with
#      TILEC_TMA_FORM=0 (the kernels with their cp.async fallback inline, as before);
#   2. bench/coldload.py: tilec_program_compile to PTX and the cold load, both settings;
#   3. (GPU, CTIME_GPU=0 skips it) gpu_test_alignment at the default (the TMA kernels on views a
#      tensor map cannot take: their no-TMA forms), then bench.py attention and GEMM rows with
#      the TMA form and the inline kernel in one process (the same machine code path: the ratio
#      should be 1.00 +- noise).
# About 4-5 minutes.
#
#   here:   tools/carry.sh
#   device: run command="sh bench/pending_ctime.sh .carry" carry=[".carry"] timeout_s=480
set -u
T=""
for c in "$@"; do b=$(cd "$c" && pwd)/b; [ -x "$b/tilec" ] || b=$(cd "$c" && pwd); T="$T $b/tilec"; done
[ -n "$T" ] || { echo "usage: sh bench/pending_ctime.sh CARRY [CARRY2]"; exit 2; }
D=$(dirname "$0"); L=${OUT:-/tmp}; EX=${TILEC_EXAMPLES:-examples}
B=$(dirname "$(echo $T | cut -d' ' -f1)")
grep -m1 "model name" /proc/cpuinfo; nproc; uptime
echo "== 1. compile time, TMA forms (what libtilec's JIT compiles: --tma-fallback=form)"
python3 "$D/ctime.py" --runs ${CTIME_RUNS:-9} --flag=--tma-fallback=form --examples "$EX" $T | tee "$L/ctime.md"
echo "== 1. compile time, the CLI's default (fallback inline: self-contained files)"
python3 "$D/ctime.py" --runs ${CTIME_RUNS:-9} --examples "$EX" $T | tee "$L/ctime_inline.md"
echo "== 2. cold loads (bench/coldload.py), default then TILEC_TMA_FORM=0"
timeout 200 python3 "$D/coldload.py" --lib "$B/libtilec.so" --runs 3 > "$L/coldload.log" 2>&1
TILEC_TMA_FORM=0 timeout 200 python3 "$D/coldload.py" --lib "$B/libtilec.so" --runs 3 > "$L/coldload_inline.log" 2>&1
grep -E "^\||FAIL" "$L/coldload.log"; echo "-- TILEC_TMA_FORM=0"; grep -E "^\||FAIL" "$L/coldload_inline.log"
[ "${CTIME_GPU:-1}" = 0 ] && exit 0
echo "== 3. GPU: gpu_test_alignment (default), then attention and GEMM rows, TMA form vs inline"
TILEC_EXAMPLES=$PWD/$EX timeout 200 "$B/tests/gpu_test_alignment" "$PWD/$EX" > "$L/alignment.log" 2>&1; echo "gpu_test_alignment exit $?"
grep -E "FAIL|passed" "$L/alignment.log" | tail -5
BENCH_ATTN_NO_TRITON=1 timeout 150 python3 "$D/bench.py" --lib "$B/libtilec.so" --only attn --quick \
  --attn-kernels cutlass_attn_fwd,cutlass_attn_fwd@TILEC_TMA_FORM=0 > "$L/bench_attn.log" 2>&1; echo "bench attn exit $?"
timeout 150 python3 "$D/bench.py" --lib "$B/libtilec.so" --only gemm --quick --gemm-variants TILEC_TMA_FORM=0 \
  > "$L/bench_gemm.log" 2>&1; echo "bench gemm exit $?"
grep -hE " \| |FAILED" "$L/bench_attn.log" "$L/bench_gemm.log" | cut -c1-170
