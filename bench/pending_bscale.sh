#!/bin/sh
# bench/pending_bscale.sh: the call bscale owes (seventeenth session, no device): the block-scaled fp8
# GEMM (examples/gemm_fp8_blockscale.tile) with its scales prefetched into L1 D k-steps ahead
# (TILEC_SCALE_PREFETCH=D, lib/codegen/emit_scale_prefetch.c), predicted in bench/RESULTS.md
# "2026-12-05 (seventeenth session), branch bscale".  About 70-100 s warm (limits 35 + 25 + 40 + 20 s): the
# test 10-20 s, memcheck 10-20 s, the probe (7 forms x 2 sizes, 3 rotated rounds) 20-35 s, ncu 10-20 s.
#   here:   tools/carry.sh build
#   device: run command="sh bench/pending_bscale.sh .carry" carry=[".carry"] timeout_s=150
#   (or with others: OWED='bscale:150 ...' sh bench/owed.sh .carry)
. bench/pending_env.sh
echo "== 1. correctness: cutlass_gemm_fp8_blockscale default and TILEC_SCALE_PREFETCH=1/8/16 against the fp64 sum of"
echo "   scaled block products at 10 sizes (1^3 .. 1537x2600x1040, K 63 .. 8192, TMA and no-TMA forms), outputs"
echo "   NaN-poisoned; each prefetch form bit-identical to the default required (tests/gpu/test_dot_types.py --only bs)"
timeout 35 python3 tests/gpu/test_dot_types.py --lib "$B/libtilec.so" --examples examples --only bs > "$L/dot_bs.log" 2>&1
TC="test_dot_types bs exit $?: $(grep -c '^ok' "$L/dot_bs.log") ok, $(grep -c '^FAIL' "$L/dot_bs.log") FAIL; $(tail -1 "$L/dot_bs.log")"
echo "$TC"; grep -m5 FAIL "$L/dot_bs.log"
echo "== 1b. compute-sanitizer memcheck, TILEC_SCALE_PREFETCH=8 + _NEXT=1, 1100x1800x1040 (135 tiles: three CTAs"
echo "   run two, so the next tile's prefetch runs), against the interpreter (tilec run) [$(el) s]"
TILEC_SCALE_PREFETCH=8 TILEC_SCALE_PREFETCH_NEXT=1 TILEC_CACHE_DIR=/tmp/c-bscale timeout 25 compute-sanitizer --tool memcheck \
  "$B/tilec" run examples/gemm_fp8_blockscale.tile --size M=1100 --size N=1800 --size K=1040 --size KB=9 --size NB=15 \
  --device > "$L/san_bs.log" 2>&1
SAN="memcheck rc $?: $(grep -E 'SUMMARY|PASS|FAIL' "$L/san_bs.log" | tr '\n' ' ' | cut -c1-200)"
echo "$SAN"
echo "== 2. on / off beside cuBLAS fp8 accurate (per-tensor TN), 3 rotated rounds (bench/fp8_probe.py) [$(el) s]"
timeout 40 python3 bench/fp8_probe.py --lib "$B/libtilec.so" --sizes 4096,8192 --rounds 3 \
  --forms "tn,bs,bs pf8,bs pf8 next,bs pf4,bs pf1,bs prefetch" > "$L/fp8_probe.log" 2>&1
echo "fp8_probe.py exit $?"; grep -E "FAILED|Error|Traceback" "$L/fp8_probe.log" | head -3
echo "== 3. ncu, 4096^3, bs and bs pf8 (two launches each): the scale loads' L1 sectors hit / missed [$(el) s]"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
if [ -n "$NCU" ]; then
  S=smsp__average_warp_latency_issue_stalled_
  timeout 20 "$NCU" --kernel-name regex:blockscale --csv --page raw --metrics \
gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,\
${S}long_scoreboard.ratio,${S}wait.ratio \
    python3 bench/ncu_bscale.py --examples examples > "$L/ncu_bscale.csv" 2> "$L/ncu_bscale.err"
  echo "ncu exit $?"
  python3 - "$L/ncu_bscale.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if not rows: print("no ncu rows"); sys.exit(0)
head, data = rows[0], [r for r in rows[1:] if r and r[0].isdigit()]
cols = ["gpu__time_duration.sum", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum",
        "smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio", "smsp__average_warp_latency_issue_stalled_wait.ratio"]
forms = ["bs", "bs", "bs pf8", "bs pf8"]
print("launch | form | us | tensor % | ld sectors hit | missed | long_scoreboard | wait")
for i, r in enumerate(data):
    v = [r[head.index(c)] if c in head else "?" for c in cols]
    print(f"{i} | {forms[i] if i < 4 else '?'} | " + " | ".join(v))
PY
else
  echo "ncu not found"
fi
# one line a form, both sizes (owed.sh shows a script's last 25 lines): TFLOP/s, x cuBLAS accurate, the
# range over the rounds, rel. err
python3 bench/fp8_probe_table.py "$L/fp8_probe.log" 14
echo "correctness: $TC"
echo "sanitizer: $SAN"
echo "[all: $(el) s]"
