#!/bin/sh
# bench/ncu_attn.sh: where attention's time goes, tilec beside FA2 and cuDNN, from ncu.
#
#   usage (repo root, GPU machine): [ATTN_KERNELS=K1,K2] [ATTN_ROOT=DIR] bench/ncu_attn.sh BUILD_DIR D:S:CAUSAL[:WARPS[:BN]],...
#
# Launches each case once (bench.py --only attn --once) under ncu and prints, per
# kernel: duration, warp instructions executed, issue-slot use, tensor / FMA / MUFU
# pipe use, registers, occupancy, and the top warp stall reasons.  The question it
# answers: is the kernel issue-bound (instructions), tensor-bound or latency-bound.
. bench/ncu_env.sh
CASES=${2:-64:4096:1}
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,\
sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,$NCU_PIPES,$NCU_STALLS
PYTHONUNBUFFERED=1 "$NCU" --metrics "$M" --kernel-name regex:'attn_fwd|flash|cudnn|sdpa|fmha' --csv --page raw \
  python3 bench/bench.py --lib "$BUILD/libtilec.so.0.1" --only attn --once --attn-cases "$CASES" ${ATTN_KERNELS:+--attn-kernels "$ATTN_KERNELS"} ${ATTN_ROOT:+--root "$ATTN_ROOT"} \
  >"$OUTDIR/ncu_attn.csv" 2>"$OUTDIR/ncu_attn.err"
echo "ncu exit $?"
grep '^once:' "$OUTDIR/ncu_attn.csv"
python3 bench/ncu_csv.py attn "$OUTDIR/ncu_attn.csv"
