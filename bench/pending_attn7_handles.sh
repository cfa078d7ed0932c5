#!/bin/sh
# bench/pending_attn7_handles.sh (branch attn7, not run: no device time left): is the 3-6 % gap between two
# handles of the same PTX (bench/RESULTS.md fifteenth session, attn7 call 2) a load-order effect?  The
# default D128 kernel (its FlashAttention-3 form at S >= 2048) and the same with TILEC_ATTN_RED_CHAINS=all
# (a different cache key, the same PTX), timed A B A B, then with the load order reversed (B A B A), under
# the default assembler and TILEC_ASSEMBLER=ptxas.  If the second-loaded handle is the slow one in both
# orders, it is the load; if C is slow in both, something in its compile.  About 60 s warm (4 runs, 35 s each at most).
#   here:   tools/carry.sh        device: run command="sh bench/pending_attn7_handles.sh .carry" carry=[".carry"]
. bench/pending_env.sh
A=cutlass_attn_fwd; C=cutlass_attn_fwd@TILEC_ATTN_RED_CHAINS=all
for asm in "" ptxas; do for order in "$A,$C,$A,$C" "$C,$A,$C,$A"; do
  echo "== assembler '${asm:-auto}', order $order"
  TILEC_ASSEMBLER=$asm BENCH_ATTN_NO_TRITON=1 TILEC_CACHE_DIR=/tmp/c7h.$$ timeout -k 10 35 python3 bench/bench.py --lib $B/libtilec.so.0.1 \
    --only attn --attn-cases 128:4096:0,128:16384:1 --attn-kernels "$order" > $L/h.log 2>&1
  grep -E "\| cuDNN \|" $L/h.log | grep -v "^|" | awk -F' [|] ' '{printf "%-44s %-20s %7s %7s\n", $1, $2, $3, $7}'
  rm -rf /tmp/c7h.$$
done; done
echo "[all: $(el) s]"
