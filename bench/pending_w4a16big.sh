#!/bin/sh
# bench/pending_w4a16big.sh: the call the twentieth session's branch w4a16big owes (built without a device):
# W4A16 at large M by two kernels, examples/w4a16_dequant.tile (W = dequant(Wq) as bf16 [K, N], once,
# memory-bound) then examples/gemm.tile's cutlass_gemm (TMA + wgmma) on W, against the fused gemm_w4a16
# (mma.sync, every weight dequantized once per M tile) and cuBLAS bf16 in one process.  Nothing in the
# launcher changes: the pair is only an example and a bench row until measured (docs/pipelines.md "W4A16
# at large M").
# 1. tests/gpu/test_w4a16.py, the two-kernel part (TEST_W4A16_PART=two): W bit for bit against the once-rounded
#    q s - z (f64), torch's formula, and gemm_w4a16's own dequantization (A = I, shipped and BM128 BN128 tiles);
#    ROUND=0 against torch; crafted ties; C = cutlass_gemm(A, W) against fp64;
# 2. gpu_test_examples on w4a16_dequant.tile alone (ragged sizes against the interpreter);
# 3. bench.py --only w4a16 --quick at M = 64, 128, 256, 512, 1024, 4096 (N = K = 4096) and the Llama prefill
#    shapes 8192x4096x14336 (down projection), 8192x14336x4096 (gate / up): fused BM64 BN128 and BM128 BN128
#    (the default bf16x2 dequantization; at M 64 split-K BM64 BN128 x4 / x8 / x16 too), "dequant BN512 + cutlass_gemm" (ROUND=1, the mechanism; ROUND=0 the
#    nudge off; at M 512 / 1024 also with cutlass_gemm given a 128x128 small-M form), cutlass_gemm alone
#    on W and the dequant alone (TB/s, BN 512 / 256); a table last (~80 s, <= 115 by the limits).
#    If 1 or 2 fails, the numbers say nothing.
#   here:   sh tools/carry.sh build
#   device: run command="sh bench/pending_w4a16big.sh .carry" carry=[".carry"] timeout_s=150
. bench/pending_env.sh
R=$(pwd)
echo "== 1. test_w4a16 (two-kernel part) [$(el) s]"
TEST_W4A16_PART=two TILEC_CACHE_DIR=/tmp/cw4big timeout -k 10 25 python3 tests/gpu/test_w4a16.py --lib $B/libtilec.so --examples $R/examples > $L/test.log 2>&1
echo "test_w4a16 rc $? [$(el) s]: $(grep -c '^ok' $L/test.log) ok lines, $(grep -c 'FAIL' $L/test.log) FAIL lines"
grep -E "FAIL|Traceback|Error" $L/test.log | head -8
tail -1 $L/test.log
echo "== 2. gpu_test_examples w4a16_dequant.tile [$(el) s]"
mkdir -p /tmp/w4big && cp examples/w4a16_dequant.tile /tmp/w4big/
TILEC_CACHE_DIR=/tmp/cw4big timeout -k 10 15 $B/tests/gpu_test_examples /tmp/w4big > $L/examples.log 2>&1
echo "gpu_test_examples rc $? $(tail -1 $L/examples.log) [$(el) s]"
grep FAIL $L/examples.log | head -4
echo "== 3. bench [$(el) s]"
W4A16_SHAPES=64x4096x4096,128x4096x4096,256x4096x4096,512x4096x4096,1024x4096x4096,4096x4096x4096,8192x4096x14336,8192x14336x4096 \
W4A16_ONLY="BM64 BN128,BM128 BN128,dequant" W4A16_SKIP="packed,bf16x2,byteoff,TILEC_,prologue off,nozero,maxnreg,staged,stages2" \
TILEC_CACHE_DIR=/tmp/cw4big timeout -k 10 75 python3 bench/bench.py --lib $B/libtilec.so --root $R --only w4a16 --quick > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -iE "error|Traceback|FAILED" $L/bench.log | head -5
echo "== table: us (x cuBLAS bf16 = cuBLAS us / us, same process); fused = the best gemm_w4a16 (BM64 BN128, BM128 BN128, split-K BM64 BN128 x4/8/16 at M 64);"
echo "   pair = dequant BN512 + cutlass_gemm back to back (ROUND=1; r0 = ROUND=0); gemm = cutlass_gemm alone on W; f1024 = the same with"
echo "   cutlass_gemm's small-M table given a 128x128 form to M 1024; best/fused = the fused us / the better pair's us; dequant alone last"
python3 - $L/bench.log <<'PY'
import re, sys
t, extra, deq = {}, {}, {}
for l in open(sys.argv[1]):
    m = re.match(r"w4a16 (\d+x\d+x\d+) (.*): ([\d.]+) us, cuBLAS bf16 ([\d.]+) us", l)
    if m:
        t.setdefault(m.group(1), {})[m.group(2)] = (float(m.group(3)), float(m.group(4)))
    m = re.match(r"w4a16 (\d+x\d+x\d+)( forms1024)?: dequant ([\d.]+) us \+ cutlass_gemm ([\d.]+) us", l)
    if m:
        extra[(m.group(1), bool(m.group(2)))] = (float(m.group(3)), float(m.group(4)))
    m = re.match(r"w4a16 dequant BN(\d+)( ROUND0)? (\d+x\d+): ([\d.]+) us \(([\d.]+) TB/s\).* in (\d+) of", l)
    if m:
        deq.setdefault(m.group(3), []).append("BN%s%s %s us %s TB/s (%s differ)" % (m.group(1), " r0" if m.group(2) else "",
                                                                                   m.group(4), m.group(5), m.group(6)))
print("%-16s %7s %-25s %-15s %-15s %-15s %-15s %-15s %9s" % ("shape", "cuBLAS", "fused us (x cuB)", "pair", "pair r0",
      "gemm", "pair f1024", "gemm f1024", "best/fused"))
for shape, d in t.items():
    ref = next(iter(d.values()))[1]
    fused = [(v[0], k) for k, v in d.items() if not k.startswith("dequant")]
    fb = min(fused) if fused else None
    pair, r0 = d.get("dequant BN512 + cutlass_gemm"), d.get("dequant BN512 ROUND0 + cutlass_gemm")
    p2 = d.get("dequant BN512 + cutlass_gemm forms1024")
    g, g2 = extra.get((shape, False)), extra.get((shape, True))
    f = lambda v: "%7.1f (%5.3f)" % (v, ref / v) if v else "-"
    best = min([x[0] for x in (pair, p2) if x], default=None)
    print("%-16s %7.1f %-25s %-15s %-15s %-15s %-15s %-15s %9s" % (shape, ref, (f(fb[0]) + " " + fb[1].replace(" ", "")) if fb else "-",
          f(pair and pair[0]), f(r0 and r0[0]), f(g and g[1]), f(p2 and p2[0]), f(g2 and g2[1]),
          "%.2fx" % (fb[0] / best) if fb and best else "-"))
for kn, v in deq.items():
    print("dequant %s: %s" % (kn, "; ".join(v)))
PY
echo "done [$(el) s]"
