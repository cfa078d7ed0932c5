#!/bin/sh
# bench/pending_ctime6.sh: the call ctime6 owes (fifteenth session, no device): the TMA epilogue's
# staging words packed by one inline asm (TILEC_EPI_HALVES=0: the IR pack).  The machine code is
# identical (ptxas 13.0 + nvdisasm on every file whose PTX changed), so this call checks the
# results once on the device and times the compile to PTX on the GPU host's CPU, on / off
# interleaved.  About 60 s warm.
#   here:   tools/carry.sh build
#   device: run command="sh bench/pending_ctime6.sh .carry" carry=[".carry"] timeout_s=240
. bench/pending_env.sh
grep -m1 "model name" /proc/cpuinfo; nproc; uptime
echo "== 1. tilec run against the interpreter (TMA epilogue: ragged N and M), default and TILEC_EPI_HALVES=0"
for v in 1 0; do for m in 300 1000; do
  TILEC_EPI_HALVES=$v TILEC_CACHE=0 timeout -k 10 60 "$B/tilec" run examples/gemm_bias_gelu.tile --kernel=cutlass_linear_bias_gelu \
    --size M=$m --size N=520 --size K=200 --device > "$L/run_${v}_$m.log" 2>&1
  echo "TILEC_EPI_HALVES=$v M=$m exit $? $(tail -1 "$L/run_${v}_$m.log")"; done; done
echo "== 2. compile time (ctime.py, TMA forms: what the JIT compiles), TILEC_EPI_HALVES=0 interleaved [$(( $(date +%s) - T0 )) s]"
timeout -k 10 80 python3 bench/ctime.py --runs 9 --flag=--tma-fallback=form --variant TILEC_EPI_HALVES=0 --examples examples \
  --compiles gemm_bias_gelu.tile:cutlass_linear_bias_gelu,gemm_fp8.tile:cutlass_gemm_fp8_tn,gemm.tile:cutlass_gemm \
  "$B/tilec" 2>&1 | tee "$L/ctime.md"
echo "[all: $(( $(date +%s) - T0 )) s]"
