#!/bin/sh
# bench/pending_ptx2.sh (branch ptx2, twenty-fourth session; not run: no device this session): the CLI's
# two-entry PTX (docs/cli.md "Two entries"): `tilec F.tile -o F.ptx` / `.cubin` now write, for a kernel fed
# by TMA on sm_90a, its TMA form as the entry KERNEL (the JIT's kernel, byte for byte) and its no-TMA form as
# a second entry KERNEL__notma with the same parameters; tilec_kernel_load_ptx launches the second entry for
# tensors that fail the map test.  Before, the CLI wrote the inline form (both paths in one entry), 1.715x
# slower than the TMA form on the wide block-scaled fp8 GEMM (212 B of spills, H100, docs/decisions.md).
# 1. correctness: gpu_test_cli_ptx -- every example's CLI file, each kernel loaded through the JIT and from
#    the file (tilec_kernel_load_ptx), on the same random inputs at ragged sizes that fail the map test (the
#    __notma entry runs: the program log's note is checked) and a round of 16-byte multiples that pass it (the
#    TMA entry), outputs poisoned; bit-identical to the JIT and within the dtype's tolerance of the interpreter.
# 2. the time of a launch at 4096^3 of examples/gemm_fp8_blockscale.tile (GPU_CLI_PTX_TIMING=1, the
#    same binary, one process, rounds rotated, medians): the JIT (reference), the CLI's two-entry file
#    (expected 1.00x: its TMA entry is the JIT's kernel) and the CLI's --tma-fallback=inline file (what the
#    CLI wrote before: expected ~1.7x on the H100, as gpu_test_aot's AOT inline image measured).
#   here:   sh tools/carry.sh build        device: run command="sh bench/pending_ptx2.sh .carry" carry=[".carry"] timeout_s=200
#   (or with others: OWED='ptx2:180 ...' sh bench/owed.sh .carry)
. bench/pending_env.sh
export TILEC_EXAMPLES=$(pwd)/examples
echo "== 1. correctness: gpu_test_cli_ptx, both entries against the JIT and the interpreter [$(el) s]"
TILEC_CACHE_DIR=/tmp/ptx2c GPU_CLI_PTX_TIMING=1 timeout -k 10 170 $B/tests/gpu_test_cli_ptx > $L/cli_ptx.log 2>&1
echo "gpu_test_cli_ptx rc $? [$(el) s]: $(tail -1 $L/cli_ptx.log)"
grep -E "^FAIL" $L/cli_ptx.log | head -8 | cut -c1-220
echo "no-TMA entries run: $(grep -c 'its no-TMA entry ran the unfit rounds' $L/cli_ptx.log), fit rounds passed: $(grep -c '(fit round)' $L/cli_ptx.log)"
echo "== table: ms a launch at 4096^3, wide block-scaled fp8 (JIT = reference; CLI two entries expected 1.00x;"
echo "   CLI inline = the file of before)"
grep -E "timing" $L/cli_ptx.log | sed 's/  */ /g' | cut -c1-220
echo "[$(el) s]"
