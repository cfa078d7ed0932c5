#!/bin/sh
# bench/pending_bscale2.sh: the call bscale2 owes (twenty-second session, no device): block-scaled fp8
# (DeepSeek-V3's 1x128 / 128x128 scales) on the per-tensor promote kernel's sm_90a tile, 128x256 x 4
# (examples/gemm_fp8_blockscale.tile: a column's weight scale the gather SW[(n0 + iota) / 128,
# kb], made two scalar loads and a select on iota by TILEC_GATHER_RUNS=1, passes/gather_runs.c), beside
# the 128x128 example, the hand-written select (_where.tile), cuBLAS fp8 accurate per-tensor and tilec's
# per-tensor promote (tn; tn 128x128 s5: the example's tile), predicted in bench/RESULTS.md
# "2026-12-05 (twenty-second session), branch bscale2".  About 90-130 s warm (limits 45 + 25 + 20 + 8 + 85 s).
#   here:   tools/carry.sh build
#   device: run command="sh bench/pending_bscale2.sh .carry" carry=[".carry"] timeout_s=200
#   (or with others: OWED='bscale2:190 ...' sh bench/owed.sh .carry)
. bench/pending_env.sh
echo "== 1. correctness: the 128x128 default, TILEC_LOAD_AHEAD=1, the wide variant under TILEC_GATHER_RUNS=1 and its"
echo "   hand-written select against the fp64 sum of scaled block products at 10 sizes (1^3 .. 1537x2600x1040,"
echo "   K 63 .. 8192, TMA and no-TMA forms), outputs NaN-poisoned; each bit-identical to the default required"
echo "   (tests/gpu/test_dot_types.py --only bs)"
TILEC_CACHE_DIR=/tmp/c-b21 timeout -k 10 45 python3 tests/gpu/test_dot_types.py --lib "$B/libtilec.so" --examples examples --only bs \
  > "$L/dot_bs.log" 2>&1
TC="test_dot_types bs exit $?: $(grep -c '^ok' "$L/dot_bs.log") ok, $(grep -c '^FAIL' "$L/dot_bs.log") FAIL; $(tail -1 "$L/dot_bs.log")"
echo "$TC"; grep -m5 FAIL "$L/dot_bs.log"
echo "== 1b. gpu_test_examples on the wide variant with TILEC_GATHER_RUNS=1 (GPU vs the interpreter, ragged rounds) [$(el) s]"
mkdir -p /tmp/ex_b2 && cp examples/gemm_fp8_blockscale.tile /tmp/ex_b2/
TILEC_GATHER_RUNS=1 TILEC_CACHE_DIR=/tmp/c-b22 timeout -k 10 25 "$B/tests/gpu_test_examples" /tmp/ex_b2 > "$L/examples.log" 2>&1
EX="gpu_test_examples (wide, gather_runs) rc $?: $(tail -1 "$L/examples.log")"
echo "$EX"; grep -m5 "^FAIL" "$L/examples.log"
echo "== 1c. memcheck, the wide variant with TILEC_GATHER_RUNS=1 at 1100x1800x1040 (NB 15: the last column tile's"
echo "   second weight block, 15, is outside SW, read as zeros for columns past N), against the interpreter;"
echo "   then 1100x1920x1040 (NB 15, N a multiple of 128 but not of 256) without the sanitizer [$(el) s]"
RUNARGS="run examples/gemm_fp8_blockscale.tile --size M=1100 --size N=1800 --size K=1040 --size KB=9 --size NB=15 --device"
# shellcheck disable=SC2086
TILEC_GATHER_RUNS=1 TILEC_CACHE_DIR=/tmp/c-b23 timeout -k 10 20 compute-sanitizer --tool memcheck "$B/tilec" $RUNARGS > "$L/san.log" 2>&1
SAN="memcheck (wide) rc $?: $(grep -E 'SUMMARY|PASS|FAIL' "$L/san.log" | tr '\n' ' ' | cut -c1-200)"
echo "$SAN"
RUN2="run examples/gemm_fp8_blockscale.tile --size M=1100 --size N=1920 --size K=1040 --size KB=9 --size NB=15 --device"
# shellcheck disable=SC2086
TILEC_GATHER_RUNS=1 TILEC_CACHE_DIR=/tmp/c-b24 timeout -k 10 8 "$B/tilec" $RUN2 > "$L/run_1920.log" 2>&1
R2="wide 1100x1920x1040 rc $?: $(grep -E 'PASS|FAIL' "$L/run_1920.log" | tr '\n' ' ' | cut -c1-200)"
echo "$R2"
echo "== 2. beside cuBLAS fp8 accurate (per-tensor TN) and tilec's per-tensor promote, 3 rotated rounds"
echo "   (bench/fp8_probe.py): tn (128x256 s4), tn 128x128 s5, bs (the example, 128x128 s5), bs wide"
echo "   (TILEC_GATHER_RUNS=1), bs where (by hand), bs wide fixed (timing only: the scales loaded once, so"
echo "   128 FFMA for per-tensor's 128 FADD and nothing else), bs wide off (the gather as written: spills) [$(el) s]"
TILEC_CACHE_DIR=/tmp/c-b25 timeout -k 10 85 python3 bench/fp8_probe.py --lib "$B/libtilec.so" --sizes 4096,8192 --rounds 3 \
  --forms "tn,tn 128x128 s5,bs,bs wide,bs where,bs wide fixed,bs wide off" > "$L/fp8_probe.log" 2>&1
echo "fp8_probe.py exit $?"; grep -E "FAILED|Error|Traceback" "$L/fp8_probe.log" | head -3
# one line a form, both sizes (owed.sh shows a script's last 25 lines): TFLOP/s, x cuBLAS accurate, the
# range over the rounds, rel. err; bs wide / tn is the issue's ratio (goal >= 0.90)
python3 bench/fp8_probe_table.py "$L/fp8_probe.log" 12
echo "correctness: $TC"
echo "examples: $EX"
echo "sanitizer: $SAN"
echo "$R2"
echo "[all: $(el) s]"
