#!/bin/sh
# bench/pending_fp8p6.sh: the call fp8p6 owes (sixteenth session, no device): fp8 TN promote at 256x128 /
# 128x256 on the cooperative kernel with TILEC_PROMOTE_PARTS=1 (each warpgroup's accumulator promoted a
# 64x128 part at a time), TILEC_PROMOTE_OVERLAP=1 on the cooperative kernel again (its 4-5x slowdown was
# the relocatable compile's spills), and fast accumulation at 128x128 / 128x256 on the cooperative kernel
# (what the tile reaches without the promotion), predicted in bench/RESULTS.md "2026-12-04 (sixteenth
# session), branch fp8p6".  About 60-90 s warm (test 15-25 s, probe 12 forms x 2 sizes 40-60 s).
#   here:   tools/carry.sh build
#   device: run command="sh bench/pending_fp8p6.sh .carry" carry=[".carry"] timeout_s=200
#   (or with others: OWED='fp8p6:180 ...' sh bench/owed.sh .carry)
. bench/pending_env.sh
echo "== 1. correctness: cutlass_gemm_fp8_tn default; TILEC_PROMOTE_PARTS=1 at 256x128, 128x256, 256x128 + cluster 1x2,"
echo "   128x128 w4 ping-pong (each bit-identical to the default required); TILEC_PROMOTE_OVERLAP=1; all against the"
echo "   fp64 product at 11 ragged sizes (1^3 .. 1537x2600x129, K = 511, 147 tiles > 132 SMs), outputs NaN-poisoned"
echo "   (tests/gpu/test_dot_types.py --only fp8tn)"
timeout 60 python3 tests/gpu/test_dot_types.py --lib "$B/libtilec.so" --examples examples --only fp8tn > "$L/dot_fp8tn.log" 2>&1
TC="test_dot_types fp8tn exit $?: $(grep -c '^ok' "$L/dot_fp8tn.log") ok, $(grep -c '^FAIL' "$L/dot_fp8tn.log") FAIL; $(tail -1 "$L/dot_fp8tn.log")"
echo "$TC"; grep -m5 FAIL "$L/dot_fp8tn.log"
echo "== 2. the forms beside cuBLAS fp8 accurate / fast, 3 rotated rounds (bench/fp8_probe.py) [$(( $(date +%s) - T0 )) s]"
timeout 110 python3 bench/fp8_probe.py --lib "$B/libtilec.so" --sizes 4096,8192 --rounds 3 \
  --forms "tn,tn parts 256x128 s4,tn parts 128x256 s4,tn 256x128 s4,tn+ov,tn fast 128x128 coop s5,tn fast 128x256 w8 s4,tn fast 128x256 coop s4,tn parts 256x128 s4 c1x2,tn fast 256x128 coop s4,tn fast 128x256 s4 c2x1,tn pingpong 128x128 w4 s6 parts" \
  > "$L/fp8_probe.log" 2>&1
echo "fp8_probe.py exit $?"; grep -E "FAILED|Error|Traceback" "$L/fp8_probe.log" | head -3
# one line a form, both sizes (owed.sh shows a script's last 25 lines): TFLOP/s, x cuBLAS (accurate for
# promote forms, fast for fast ones), the range over the rounds, rel. err
python3 bench/fp8_probe_table.py "$L/fp8_probe.log" 34
echo "correctness: $TC"
echo "[all: $(( $(date +%s) - T0 )) s]"
