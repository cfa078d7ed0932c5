#!/bin/sh
# bench/ncu_rows.sh BUILD_DIR: where the row kernels below the copy bandwidth spend their time
# (bench/ncu_rows.py launches them), from ncu: duration, DRAM throughput, issue-slot use, FMA / ALU /
# MUFU (xu) / LSU pipes, registers, warps active, the top stall reasons (bench/ncu_csv.py attn).
. bench/ncu_env.sh
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,\
smsp__issue_active.avg.pct_of_peak_sustained_active,$NCU_PIPES,$NCU_STALLS
# the second launch of each form (the first may compile the driver's JIT cache)
PYTHONUNBUFFERED=1 "$NCU" --metrics "$M" --kernel-name regex:'cross_entropy|softmax|layernorm|embedding_rmsnorm|dropout_residual' \
  --csv --page raw python3 bench/ncu_rows.py "$BUILD/libtilec.so" >"$OUTDIR/ncu_rows.csv" 2>"$OUTDIR/ncu_rows.err"
echo "ncu exit $?"
grep '^form:' "$OUTDIR/ncu_rows.csv"
python3 bench/ncu_csv.py rows "$OUTDIR/ncu_rows.csv"
