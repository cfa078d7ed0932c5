#!/bin/sh
# (Twenty-fourth session: its fp8_probe printed nothing in 110 and 280 s on an H100 -- "bs inline" did not finish;
#  bench/pending_bsinline.sh asks why.  The wide form's inline cost was measured by gpu_test_aot instead: 1.715x.)
# bench/pending_inline24.sh: what the CLI's offline form (`tma-fallback=inline`: the no-TMA copy and the
# register epilogue in the same kernel, what `tilec F.tile -o F.ptx` and the AOT launchers hold) costs
# when timed, for the block-scaled fp8 GEMM at 128x256 (examples/gemm_fp8_blockscale.tile),
# whose inline consumer ptxas 13.0 spills 212 B (10 accumulator registers in the main loop; its JIT form,
# what the launcher runs, 0 B), beside the 128x128 example and gemm_fp8's per-tensor TN (inline: 0 B).
# The rule (written before the run, bench/RESULTS.md "twenty-fourth session"): the wide spelling becomes
# examples/gemm_fp8_blockscale.tile if "bs wide inline" >= 1.08x "bs inline" at both sizes and the
# inline / form ratio of the wide kernel is within 2 % of the per-tensor tile's.  ~60-90 s warm.
#   here:   tools/carry.sh build
#   device: run command="sh bench/pending_inline24.sh .carry" carry=[".carry"] timeout_s=150
#   (or with others: OWED='inline24:130 ...' sh bench/owed.sh .carry)
. bench/pending_env.sh
echo "== fp8_probe: each form and its inline form, cuBLAS fp8 accurate in the same rounds (3 rotated rounds)"
timeout -k 10 110 python3 bench/fp8_probe.py --lib "$B/libtilec.so" --sizes 4096,8192 \
  --forms "bs,bs inline,bs wide,bs wide inline,tn,tn inline" > "$L/probe.log" 2>&1
echo "fp8_probe rc $? [$(el) s]"
grep -E "\^3 |FAILED" "$L/probe.log" | sed 's/^/  /'
echo "[all: $(el) s]"
