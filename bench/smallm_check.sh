#!/bin/sh
# bench/smallm_check.sh CARRY: what bounds the small-M forms at M = 64 / 128 (issue 10 item 6,
# docs/small_m.md "What it costs"): bench/smallm_probe.py over forms of other tiles, stages, splits and
# the cooperative kernel beside cuBLAS, then ncu of one launch of four of them and cuBLAS at
# M = 64, N = K = 4096 (duration, DRAM and L2 throughput, tensor pipe, the top stalls).  ~120 s.
set -u
B0=$(cd "${1:-.carry}" && pwd)/b; [ -x "$B0/tests/gpu_test_alignment" ] && (TILEC_EXAMPLES=$(pwd)/examples TILEC_CACHE_DIR=/tmp/c-al LD_LIBRARY_PATH=$B0 TILEC_LIBRARY=$B0/libtilec.so timeout 120 $B0/tests/gpu_test_alignment > ${OUT:-/tmp}/alignment.log 2>&1; echo "alignment exit $?: $(tail -1 ${OUT:-/tmp}/alignment.log)")
B=$(cd "${1:-.carry}" && pwd)/b
L=${OUT:-/tmp}
export LD_LIBRARY_PATH=$B TILEC_LIBRARY=$B/libtilec.so PYTHONUNBUFFERED=1 TILEC_CACHE_DIR=/tmp/c-smallm
F=TILEC_SMALL_M_FORMS=256=
FORMS="default=|off=TILEC_SMALL_M=0|u8=${F}64x64x64/cutlass/8|s8=${F}64x64x64/cutlass/8/split|s12=${F}64x64x64/cutlass/12/split|n128s8=${F}64x128x64/cutlass/8/split|coop8=${F}64x64x64/cutlass/8/split;TILEC_WS=coop|coop12=${F}64x64x64/cutlass/12/split;TILEC_WS=coop|ucoop12=${F}64x64x64/cutlass/12;TILEC_WS=coop|ms16=${F}16x32x256/multistage/5/split|k128=${F}64x64x128/cutlass/6/split|k128u=${F}64x64x128/cutlass/6|n128k128=${F}64x128x128/cutlass/4/split|coopk128=${F}64x64x128/cutlass/6/split;TILEC_WS=coop"
timeout 150 python3 bench/smallm_probe.py --sizes 64x4096x4096,128x4096x4096,128x4096x14336,61x4000x4104,61x4000x4100 --rounds 2 --forms "$FORMS" > $L/smallm_probe.log 2>&1
echo "probe exit $?"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,\
sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread,\
smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,\
smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_membar.ratio,\
smsp__average_warp_latency_issue_stalled_sleeping.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,\
smsp__cycles_active.avg,sm__cycles_elapsed.avg
[ -n "$NCU" ] && timeout 120 $NCU --metrics "$M" --kernel-name regex:'cutlass|nvjet|xmma|gemm' --csv --page raw python3 bench/smallm_probe.py --once --sizes 64x4096x4096 \
  --forms "default=|u8=${F}64x64x64/cutlass/8|s8=${F}64x64x64/cutlass/8/split|coop8=${F}64x64x64/cutlass/8/split;TILEC_WS=coop|k128=${F}64x64x128/cutlass/6/split|ms16=${F}16x32x256/multistage/5/split" \
  > $L/smallm_ncu.csv 2> $L/smallm_ncu.err
echo "ncu exit $?"
python3 - "$L/smallm_ncu.csv" <<'PY' > $L/smallm_ncu.txt
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
h = next((i for i, r in enumerate(rows) if r and r[0] == "ID"), None)
if h is None: sys.exit(print("no ncu rows"))
hd = rows[h]; col = {n: i for i, n in enumerate(hd)}
short = {"gpu__time_duration.sum": "ns", "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram%",
         "lts__throughput.avg.pct_of_peak_sustained_elapsed": "L2%", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": "tensor%",
         "launch__grid_size": "grid", "launch__registers_per_thread": "regs"}
stalls = [n for n in hd if "stalled" in n]
print("| kernel | ns | dram% | L2% | tensor% | grid | regs | stalls (cycles a warp instr.) |")
print("|---|---|---|---|---|---|---|---|")
for r in rows[h + 2:]:
    if len(r) < len(hd): continue
    st = sorted(((float(r[col[n]].replace(",", "") or 0), n.split("stalled_")[1].split(".")[0]) for n in stalls), reverse=True)[:4]
    print("| " + r[col["Kernel Name"]][:40] + " | " + " | ".join(r[col[k]] for k in short) + " | " + ", ".join(f"{n} {v:.1f}" for v, n in st) + " |")
PY
cat $L/smallm_ncu.txt | head -30
grep -E "FAIL|FAILED" $L/smallm_probe.log | head
grep "^|" $L/smallm_probe.log
