#!/bin/sh
# bench/pending_w4a16e.sh: the call the nineteenth session's branch w4a16e owes (built without a device):
# examples/gemm_w4a16_packed.tile (the int4 words repacked into the mma fragment order, the halves form of
# the bf16x2 dequantization, TILEC_DEQUANT_BF16X2=1 with TILEC_DEQUANT_HALVES=0 off; split-K merged by the
# last program: bf16 C, no zeroing kernel) beside gemm_w4a16.tile's split-K and cuBLAS bf16, timed two
# ways: one timed launch (do_bench, the old rows) and a CUDA graph of launches on rotating weight copies
# (W4A16_GRAPH=1: kernels back to back, weights from HBM).
# 1. tests/gpu/test_w4a16_packed.py (repack bit for bit; unsplit and merge vs fp64 and the interpreter;
#    forms halves / shift / f32 / off);
# 2. gpu_test_examples on gemm_w4a16_packed.tile alone (ragged sizes vs the interpreter), default and
#    TILEC_DEQUANT_BF16X2=1 TILEC_FRAG_SHARED_LOAD=1;
# 3. bench.py --only w4a16 --quick at 1x4096x4096, 16x4096x4096, 16x14336x4096, 16x4096x14336: the old
#    split-K (f32 and bf16x2) and the packed kernels (unsplit, merge x4 / x8 / x16, merge_sz x4 / x8:
#    (s, z) one word, TILEC_FRAG_SHARED_LOAD=1 on, "staged" off), cuBLAS bf16 in the same process; a
#    table last (~110 s in all, <= 200).  If 1 or 2 fails, the numbers say nothing: the forms stay opt-in.
#   here:   tools/carry.sh build
#   device: run command="sh bench/pending_w4a16e.sh .carry" carry=[".carry"] timeout_s=240
. bench/pending_env.sh
R=$(pwd)
echo "== 1. test_w4a16_packed [$(el) s]"
TILEC_CACHE_DIR=/tmp/cw4e timeout 60 python3 tests/gpu/test_w4a16_packed.py --lib $B/libtilec.so --examples $R/examples > $L/test.log 2>&1
echo "test_w4a16_packed rc $? [$(el) s]: $(grep -c '^ok' $L/test.log) ok lines, $(grep -c 'FAIL' $L/test.log) FAIL lines"
grep -E "FAIL|Traceback|Error" $L/test.log | head -8
tail -1 $L/test.log
echo "== 2. gpu_test_examples gemm_w4a16_packed.tile [$(el) s]"
mkdir -p /tmp/w4ex && cp examples/gemm_w4a16_packed.tile /tmp/w4ex/
i=0
for e in "TILEC_DEQUANT_BF16X2=0" "TILEC_DEQUANT_BF16X2=1 TILEC_FRAG_SHARED_LOAD=1"; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  env $e TILEC_CACHE_DIR=/tmp/cw4x timeout 25 $B/tests/gpu_test_examples /tmp/w4ex > $L/examples_$i.log 2>&1
  echo "$e: rc $? $(tail -1 $L/examples_$i.log) [$(el) s]"
  grep FAIL $L/examples_$i.log | head -4
done
echo "== 3. bench [$(el) s]"
W4A16_GRAPH=1 W4A16_SHAPES=1x4096x4096,16x4096x4096,16x14336x4096,16x4096x14336 \
W4A16_ONLY="splitk BM16 BN128 SPLIT8,packed" \
W4A16_SKIP="TILEC_,nozero,maxnreg,prologue off,stages2,byteoff,packed BM16 BN64,packed BM16 BN128 shift,packed BM16 BN128 f32,SPLIT4 shift,SPLIT4 f32,SPLIT4 staged,SPLIT16 shift,SPLIT16 f32" \
TILEC_CACHE_DIR=/tmp/cw4b timeout 95 python3 bench/bench.py --lib $B/libtilec.so --root $R --only w4a16 --quick > $L/bench.log 2>&1
echo "bench rc $? [$(el) s]"
grep -iE "error|Traceback" $L/bench.log | head -5
grep -E "in a graph of" $L/bench.log
echo "== table: us (x cuBLAS bf16 = cuBLAS us / tilec us, same process); 'launch' = one timed launch (do_bench, the old method: tilec's launcher and the split-K zeroing kernel inside), 'graph' = a CUDA graph of launches on rotating weight copies, cuBLAS timed the same way"
python3 - $L/bench.log <<'PY'
import re, sys
t = {}
for l in open(sys.argv[1]):
    m = re.match(r"w4a16(graph)? (\d+x\d+x\d+) (.*): ([\d.]+) us, cuBLAS bf16 ([\d.]+) us", l)
    if not m: continue
    t.setdefault((m.group(2), m.group(3)), {})["graph" if m.group(1) else "launch"] = (float(m.group(4)), float(m.group(5)))
print("%-15s %-36s %18s %18s" % ("shape", "variant", "launch us (x cuB)", "graph us (x cuB)"))
f = lambda v: ("%9.1f (%5.3f)" % (v[0], v[1] / v[0])) if v else "%18s" % "-"
for (shape, name), d in t.items():
    print("%-15s %-36s %s %s" % (shape, name, f(d.get("launch")), f(d.get("graph"))))
PY
echo "done [$(el) s]"
