#!/bin/sh
# bench/pending_bsinline3.sh (twenty-sixth session; <= 150 s): which mechanism the JIT-loaded inline form of the
# 128x128 block-scaled spelling (bench/variants/gemm_fp8_blockscale_128.tile, `tma-fallback=inline`) fails with at
# 2048^3 (illegal instruction / hang; 512-1024 run; the TMA form and the wide spelling's inline form run): the same
# launch with one switch at a time, each changing the inline PTX (checked on the CPU): the epilogue from registers
# (TILEC_EPI=regs: no TMA store), no warp specialization (TILEC_WS=off), the scales not loaded a step ahead
# (TILEC_LOAD_AHEAD=0), the driver's assembler instead of ptxas (TILEC_ASSEMBLER=driver).
#   device: run command="sh bench/pending_bsinline3.sh .carry" carry=[".carry"] timeout_s=200
. bench/pending_env.sh
for e in X=0 TILEC_EPI=regs TILEC_WS=off TILEC_LOAD_AHEAD=0 TILEC_ASSEMBLER=driver; do
  env $e TILEC_CACHE=0 timeout -k 3 22 python3 bench/inline_probe.py --lib $B/libtilec.so --form bs-inline --size 2048 \
    > $L/bsi3_$e.log 2>&1
  echo "$e rc $?: $(tail -1 $L/bsi3_$e.log | cut -c1-140) [$(el) s]"
done
