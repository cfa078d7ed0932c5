# bench/ncu_metrics.sh: the ncu metric lists bench/ncu_attn.sh and bench/ncu_rows.sh share (sourced):
# NCU_PIPES the FMA / ALU / XU (MUFU) / LSU pipes, registers and warps active; NCU_STALLS the warp
# stall reasons bench/ncu_csv.py ranks.
NCU_PIPES=sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,\
sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,\
sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,\
sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,\
launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
S=smsp__average_warp_latency_issue_stalled_
NCU_STALLS=${S}barrier.ratio,${S}long_scoreboard.ratio,${S}short_scoreboard.ratio,${S}math_pipe_throttle.ratio,\
${S}wait.ratio,${S}mio_throttle.ratio,${S}not_selected.ratio,${S}selected.ratio,${S}dispatch_stall.ratio,\
${S}tex_throttle.ratio,${S}lg_throttle.ratio,${S}drain.ratio,${S}no_instruction.ratio,${S}branch_resolving.ratio
