#!/bin/sh
# bench/pending_ropefa3.sh: the call branch ropefa3 (sixteenth session) owes for TILEC_ROPE_PRODUCER=1 (k of
# attn_rope rotated by fa3's producer warpgroup, lib/codegen/emit_rope.c; built with no device, never run on
# a GPU; bench/RESULTS.md "branch ropefa3" has the prediction).  First correctness: gpu_test_examples'
# rope-producer variant of cutlass_attn_rope_fwd (D128, BN 128, causal 0 / 1, the ragged sizes, 4097 and
# (2, 8, 1100): a persistent CTA's two tiles) against the interpreter, beside compute-sanitizer racecheck of
# `tilec run --device` (S 300, causal 0 / 1); then the attnrope bench at D128 S 1k / 4k / 16k, the switch
# on (rope-producer) and off (the default: the consumers rotate k, BN 64), each beside cutlass_attn_fwd on
# pre-rotated q, k and the unfused pair, in one process; a short table last.  At most about 140 s warm (25 s the canary,
# 50 s the correctness runs, 62 s the bench).
#   here:   tools/carry.sh
#   device: run command="sh bench/pending_ropefa3.sh .carry" carry=[".carry"] timeout_s=180
# (eighteenth session: this call, then first of call C, lost its machine; the kernel's setmaxnreg split
# asked the CTA's register pool for 1024 registers it has not, so every launch hung -- fixed in branch
# pendcheck, 48 / 224.  Hence the canary: one small launch alone first, and nothing more if it hangs.)
. bench/pending_env.sh
mkdir -p /tmp/ex_rp && cp examples/attn_rope.tile /tmp/ex_rp/
echo "== 0. canary: one launch of the rope-producer kernel, D128 full (1, 2, 300), 25 s at most [$(el) s]"
TILEC_ROPE_PRODUCER=1 TILEC_ATTN_WS=fa3 TILEC_CACHE_DIR=/tmp/rpc timeout -k 5 25 $B/tilec run examples/attn_rope.tile \
  --kernel cutlass_attn_rope_fwd -D D=128 -D BN=128 -D CAUSAL=0 --size Z=1 --size H=2 --size S=300 --scalar scale=0.088 \
  --device > $L/rp_canary.log 2>&1
RC=$?
echo "canary rc $RC: $(grep -E 'PASS|FAIL|error' $L/rp_canary.log | tr '\n' ' ' | cut -c1-200)"
if [ $RC -eq 124 ] || [ $RC -eq 137 ]; then
  echo "HANG: the rope-producer kernel did not finish in 25 s; nothing else launched (a hung context each"
  echo "racecheck, example and bench process would add: the eighteenth session's lost machine)"
  exit 1
fi
echo "== 1. rope-producer against the interpreter, racecheck [$(el) s]"
# racecheck: causal (one tile a CTA, S 300: 3 steps) and full (persistent: H 70 x 2 tiles = 140 > 132 SMs,
# so some CTAs take two tiles), in parallel
for a in "1 2 300" "0 70 256"; do set -- $a
  ( TILEC_ROPE_PRODUCER=1 TILEC_ATTN_WS=fa3 TILEC_CACHE_DIR=/tmp/rps$1 timeout -k 10 45 compute-sanitizer --tool racecheck \
      $B/tilec run examples/attn_rope.tile --kernel cutlass_attn_rope_fwd -D D=128 -D BN=128 -D CAUSAL=$1 \
      --size Z=1 --size H=$2 --size S=$3 --scalar scale=0.088 --device > $L/rp_san_$1.log 2>&1
    echo "racecheck rope-producer D128 causal $1 H$2 S$3: rc $? $(grep -E 'SUMMARY|FAIL|PASS' $L/rp_san_$1.log | tr '\n' ' ' | cut -c1-200)" > $L/rp_san_$1.txt ) &
done
GPU_TEST_VARIANTS_ONLY=1 GPU_TEST_ATTN_VARIANTS=ROPE_PRODUCER TILEC_CACHE_DIR=/tmp/rpe timeout -k 10 50 $B/tests/gpu_test_examples /tmp/ex_rp > $L/rp_examples.log 2>&1
echo "examples rc $? [$(el) s]: $(tail -1 $L/rp_examples.log)"
grep -E "^FAIL" $L/rp_examples.log | head -5
grep -cE "^PASS .*cutlass_attn_rope_fwd \[Z=" $L/rp_examples.log | sed 's/^/rounds passed (all variants): /'
wait; cat $L/rp_san_1.txt $L/rp_san_0.txt
echo "== 2. bench, D128 S 1k / 4k / 16k, on (rope-producer) and off (default) [$(el) s]"
BENCH_ROPE_NO_MMA=1 BENCH_ROPE_FORMS="rope-producer" TILEC_CACHE_DIR=/tmp/rpb timeout -k 10 62 python3 bench/bench.py \
  --lib $B/libtilec.so.0.1 --only attnrope --quick --rope-d 128 --rope-s 1024,4096,16384 > $L/rp_bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -E "FAILED|Error|error|Traceback" $L/rp_bench.log | head -5
# the table: fused / plain (cutlass_attn_fwd on pre-rotated q, k) and fused / pair (rope.tile + it), by time
grep -E "^attn rope cutlass fused.* ms;" $L/rp_bench.log | sed -E 's/rel.err.*//' | awk '
  { form = ($5 == "rope-producer") ? "on " : "off"; shape = $0; sub(/^attn rope cutlass fused( rope-producer)? /, "", shape);
    sub(/:.*/, "", shape); split($0, a, /: /); split(a[2], t, /[ ,;]+/);
    ms = t[1]; plain = t[4]; pair = t[8];
    printf "%-22s %s  %.3f ms  x plain %.3f  x pair %.3f\n", shape, form, ms, plain / ms, pair / ms }' | sort
echo "done [$(el) s]"
