#!/bin/sh
# bench/pending_fp8coop.sh: the call fp8coop owes (eighteenth session, no device): the fp8 TN GEMM with
# fast accumulation at gemm_fp8.tile's sm_90a tile (128x256 x 4) now takes the cooperative kernel by
# default (route_pipeline; TILEC_WS=off the TMA ring), and promote at that tile on the ring beside its
# cooperative default (never measured: the seventeenth session's "tn parts 128x256 s4" was cooperative).
# Predicted in bench/RESULTS.md "2026-12-05 (eighteenth session), branch fp8coop".  About 70-100 s warm
# (test 20-35 s, probe 4 forms x 2 sizes x 3 rounds 30-50 s).
#   here:   tools/carry.sh build
#   device: run command="sh bench/pending_fp8coop.sh .carry" carry=[".carry"] timeout_s=180
#   (or with others: OWED='fp8coop:110 ...' sh bench/owed.sh .carry; its limits 40 + 50 s)
. bench/pending_env.sh
echo "== 1. correctness: cutlass_gemm_fp8_tn fast at 128x256 s4 by the default route (cooperative) and with"
echo "   TILEC_WS=off (the TMA ring), bit-identical to each other required; with the promote forms; all against the"
echo "   fp64 product at 11 ragged sizes (1^3 .. 1537x2600x129, K = 511: the no-TMA form), outputs NaN-poisoned"
echo "   (tests/gpu/test_dot_types.py --only fp8tn)"
timeout -k 10 40 python3 tests/gpu/test_dot_types.py --lib "$B/libtilec.so" --examples examples --only fp8tn > "$L/dot_fp8tn.log" 2>&1
TC="test_dot_types fp8tn exit $?: $(grep -c '^ok' "$L/dot_fp8tn.log") ok, $(grep -c '^FAIL' "$L/dot_fp8tn.log") FAIL; $(grep -c '^ok .* fast' "$L/dot_fp8tn.log") fast ok; $(tail -1 "$L/dot_fp8tn.log")"
echo "$TC"; grep -m5 FAIL "$L/dot_fp8tn.log"
echo "== 2. the 128x256 s4 forms on and off the cooperative kernel beside cuBLAS fp8, 3 rotated rounds [$(el) s]"
echo "   tn fast = the new default (coop), tn fast ring = TILEC_WS=off; tn = promote default (coop),"
echo "   tn ring 128x256 s4 = promote TILEC_WS=off (12 B of spills, ptxas 13.0)"
timeout -k 10 50 python3 bench/fp8_probe.py --lib "$B/libtilec.so" --sizes 4096,8192 --rounds 3 \
  --forms "tn fast,tn fast ring,tn,tn ring 128x256 s4" > "$L/fp8_probe.log" 2>&1
echo "fp8_probe.py exit $?"; grep -E "FAILED|Error|Traceback" "$L/fp8_probe.log" | head -3
# one line a form, both sizes: TFLOP/s, x cuBLAS (fast forms x cuBLAS fast, promote x accurate), the
# rounds' range, rel. err
python3 bench/fp8_probe_table.py "$L/fp8_probe.log" 20
echo "correctness: $TC"
echo "[all: $(el) s]"
