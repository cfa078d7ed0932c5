#!/bin/sh
# bench/pending_w4small.sh: the call the twenty-fifth session's branch w4small owes (built without a device):
# TILEC_RING_IN_RANGE=1 (default off; lib/codegen/ring_range.c): the cp.async ring copies a stage only when
# its iteration runs.  Without it a split-K program of gemm_w4a16_splitk (BN128 x8 at K = 4096: 4 K steps
# on the 4-stage ring) copies 7 stages, 3 of them the next split's tiles (or zero-fills past K).
# 1. tests/gpu/test_w4a16.py, fused part, forms frag (the default) and frag-range (the switch), against
#    fp64 and the interpreter (M 1, 5, 16, 17, 33; N 15..4096 incl. 37, 130, 200; K 64..5248; split-K
#    at the bench's BN128 x8 incl. programs of 0 and 1 K steps);
# 2. tilec run --device against the interpreter with the switch (f32 C: atol 0.05 for the sums' order),
#    split-K BN128 x8 and x16 at ragged sizes (M 1 / 5 / 16, N 200 / 130 / 4100, K 640 / 1408 / 4096);
#    2b. gpu_test_examples with the switch over gemm_w4a16.tile, splitk_gemm.tile, gemm_small_m.tile;
# 3. bench.py --only w4a16 --quick, W4A16_GRAPH=1: split-K BM16 BN128 x4 / x8 / x16 unset and "range"
#    (the switch) at 1x4096x4096, 16x4096x4096, 16x14336x4096, 16x4096x14336, cuBLAS bf16 in the same
#    process (one timed launch and a CUDA graph on rotating weight copies); a table last (< 200 s).
#    If 1 or 2 fails, the numbers say nothing: the switch stays off.
#   here:   tools/carry.sh build
#   device: run command="sh bench/pending_w4small.sh .carry" carry=[".carry"] timeout_s=240
. bench/pending_env.sh
R=$(pwd)
echo "== 1. test_w4a16 (frag, frag-range) [$(el) s]"
TEST_W4A16_PART=fused TEST_W4A16_MODES=frag,frag-range TILEC_CACHE_DIR=/tmp/cw4s timeout -k 10 60 \
  python3 tests/gpu/test_w4a16.py --lib $B/libtilec.so --examples $R/examples > $L/test.log 2>&1
echo "test_w4a16 rc $? [$(el) s]: $(grep -c '^ok' $L/test.log) ok lines, $(grep -c 'FAIL' $L/test.log) FAIL lines"
grep -E "FAIL|Traceback|Error" $L/test.log | head -8
tail -1 $L/test.log
echo "== 2. tilec run --device, TILEC_RING_IN_RANGE=1 [$(el) s]"
n=0; f=0
for c in "8 5 200 640" "8 1 130 1408" "8 16 4100 4096" "16 5 200 1408" "16 16 130 4096"; do
  set -- $c
  TILEC_RING_IN_RANGE=1 TILEC_CACHE_DIR=/tmp/cw4r timeout -k 5 40 $B/tilec run examples/gemm_w4a16.tile \
    --kernel gemm_w4a16_splitk -D BN=128 -D SPLIT=$1 --size M=$2 --size N=$3 --size K=$4 --size KW=$(($4 / 8)) \
    --size NG=$(($4 / 128)) --atol 0.05 --rtol 0.001 --device > $L/run_$1_$2_$3_$4.log 2>&1
  rc=$?; n=$((n + 1)); [ $rc -eq 0 ] || f=$((f + 1))
  echo "rc $rc SPLIT=$1 M=$2 N=$3 K=$4: $(grep -E 'PASS|FAIL' $L/run_$1_$2_$3_$4.log | head -1) [$(el) s]"
done
echo "tilec run: $((n - f)) PASS, $f FAIL"
echo "== 2b. gpu_test_examples, TILEC_RING_IN_RANGE=1, on three files of short K loops [$(el) s]"
mkdir -p /tmp/w4sx && cp examples/gemm_w4a16.tile examples/splitk_gemm.tile examples/gemm_small_m.tile /tmp/w4sx/
TILEC_RING_IN_RANGE=1 TILEC_CACHE_DIR=/tmp/cw4x timeout -k 10 60 $B/tests/gpu_test_examples /tmp/w4sx > $L/examples.log 2>&1
echo "gpu_test_examples rc $? $(tail -1 $L/examples.log) [$(el) s]"
grep FAIL $L/examples.log | head -4
echo "== 3. bench [$(el) s]"
W4A16_GRAPH=1 W4A16_SHAPES=1x4096x4096,16x4096x4096,16x14336x4096,16x4096x14336 \
W4A16_ONLY="splitk BM16 BN128 SPLIT" W4A16_SKIP="TILEC_,nozero,maxnreg,staged,stages2,bf16x2,byteoff" \
TILEC_CACHE_DIR=/tmp/cw4b timeout -k 10 120 python3 bench/bench.py --lib $B/libtilec.so --root $R --only w4a16 --quick > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -iE "error|Traceback" $L/bench.log | head -5
grep -E "in a graph of" $L/bench.log
echo "== table: us (x cuBLAS bf16 = cuBLAS us / tilec us, same process); off = TILEC_RING_IN_RANGE unset, on = =1 ('range'); 'launch' = one timed launch (do_bench: the launcher and the C.zero_() kernel inside), 'graph' = a CUDA graph of launches (zero + kernel each) on rotating weight copies, cuBLAS timed the same way; on/off = off us / on us"
python3 - $L/bench.log <<'PY'
import re, sys
t = {}
for l in open(sys.argv[1]):
    m = re.match(r"w4a16(graph)? (\d+x\d+x\d+) splitk BM16 BN128 SPLIT(\d+)( range)?: ([\d.]+) us, cuBLAS bf16 ([\d.]+) us", l)
    if not m: continue
    how = "graph" if m.group(1) else "launch"
    t.setdefault((m.group(2), int(m.group(3)), how), {})["on" if m.group(4) else "off"] = (float(m.group(5)), float(m.group(6)))
print("%-14s %5s %-6s %18s %18s %7s" % ("shape", "split", "timing", "off us (x cuB)", "on us (x cuB)", "on/off"))
f = lambda v: ("%9.1f (%5.3f)" % (v[0], v[1] / v[0])) if v else "%18s" % "-"
for (shape, sp, how), d in t.items():
    on, off = d.get("on"), d.get("off")
    print("%-14s %5d %-6s %s %s %7s" % (shape, sp, how, f(off), f(on), "%.3f" % (off[0] / on[0]) if on and off else "-"))
PY
echo "done [$(el) s]"
