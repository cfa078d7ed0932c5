#!/bin/sh
# bench/ncu_banks.sh: confirm smem_swizzle's bank-conflict analysis with ncu's counters.
#
#   usage (repo root, GPU machine): bench/ncu_banks.sh BUILD_DIR
#
# Launches each dot kernel (gemm bf16, gemm fp8 TN, attention D128) once with the
# smem_swizzle pass and once without (bench.py --only banks; entries swz_on_* and
# swz_off_*), under ncu, and prints the shared-memory bank-conflict and wavefront
# counters per kernel.  The static analyzer's numbers are those of
# `tilec F.tile --explain` (smem_swizzle lines).
set -u
BUILD=$(cd "${1:-build}" && pwd) || exit 2
export LD_LIBRARY_PATH="$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
OUTDIR=${OUT:-/tmp}
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null) || { echo "ncu not found"; exit 77; }
# The counter names differ between ncu versions: take every shared-memory bank-conflict and
# wavefront counter this ncu knows.
M=$("$NCU" --query-metrics 2>/dev/null | awk '{print $1}' |
    grep -E '^l1tex__data_(bank_conflicts_pipe_lsu_mem_shared|pipe_lsu_wavefronts_mem_shared)(_op_[a-z]+)?$' |
    sed 's/$/.sum/' | paste -sd, -)
echo "== ncu metrics: $M"
PYTHONUNBUFFERED=1 "$NCU" --metrics "$M" --kernel-name regex:'^swz_' --csv --page raw \
  python3 bench/bench.py --lib "$BUILD/libtilec.so.0.1" --only banks --json "$OUTDIR/banks.json" \
  >"$OUTDIR/ncu_banks.csv" 2>"$OUTDIR/ncu_banks.err"
echo "ncu exit $?"
grep '^banks:' "$OUTDIR/ncu_banks.csv"
python3 bench/ncu_csv.py banks "$OUTDIR/ncu_banks.csv"
