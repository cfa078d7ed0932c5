#!/bin/sh
# bench/pending_w4a16d.sh: the call W4A16's bf16x2 dequantization owes (fifteenth session, branch
# w4a16d; built after the session's device was withdrawn, so opt-in: TILEC_DEQUANT_BF16X2=1, and
# within it the byte form, TILEC_DEQUANT_BYTE=0 off).
# 1. tests/gpu/test_w4a16.py (staged, frag = bf16x2 byte form, frag-shift, frag-f32, off forms against
#    fp64 and the interpreter, split-K too);
# 2. bench.py --only w4a16 --quick: split-K BN128 x4/x8/x16 at M = 1 / 16 (N = K = 4096, and the Llama
#    shapes 16x14336x4096, 16x4096x14336) and BM128 BN128 at 4096^3, each in the three forms, cuBLAS
#    bf16 in the same process; a table last (<= 90 s).  If the test fails, the form stays opt-in.
#   here:   tools/carry.sh build
#   device: run command="sh bench/pending_w4a16d.sh .carry" carry=[".carry"] timeout_s=150
. bench/pending_env.sh
R=$(pwd)
echo "== 1. test_w4a16 [$(el) s]"
TILEC_CACHE_DIR=/tmp/cw4t timeout -k 10 35 python3 tests/gpu/test_w4a16.py --lib $B/libtilec.so --examples $R/examples > $L/test.log 2>&1
echo "test_w4a16 rc $? [$(el) s]: $(grep -c '^ok' $L/test.log) ok lines, $(grep -c 'FAIL' $L/test.log) FAIL lines"
grep -E "FAIL" $L/test.log | head -8
tail -1 $L/test.log
echo "== 2. bench [$(el) s]"
W4A16_SHAPES=1x4096x4096,16x4096x4096,16x14336x4096,16x4096x14336,4096x4096x4096 \
W4A16_ONLY="BN128 SPLIT,BM128 BN128" W4A16_SKIP="TILEC_,nozero,maxnreg,staged,prologue off,stages2" \
TILEC_CACHE_DIR=/tmp/cw4b timeout -k 10 52 python3 bench/bench.py --lib $B/libtilec.so --root $R --only w4a16 --quick > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -iE "error|Traceback" $L/bench.log | head -5
echo "== table: us (x cuBLAS bf16 = cuBLAS us / tilec us, same process); f32 = the default form, bf16x2 = TILEC_DEQUANT_BF16X2=1 (byte form), byteoff = bf16x2 with shifts; f32/bf16x2 = speed-up"
python3 - $L/bench.log <<'PY'
import re, sys
t = {}
for l in open(sys.argv[1]):
    m = re.match(r"w4a16 (\S+) (.*): ([\d.]+) us, cuBLAS bf16 ([\d.]+) us", l)
    if not m: continue
    shape, name, us, ref = m.group(1), m.group(2), float(m.group(3)), float(m.group(4))
    form = "f32"
    for tag in ("byteoff", "bf16x2"):
        if name.endswith(" " + tag): form, name = tag, name[:-len(tag) - 1]
    t.setdefault((shape, name), {})[form] = (us, ref)
print("%-15s %-24s %17s %17s %17s %8s" % ("shape", "variant", "bf16x2 us (x cuB)", "byteoff us (x cuB)", "f32 us (x cuB)", "f32/bf16x2"))
f = lambda v: ("%9.1f (%5.3f)" % (v[0], v[1] / v[0])) if v else "%17s" % "-"
for (shape, name), d in t.items():
    on, off = d.get("bf16x2"), d.get("f32")
    print("%-15s %-24s %s %s %s %8s" % (shape, name, f(on), f(d.get("byteoff")), f(off), "%.3f" % (off[0] / on[0]) if on and off else "-"))
PY
echo "done [$(el) s]"
