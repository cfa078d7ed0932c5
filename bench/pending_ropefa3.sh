#!/bin/sh
# bench/pending_ropefa3.sh: what TILEC_ROPE_PRODUCER=1 (k of attn_rope rotated by fa3's producer warpgroup,
# lib/codegen/emit_rope.c) owes the GPU after the twentieth session (branch ropefix; bench/RESULTS.md "branch
# ropefix" has the prediction).  Its first run (twentieth session, H200, seed 1796474304044009) FAILed one
# round, (Z=2 H=8 S=1100) causal: 60 mismatches, first at 1283206, gpu -0.125976562 vs -0.0971679688, max
# 0.0425.  The cause is the rotation's rounding (x1 c fused into an FFMA: 58 rotated key elements one bf16 ulp
# off the interpreter's), reproduced digit for digit on the CPU (tools/rope_round_sim.c); branch ropefix
# rounds it as the source does.  So first that round again with its own data (GPU_TEST_ATTN_ROUNDS=1:5
# replays the earlier rounds dry): the fix (PASS expected), then TILEC_ROPE_FUSE=1, the old rounding (the
# same FAIL line expected, digit for digit: the failure is deterministic, not a race); then every round with
# a fresh seed beside racecheck (causal S300); then the attnrope bench at D128 S 1k / 4k / 16k on and off;
# then ncu of one launch (full S1024 H16): where the producer's step waits (the table rows' L1 / L2 hits,
# the stall reasons); a short table last.  About 110 s warm, at most 150.
# Branch ropefa4 (bench/RESULTS.md "branch ropefa4" has the prediction): the producer's table loads now run
# TILEC_ROPE_AHEAD=2 half rows ahead of their use (the default; the split 56 / 224), so every correctness
# step below runs that form; the bench times it beside the depths 0 (the ropefix form), 1 and 3, the default
# kernel and cutlass_attn_fwd (the plain attention on pre-rotated q, k), and the table prints us a 128-key step.
#   here:   tools/carry.sh
#   device: run command="sh bench/pending_ropefa3.sh .carry" carry=[".carry"] timeout_s=180
#   (or OWED="ropefa3:150" sh bench/owed.sh .carry)
. bench/pending_env.sh
unset TILEC_ROPE_AHEAD  # (the correctness steps run its default)
mkdir -p /tmp/ex_rp && cp examples/attn_rope.tile /tmp/ex_rp/
SEED=1796474304044009
echo "== 0. canary: one launch of the rope-producer kernel, D128 full (1, 2, 300), 25 s at most [$(el) s]"
TILEC_ROPE_PRODUCER=1 TILEC_ATTN_WS=fa3 TILEC_CACHE_DIR=/tmp/rpc timeout -k 5 25 $B/tilec run examples/attn_rope.tile \
  --kernel cutlass_attn_rope_fwd -D D=128 -D BN=128 -D CAUSAL=0 --size Z=1 --size H=2 --size S=300 --scalar scale=0.088 \
  --device > $L/rp_canary.log 2>&1
RC=$?
echo "canary rc $RC: $(grep -E 'PASS|FAIL|error' $L/rp_canary.log | tr '\n' ' ' | cut -c1-200)"
if [ $RC -eq 124 ] || [ $RC -eq 137 ]; then
  echo "HANG: the rope-producer kernel did not finish in 25 s; nothing else launched"
  exit 1
fi
echo "== 1. the failed round first, its data (seed $SEED, round causal 1 (2, 8, 1100)): fixed, then fused; TILEC_ROPE_AHEAD at its default 2 [$(el) s]"
for fuse in 0 1; do
  TILEC_ROPE_FUSE=$fuse TILEC_SEED=$SEED GPU_TEST_VARIANTS_ONLY=1 GPU_TEST_ATTN_VARIANTS=ROPE_PRODUCER GPU_TEST_ATTN_ROUNDS=1:5 \
    TILEC_CACHE_DIR=/tmp/rpf$fuse timeout -k 10 40 $B/tests/gpu_test_examples /tmp/ex_rp > $L/rp_failed_$fuse.log 2>&1
  echo "TILEC_ROPE_FUSE=$fuse rc $? [$(el) s]: $(grep -E '^(PASS|FAIL) ' $L/rp_failed_$fuse.log | cut -c1-260)"
done
echo "== 2. every round (fresh seed) against the interpreter, racecheck causal S300; TILEC_ROPE_AHEAD at its default 2 [$(el) s]"
( TILEC_ROPE_PRODUCER=1 TILEC_ATTN_WS=fa3 TILEC_CACHE_DIR=/tmp/rps1 timeout -k 10 45 compute-sanitizer --tool racecheck \
    $B/tilec run examples/attn_rope.tile --kernel cutlass_attn_rope_fwd -D D=128 -D BN=128 -D CAUSAL=1 \
    --size Z=1 --size H=2 --size S=300 --scalar scale=0.088 --device > $L/rp_san_1.log 2>&1
  echo "racecheck rope-producer D128 causal 1 H2 S300: rc $? $(grep -E 'SUMMARY|FAIL|PASS' $L/rp_san_1.log | tr '\n' ' ' | cut -c1-200)" > $L/rp_san_1.txt ) &
