#!/bin/bash
# all.sh OLD_TILEC NEW_TILEC: every address-trace run of the merge of round 3
# onto the wgmma / fp8 / attention main (docs/codegen.md); one line per kernel
# and run, exit 1 on any DIFF.
old=$1; new=$2
here=$(cd "$(dirname "$0")" && pwd)
status=0
run() { bash "$here/run.sh" "$old" "$new" "$@" || status=1; }
for c in attn attn_slow attn_s70 attn_s256; do
  for o in "" "-D CAUSAL=1"; do run attn $c $o; done
done
for o in "-D D=128" "-D D=128 -D CAUSAL=1"; do run attn attn_d128 $o; done
for c in gemm gemm_rag gemm_k104; do
  for o in "" "-D BK=32" "--arch=sm_80" "--arch=sm_80 -D BK=32" "--arch=sm_89 -D BK=32" "--arch=sm_80 --warps=4" \
           "--arch=sm_80 --warps=4 -D BK=32" "--warps=4"; do
    run gemm $c $o
  done
done
for c in gemm_fp8 gemm_fp8_rag gemm_fp8_kmaj; do
  for o in "" "--arch=sm_89"; do run gemm_fp8 $c $o; done
done
exit $status
