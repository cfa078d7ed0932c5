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
for c in 128:4096:0 128:4096:1; do n=$(echo $c | tr : _)
  timeout -k 10 120 "$NCU" --metrics "$M" --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section Occupancy --section LaunchStats \
    --kernel-name regex:'attn_bwd_dkdv|attn_bwd_dq|cudnn' --csv --page details \
    python3 bench/bwd_once.py --lib $B/libtilec.so --default $c > $L/ncubwd_$n.csv 2> $L/ncubwd_$n.err
  echo "ncu $c rc $? [$(el) s]"
  python3 - $L/ncubwd_$n.csv <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if not rows: print("no ncu rows"); sys.exit(0)
h = rows[0]; kid, kn, mn, mv = h.index("ID"), h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value")
want = {"Duration": "us", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": "tensor%",
        "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue%", "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active": "xu%",
        "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active": "fma%", "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active": "alu%",
        "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active": "lsu%", "Registers Per Thread": "regs",
        "Achieved Occupancy": "occ%", "Mem Busy": "membusy%", "Max Bandwidth": "maxbw%", "L2 Hit Rate": "L2hit%",
        "Warp Cycles Per Issued Instruction": "cyc/inst", "Dynamic Shared Memory Per Block": "smem"}
out = {}
for r in rows[1:]:
    key = (r[kid], r[kn][:48])
    d = out.setdefault(key, {})
    if r[mn] in want: d[want[r[mn]]] = r[mv]
    elif r[mn].startswith("smsp__average_warp_latency_issue_stalled_"):
        d.setdefault("stalls", {})[r[mn][41:].replace(".ratio", "")] = float(r[mv].replace(",", "") or 0)
for (i, k), d in out.items():
    st = d.pop("stalls", {})
    tot = sum(st.values()) or 1
    top = ", ".join(f"{n} {100 * v / tot:.0f}%" for n, v in sorted(st.items(), key=lambda x: -x[1])[:5])
    print(f"## {i} {k}: " + " ".join(f"{a}={b}" for a, b in d.items()) + f"; stalls: {top}")
PY
done
grep -h "once default" $L/ncubwd_*.csv | head -2
