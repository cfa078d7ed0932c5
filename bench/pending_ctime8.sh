#!/bin/sh
# bench/pending_ctime8.sh: the call ctime8 owes (nineteenth session, no device): four compile-time
# mechanisms that leave every kernel's PTX byte-identical (docs/codegen.md "Round 13"):
#   TILEC_DEAD_BLOCKS=0    a TMA form's no-TMA blocks kept for the verifier and SimplifyCFG
#   TILEC_FUNC_SPEC=1      IPSCCP with its function specializer again (the default: ipsccp<no-func-spec>)
#   TILEC_DISCARD_NAMES=0  LLVM value names kept where no LLVM text is wanted
#   TILEC_SWIZZLE_MEMO=0   smem_swizzle's chooser run for every dot operand, not once a geometry
# The PTX is byte-identical (measured on the development machine: tools/ptxsnap.sh's 140 files and
# the JIT's TMA forms), so the device part only checks the JIT's load paths once (on, then all off),
# then times the compile to PTX on the GPU host's CPU, all on / all off interleaved.  About 100 s warm
# (22 s of it the checks and timings on the 2-core development machine, without a GPU).
#   here:   tools/carry.sh build
#   device: run command="sh bench/pending_ctime8.sh .carry" carry=[".carry"] timeout_s=300
. bench/pending_env.sh
OFF="TILEC_FUNC_SPEC=1 TILEC_DISCARD_NAMES=0 TILEC_SWIZZLE_MEMO=0 TILEC_DEAD_BLOCKS=0"
grep -m1 "model name" /proc/cpuinfo; nproc; uptime
echo "== 1. tilec run against the interpreter (TILEC_CACHE=0: compiled in this process), all on, then all off"
for v in on off; do
  E=""; [ $v = off ] && E=$OFF
  env $E TILEC_CACHE=0 timeout -k 10 60 "$B/tilec" run examples/gemm_bias_gelu.tile --kernel=cutlass_linear_bias_gelu \
    --size M=300 --size N=300 --size K=200 --device > "$L/run_${v}_gelu.log" 2>&1
  echo "[$v] gemm_bias_gelu M=300 exit $? $(tail -1 "$L/run_${v}_gelu.log")"
  env $E TILEC_CACHE=0 timeout -k 10 60 "$B/tilec" run examples/attn.tile --kernel=cutlass_attn_fwd --size Z=1 --size H=3 \
    --size S=200 --scalar scale=0.088 --device > "$L/run_${v}_attn.log" 2>&1
  echo "[$v] cutlass_attn_fwd S=200 exit $? $(tail -1 "$L/run_${v}_attn.log")"
  env $E TILEC_CACHE=0 timeout -k 10 90 python3 tests/gpu/test_attn_bwd.py --lib "$B/libtilec.so" > "$L/bwd_$v.log" 2>&1
  echo "[$v] test_attn_bwd exit $? $(tail -1 "$L/bwd_$v.log")"
done
echo "== 2. in-process compile to PTX (ctime_inproc.py: the JIT's path), on / all off / dead blocks kept [$(el) s]"
timeout -k 10 100 python3 bench/ctime_inproc.py --lib "$B/libtilec.so" --runs 15 --variant "$OFF" --variant TILEC_DEAD_BLOCKS=0 \
  examples/attn.tile:cutlass_attn_fwd examples/attn_bwd.tile:attn_bwd_dq \
  examples/gemm_bias_gelu.tile:cutlass_linear_bias_gelu examples/gemm.tile:cutlass_gemm 2>&1 | tee "$L/inproc.md"
echo "== 3. whole tilec processes (ctime.py, TMA forms), all on / all off interleaved [$(el) s]"
timeout -k 10 60 python3 bench/ctime.py --runs 21 --flag=--tma-fallback=form --variant "$OFF" --examples examples \
  --compiles attn.tile:cutlass_attn_fwd,attn_bwd.tile:attn_bwd_dq,gemm_bias_gelu.tile:cutlass_linear_bias_gelu \
  "$B/tilec" 2>&1 | tee "$L/ctime.md"
echo "[all: $(el) s]"