GPU_TEST_VARIANTS_ONLY=1 GPU_TEST_ATTN_VARIANTS=ROPE_PRODUCER TILEC_CACHE_DIR=/tmp/rpe timeout -k 10 50 $B/tests/gpu_test_examples /tmp/ex_rp > $L/rp_examples.log 2>&1
echo "examples rc $? [$(el) s]: $(head -1 $L/rp_examples.log); $(tail -1 $L/rp_examples.log)"
grep -E "^FAIL" $L/rp_examples.log | head -5
wait; cat $L/rp_san_1.txt
echo "== 3. bench, D128 S 1k / 4k / 16k: rope-producer at TILEC_ROPE_AHEAD 2 (default), 0, 1, 3, and off (default kernel) [$(el) s]"
BENCH_ROPE_NO_MMA=1 BENCH_ROPE_FORMS="rope-producer" TILEC_CACHE_DIR=/tmp/rpb timeout -k 10 85 python3 bench/bench.py \
  --lib $B/libtilec.so.0.1 --only attnrope --quick --rope-d 128 --rope-s 1024,4096,16384 > $L/rp_bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -E "FAILED|Error|error|Traceback" $L/rp_bench.log | head -5
echo "== 4. ncu, one launch (full, Z1 H16 S1024): the producer's table loads and the stalls [$(el) s]"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
. bench/ncu_metrics.sh
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,\
l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\
lts__t_sector_hit_rate.pct,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,$NCU_STALLS
if [ -z "$NCU" ] || [ "$(el)" -ge 115 ]; then
  echo "ncu skipped (no ncu, or past 115 s)"
else
  TILEC_ROPE_PRODUCER=1 TILEC_ATTN_WS=fa3 TILEC_CACHE_DIR=/tmp/rpn timeout -k 10 25 "$NCU" --metrics "$M" \
    --kernel-name regex:cutlass_attn_rope --launch-count 1 --csv --page raw $B/tilec run examples/attn_rope.tile \
    --kernel cutlass_attn_rope_fwd -D D=128 -D BN=128 -D CAUSAL=0 --size Z=1 --size H=16 --size S=1024 \
    --scalar scale=0.088 --device > $L/rp_ncu.csv 2> $L/rp_ncu.err
  echo "ncu rc $? [$(el) s]"
  python3 bench/ncu_csv.py attn $L/rp_ncu.csv 2>&1 | tail -2 | cut -c1-300
  python3 - "$L/rp_ncu.csv" << 'EOF'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if len(rows) > 2:
    h, v = rows[0], rows[-1]
    for k in ("gpu__time_duration.sum", "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct",
              "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "lts__t_sector_hit_rate.pct",
              "smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio"):
        if k in h: print("  %s = %s" % (k, v[h.index(k)]))
EOF
fi
echo "== table [$(el) s]"
for fuse in 0 1; do
  echo "failed round (seed $SEED, causal (2, 8, 1100)) TILEC_ROPE_FUSE=$fuse: $(grep -E '^(PASS|FAIL) ' $L/rp_failed_$fuse.log | cut -c1-230)"
done
echo "every round: $(tail -1 $L/rp_examples.log)"
# each form: ms, plain / form (cutlass_attn_fwd on pre-rotated q, k), pair / form (rope.tile + it), by time; us a
# 128-key step an SM (bench.py's D128 shapes: H16, Z 16384 / S; full: 132 persistent CTAs, causal: a CTA a tile)
grep -E "^attn rope cutlass fused.* ms;" $L/rp_bench.log | awk '
  { line = $0; sub(/^attn rope cutlass fused ?/, "", line); i = index(line, "D128");
    form = substr(line, 1, i - 1); sub(/ +$/, "", form); if (form == "") form = "off (default kernel)";
    if (form == "rope-producer") form = "rope-producer (ahead 2)";
    rest = substr(line, i); shape = rest; sub(/:.*/, "", shape); err = rest; sub(/.*rel.err /, "", err);
    split(rest, a, /: /); split(a[2], t, /[ ,;]+/); ms = t[1]; plain = t[4]; pair = t[8];
    steps["D128 S1024 full"] = 124; steps["D128 S4096 full"] = 496; steps["D128 S16384 full"] = 1986;
    steps["D128 S16384 causal"] = 1001;
    us = (shape in steps && form ~ /rope-producer/) ? sprintf("%.2f us/step", ms * 1000 / steps[shape]) : "";
    printf "%-19s %-25s %7.3f ms  x plain %.3f  x pair %.3f  %s  err %s\n", shape, form, ms, plain / ms, pair / ms, us, err }' | sort
echo "done [$(el) s]"
