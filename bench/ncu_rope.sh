#!/bin/sh
# bench/ncu_rope.sh: where RoPE-fused attention's time goes (examples/attn_rope.tile's cutlass_attn_rope_fwd) beside
# the plain forward on pre-rotated q, k (attn.tile's cutlass_attn_fwd), from ncu: one launch of each (bench/rope_ab.py's
# correctness launches, --rounds 1): duration, warp instructions, issue-slot use, tensor / FMA / ALU / XU / LSU pipes,
# L2 bytes and hit rate, registers, and the warp stall reasons (bench/ncu_csv.py attn).  The question: is the fused
# kernel latency-bound (barrier / long-scoreboard stalls: the rotation on the step's critical path), issue-bound, or
# L2-bound (the f32 table rows are twice k's bytes a step).
#   usage (repo root, GPU machine): sh bench/ncu_rope.sh BUILD_DIR [D:S:CAUSAL]
. bench/ncu_env.sh
CASE=${2:-128:4096:0}
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,\
sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum.per_second,lts__t_sector_hit_rate.pct,\
dram__bytes.sum.per_second,$NCU_PIPES,$NCU_STALLS
PYTHONUNBUFFERED=1 "$NCU" --metrics "$M" --kernel-name regex:'attn_rope_fwd|cutlass_attn_fwd' --launch-count 3 --csv --page raw \
  python3 bench/rope_ab.py --lib "$BUILD/libtilec.so" --cases "$CASE" --rounds 1 --warm-ms 0 \
  >"$OUTDIR/ncu_rope.csv" 2>"$OUTDIR/ncu_rope.err"
echo "ncu exit $?"
python3 bench/ncu_csv.py rope "$OUTDIR/ncu_rope.csv"
