#!/bin/sh
# bench/pending_scalepipe.sh: the call scalepipe owes (eighteenth session, no device): the block-scaled
# fp8 GEMM (examples/gemm_fp8_blockscale.tile) with its scale loads issued one k-step ahead and carried
# by the compiler (TILEC_LOAD_AHEAD=1, passes/load_ahead.c), beside the hand-written form of the same
# (bench/variants/gemm_fp8_blockscale_prefetch.tile, "bs prefetch"), predicted in bench/RESULTS.md
# "2026-12-05 (eighteenth session), branch scalepipe".  About 70-100 s warm (limits 30 + 20 + 20 + 8 + 40 s).
#   here:   tools/carry.sh build
#   device: run command="sh bench/pending_scalepipe.sh .carry" carry=[".carry"] timeout_s=150
#   (or with others: OWED='scalepipe:150 ...' sh bench/owed.sh .carry)
. bench/pending_env.sh
echo "== 1. correctness: cutlass_gemm_fp8_blockscale default and TILEC_LOAD_AHEAD=1 against the fp64 sum of scaled"
echo "   block products at 10 sizes (1^3 .. 1537x2600x1040, K 63 .. 8192, TMA and no-TMA forms), outputs NaN-poisoned;"
echo "   the ahead form bit-identical to the default required (tests/gpu/test_dot_types.py --only bs)"
TILEC_CACHE_DIR=/tmp/c-sp1 timeout -k 10 30 python3 tests/gpu/test_dot_types.py --lib "$B/libtilec.so" --examples examples --only bs \
  > "$L/dot_bs.log" 2>&1
TC="test_dot_types bs exit $?: $(grep -c '^ok' "$L/dot_bs.log") ok, $(grep -c '^FAIL' "$L/dot_bs.log") FAIL; $(tail -1 "$L/dot_bs.log")"
echo "$TC"; grep -m5 FAIL "$L/dot_bs.log"
echo "== 1b. gpu_test_examples on gemm_fp8_blockscale.tile with TILEC_LOAD_AHEAD=1 (GPU vs the interpreter, ragged rounds) [$(el) s]"
mkdir -p /tmp/ex_sp && cp examples/gemm_fp8_blockscale.tile /tmp/ex_sp/
TILEC_LOAD_AHEAD=1 TILEC_CACHE_DIR=/tmp/c-sp2 timeout -k 10 20 "$B/tests/gpu_test_examples" /tmp/ex_sp > "$L/examples.log" 2>&1
EX="gpu_test_examples (ahead) rc $?: $(tail -1 "$L/examples.log")"
echo "$EX"; grep -m5 "^FAIL" "$L/examples.log"
echo "== 1c. memcheck, TILEC_LOAD_AHEAD=1, 1100x1800x1040 (KB 9: each tile's last k-step loads column 9, outside SA /"
echo "   SW, predicated off), against the interpreter; then the default without the sanitizer at the same size [$(el) s]"
RUNARGS="run examples/gemm_fp8_blockscale.tile --size M=1100 --size N=1800 --size K=1040 --size KB=9 --size NB=15 --device"
# shellcheck disable=SC2086
TILEC_LOAD_AHEAD=1 TILEC_CACHE_DIR=/tmp/c-sp3 timeout -k 10 20 compute-sanitizer --tool memcheck "$B/tilec" $RUNARGS > "$L/san.log" 2>&1
SAN="memcheck (ahead) rc $?: $(grep -E 'SUMMARY|PASS|FAIL' "$L/san.log" | tr '\n' ' ' | cut -c1-200)"
echo "$SAN"
# shellcheck disable=SC2086
TILEC_CACHE_DIR=/tmp/c-sp4 timeout -k 10 8 "$B/tilec" $RUNARGS > "$L/run_default.log" 2>&1
DEF="default rc $?: $(grep -E 'PASS|FAIL' "$L/run_default.log" | tr '\n' ' ' | cut -c1-200)"
echo "$DEF"
echo "== 2. on / off beside cuBLAS fp8 accurate (per-tensor TN), 3 rotated rounds (bench/fp8_probe.py) [$(el) s]"
TILEC_CACHE_DIR=/tmp/c-sp5 timeout -k 10 40 python3 bench/fp8_probe.py --lib "$B/libtilec.so" --sizes 4096,8192 --rounds 3 \
  --forms "tn,bs,bs ahead,bs prefetch" > "$L/fp8_probe.log" 2>&1
echo "fp8_probe.py exit $?"; grep -E "FAILED|Error|Traceback" "$L/fp8_probe.log" | head -3
# one line a form, both sizes (owed.sh shows a script's last 25 lines): TFLOP/s, x cuBLAS accurate, the
# range over the rounds, rel. err
python3 bench/fp8_probe_table.py "$L/fp8_probe.log" 12
echo "correctness: $TC"
echo "examples: $EX"
echo "sanitizer: $SAN"
echo "$DEF"
echo "[all: $(el) s]"
