# ncu_csv.py: read `ncu --csv --page raw` output (other lines of the profiled
# program interleave with it) for bench/ncu_*.sh.
#   python3 bench/ncu_csv.py banks FILE.csv   the bank-conflict table (ncu_banks.sh)
#   python3 bench/ncu_csv.py attn FILE.csv    issue / pipe / stall lines per kernel (ncu_attn.sh)
#   python3 bench/ncu_csv.py rope FILE.csv    the same with the LSU pipe and L2 / DRAM bytes (ncu_rope.sh)
import csv, sys

def read(path):
    """(header, kernel rows, index of the kernel-name column); exits 1 without rows."""
    rows = [r for r in csv.reader(l for l in open(path) if l.startswith('"'))]
    if not rows:
        print("no ncu rows"); sys.exit(1)
    head = rows[0]; kn = head.index("Kernel Name")
    return head, [r for r in rows[1:] if len(r) > kn and r[kn]], kn

def num(x):
    try: return float(x.replace(",", ""))
    except ValueError: return 0.0

def banks(path):
    head, data, kn = read(path)
    data = [r for r in data if r[kn].startswith("swz_")]
    # the ld / st / cp.async (ldgsts) conflicts and all shared wavefronts; zero-only columns dropped
    cols = [i for i, h in enumerate(head) if h.startswith("l1tex__") and h.endswith(".sum")
            and any(num(r[i]) != 0 for r in data)]
    short = lambda h: h.replace("l1tex__data_", "").replace("_pipe_lsu_mem_shared", "").replace(".sum", "")
    print("| kernel | " + " | ".join(short(head[i]) for i in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for r in data:
        print("| " + r[kn] + " | " + " | ".join(r[i] for i in cols) + " |")

ATTN = [("ms", "gpu__time_duration.sum", 1e-6), ("Minstr", "smsp__inst_executed.sum", 1e-6),
        ("issue%", "smsp__issue_active.avg.pct_of_peak_sustained_active", 1),
        ("tensor%", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", 1),
        ("fma%", "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active", 1),
        ("alu%", "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active", 1),
        ("xu%", "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", 1),
        ("regs", "launch__registers_per_thread", 1)]

def stall_table(path, cols, pick, width, digits):
    """one line a kernel row (pick: which rows) with cols and the four top stall reasons"""
    head, data, kn = read(path)
    stall = "smsp__average_warp_latency_issue_stalled_"
    st = [i for i, h in enumerate(head) if h.startswith(stall)]
    print("| kernel | " + " | ".join(n for n, _, _ in cols) + " | top stalls |")
    print("|---" * (len(cols) + 2) + "|")
    for r in pick(data):
        vals = [f"{num(r[head.index(m)]) * s:.3g}" if m in head else "-" for _, m, s in cols]
        top = sorted(((num(r[i]), head[i][len(stall):].replace(".ratio", "")) for i in st), reverse=True)[:4]
        print(f"| {r[kn][:width]} | " + " | ".join(vals) + " | " + ", ".join(f"{n} {v:.{digits}f}" for v, n in top) + " |")

def attn(path):
    stall_table(path, ATTN, lambda d: d, 48, 0)

# (ncu_rope.sh) attention's columns with the LSU pipe and the L2's bytes (TB/s) and hit rate
ROPE = ATTN[:-1] + [("lsu%", "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", 1),
                    ("L2 TB/s", "lts__t_bytes.sum.per_second", 1e-12), ("L2 hit%", "lts__t_sector_hit_rate.pct", 1),
                    ("dram TB/s", "dram__bytes.sum.per_second", 1e-12), ATTN[-1]]

def rope(path):
    stall_table(path, ROPE, lambda d: d, 48, 1)

ROWS = [("us", "gpu__time_duration.sum", 1e-3), ("dram %", "dram__throughput.avg.pct_of_peak_sustained_elapsed", 1),
        ("warp inst M", "smsp__inst_executed.sum", 1e-6), ("issue %", "smsp__issue_active.avg.pct_of_peak_sustained_active", 1),
        ("fma %", "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active", 1),
        ("alu %", "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active", 1),
        ("xu %", "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", 1),
        ("lsu %", "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", 1),
        ("regs", "launch__registers_per_thread", 1), ("warps %", "sm__warps_active.avg.pct_of_peak_sustained_active", 1)]

def rows(path):
    """every second row (the second launch of each form) with the top stalls (ncu_rows.sh)"""
    stall_table(path, ROWS, lambda d: d[1::2], 32, 1)

if __name__ == "__main__":
    {"banks": banks, "attn": attn, "rows": rows, "rope": rope}[sys.argv[1]](sys.argv[2])
