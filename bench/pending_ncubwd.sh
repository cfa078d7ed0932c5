# bench/pending_ncubwd.sh: where the D128 attention backward's two kernels and cuDNN's backward spend their time
# (ncu sections: speed of light, compute pipes, memory / shared memory, warp states, occupancy), one launch each
# of `bench/bwd_once.py --default` (checked against float64 first).  Why: TILEC_WGMMA_A_REGS (branch aregs,
# bench/RESULTS.md "twenty-seventh session") took 30 % of the dQ kernel's shared-memory reads away and the kernel
# did not move (+0.5 % full), so shared-memory bandwidth is not its bound; this says what is, beside cuDNN.
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_ncubwd.sh .carry" carry=[".carry"] timeout_s=300
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cncubwd
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null) || { echo "ncu not found"; exit 77; }
python3 bench/bwd_once.py --lib $B/libtilec.so --default 128:4096:0 || exit 1
. bench/ncu_metrics.sh
M=sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,$NCU_PIPES,$NCU_STALLS
for c in 128:4096:0 128:4096:1; do
  timeout -k 10 120 "$NCU" --metrics "$M" --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section Occupancy --section LaunchStats \
    --kernel-name regex:'attn_bwd_dkdv|attn_bwd_dq|cudnn|fmha|bprop|dgrad|sm90' --csv --page details \
    python3 bench/bwd_once.py --lib $B/libtilec.so --default $c > $L/ncubwd_$c.csv 2> $L/ncubwd_$c.err
  echo "ncu $c rc $? [$(el) s]"
  python3 - $L/ncubwd_$c.csv <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if not rows: print("no ncu rows"); sys.exit(0)
h = rows[0]; kn, mn, mv, mu = h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value"), h.index("Metric Unit")
want = ("Duration", "Compute (SM) Throughput", "Memory Throughput", "Registers Per Thread", "Achieved Occupancy",
        "Shared Memory Configuration Size", "Dynamic Shared Memory Per Block", "Block Limit Registers", "Block Limit Shared Mem",
        "Issue Slots Busy", "Executed Ipc Active", "L1/TEX Hit Rate", "Mem Busy", "Max Bandwidth", "L2 Hit Rate",
        "Avg. Active Threads Per Warp", "Warp Cycles Per Issued Instruction", "Theoretical Occupancy")
seen = {}
for r in rows[1:]:
    k = r[kn][:40]
    if r[mn] in want or r[mn].startswith(("sm__", "smsp__")):
        n = r[mn].replace("smsp__average_warp_latency_issue_stalled_", "stall_").replace(".avg.pct_of_peak_sustained_active", "%")
        seen.setdefault(k, []).append(f"{n}={r[mv]}{r[mu] if r[mu] not in ('', 'inst', '%') else ''}")
for k, v in seen.items():
    print(f"## {k}: " + "; ".join(v))
PY
done
grep -h "once default" $L/ncubwd_*.csv | head -2
