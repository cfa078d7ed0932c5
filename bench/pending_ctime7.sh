#!/bin/sh
# bench/pending_ctime7.sh: the call ctime7 owes (sixteenth session, no device): two compile-time
# mechanisms that leave every kernel's PTX byte-identical (docs/codegen.md "Round 12"; the branch's
# two C++ ones were not merged):
#   TILEC_KERNEL_PASSES=0  a program with option "kernel" runs the tile passes on every kernel
#   TILEC_LAZY_AST=0       the AST text printed by every compile instead of on demand
# The PTX is identical, so the device part checks the load paths that changed (the forms, whose
# programs compile one kernel; attention and its backward through the JIT), then times the compile
# to PTX on the GPU host's CPU, all on / all off (and some alone) interleaved.  About 100 s warm.
#   here:   tools/carry.sh build
#   device: run command="sh bench/pending_ctime7.sh .carry" carry=[".carry"] timeout_s=300
. bench/pending_env.sh
OFF="TILEC_KERNEL_PASSES=0 TILEC_LAZY_AST=0"
grep -m1 "model name" /proc/cpuinfo; nproc; uptime
echo "== 1. tilec run against the interpreter (TILEC_CACHE=0: compiled in this process), all on, then all off"
for v in on off; do
  E=""; [ $v = off ] && E=$OFF
  # the fused-epilogue GEMM at M 5 / 100 (its small-M forms: programs of one kernel) and 300 (the kernel)
  for m in 5 100 300; do
    env $E TILEC_CACHE=0 timeout -k 10 60 "$B/tilec" run examples/gemm_bias_gelu.tile --kernel=cutlass_linear_bias_gelu \
      --size M=$m --size N=300 --size K=200 --device > "$L/run_${v}_gelu_$m.log" 2>&1
    echo "[$v] gemm_bias_gelu M=$m exit $? $(tail -1 "$L/run_${v}_gelu_$m.log")"
  done
  env $E TILEC_CACHE=0 timeout -k 10 60 "$B/tilec" run examples/attn.tile --kernel=cutlass_attn_fwd --size Z=1 --size H=3 \
    --size S=200 --scalar scale=0.088 --device > "$L/run_${v}_attn.log" 2>&1
  echo "[$v] cutlass_attn_fwd S=200 exit $? $(tail -1 "$L/run_${v}_attn.log")"
  # attention's backward against torch (its four kernels from one program)
  env $E TILEC_CACHE=0 timeout -k 10 90 python3 tests/gpu/test_attn_bwd.py --lib "$B/libtilec.so" > "$L/bwd_$v.log" 2>&1
  echo "[$v] test_attn_bwd exit $? $(tail -1 "$L/bwd_$v.log")"
done
echo "== 2. in-process compile to PTX (ctime_inproc.py: the JIT's path), on / each off / all off [$(( $(date +%s) - T0 )) s]"
timeout -k 10 80 python3 bench/ctime_inproc.py --lib "$B/libtilec.so" --runs 15 --variant "$OFF" --variant TILEC_KERNEL_PASSES=0 \
  examples/attn.tile:cutlass_attn_fwd examples/attn_bwd.tile:attn_bwd_dq \
  examples/gemm_bias_gelu.tile:cutlass_linear_bias_gelu 2>&1 | tee "$L/inproc.md"
echo "== 3. whole tilec processes (ctime.py, TMA forms), all on / all off interleaved [$(( $(date +%s) - T0 )) s]"
timeout -k 10 90 python3 bench/ctime.py --runs 15 --flag=--tma-fallback=form --variant "$OFF" --examples examples \
  --compiles attn.tile:cutlass_attn_fwd,attn_bwd.tile:attn_bwd_dq,gemm_bias_gelu.tile:cutlass_linear_bias_gelu,layernorm.tile:layernorm \
  "$B/tilec" 2>&1 | tee "$L/ctime.md"
echo "[all: $(( $(date +%s) - T0 )) s]"
