#!/bin/sh
# bench/pending_ctime.sh: compile time on the GPU machine's CPU (issue 13 item 3; docs/codegen.md
# "Round 8"); no GPU needed.  Each argument is a carry folder whose b/ holds a `tilec` and its
# `libtilec.so.0.1` (tools/carry.sh); with two (say main's and a branch's) the rows alternate, in one
# process, same host, same load.  Then the same compiles with TILEC_EPI_PACK=1 (the epilogue's
# staging words by one cvt: no bf16 -> i16 bitcasts, whose ProxyReg copies the NVPTX back end
# erases in a pass quadratic in the kernel's size).  About 1 minute for one build.
#
#   here:   tools/carry.sh
#   device: run command="sh bench/pending_ctime.sh .carry" carry=[".carry"] timeout_s=300
#   (before branch ctime3 is merged: run command="TILEC_EXAMPLES=.carry-ctime3/examples sh
#   .carry-ctime3/pending_ctime.sh .carry-ctime3" carry=[".carry-ctime3"], the copies made there)
set -u
T=""
for c in "$@"; do b=$(cd "$c" && pwd)/b; [ -x "$b/tilec" ] || b=$(cd "$c" && pwd); T="$T $b/tilec"; done
[ -n "$T" ] || { echo "usage: sh bench/pending_ctime.sh CARRY [CARRY2]"; exit 2; }
D=$(dirname "$0"); L=${OUT:-/tmp}
grep -m1 "model name" /proc/cpuinfo; nproc; uptime
echo "== defaults"
python3 "$D/ctime.py" --runs ${CTIME_RUNS:-9} --examples "${TILEC_EXAMPLES:-examples}" $T | tee "$L/ctime.md"
[ "${CTIME_PACK:-1}" = 0 ] && exit 0  # the packed epilogue is cutlass_gemm's default since the ninth session
echo "== TILEC_EPI_PACK=1"
python3 "$D/ctime.py" --runs ${CTIME_RUNS:-9} --env TILEC_EPI_PACK=1 --examples "${TILEC_EXAMPLES:-examples}" $T | tee "$L/ctime_epi_pack.md"
