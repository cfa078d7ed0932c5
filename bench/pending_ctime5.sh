#!/bin/sh
# bench/pending_ctime5.sh: the call ctime5 owes (fifteenth session): late forms on the device, compile time
# with grouped wgmma slices (and the commit / wait folded into their asm, not yet timed on the GPU host)
# on / off (TILEC_WGMMA_MERGE=0), cold loads (bench/coldload.py) with late forms on / off.  About 40 s.
#   here:   tools/carry.sh build
#   device: run command="sh bench/pending_ctime5.sh .carry" carry=[".carry"] timeout_s=300
. bench/pending_env.sh
grep -m1 "model name" /proc/cpuinfo; nproc; uptime
echo "== 1. tilec run, gemm_bias_gelu at M 5 / 100 / 300 (16-row form, 64x64 form, the kernel: late forms)"
for m in 5 100 300; do TILEC_CACHE=0 timeout 60 "$B/tilec" run examples/gemm_bias_gelu.tile --kernel=cutlass_linear_bias_gelu \
  --size M=$m --size N=300 --size K=200 --device > "$L/run_$m.log" 2>&1; echo "M=$m exit $?"; tail -3 "$L/run_$m.log"; done
echo "== 2. compile time (ctime.py, TMA forms: what the JIT compiles), TILEC_WGMMA_MERGE=0 interleaved [$(( $(date +%s) - T0 )) s]"
python3 bench/ctime.py --runs 7 --flag=--tma-fallback=form --variant TILEC_WGMMA_MERGE=0 --examples examples \
  --compiles gemm_bias_gelu.tile:cutlass_linear_bias_gelu,gemm.tile:cutlass_gemm,attn.tile:cutlass_attn_fwd,attn_bwd.tile:attn_bwd_dq,layernorm.tile:layernorm \
  "$B/tilec" 2>&1 | tee "$L/ctime.md"
echo "== 3. cold loads (coldload.py): GEMMs auto / auto-wait, the others auto [$(( $(date +%s) - T0 )) s]"
timeout 150 python3 bench/coldload.py --lib "$B/libtilec.so" --runs 3 --modes auto,auto-wait \
  examples/gemm_bias_gelu.tile:cutlass_linear_bias_gelu examples/gemm.tile:cutlass_gemm > "$L/coldload_gemm.log" 2>&1
timeout 100 python3 bench/coldload.py --lib "$B/libtilec.so" --runs 3 --modes auto \
  examples/attn.tile:cutlass_attn_fwd examples/attn_bwd.tile:attn_bwd_dq examples/layernorm.tile:layernorm > "$L/coldload_other.log" 2>&1
grep -vE "^\|" "$L/coldload_gemm.log" "$L/coldload_other.log" | cut -c1-200
grep -hE "^\|" "$L/coldload_gemm.log" "$L/coldload_other.log"
echo "[all: $(( $(date +%s) - T0 )) s]"
