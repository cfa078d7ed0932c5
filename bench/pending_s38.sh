# bench/pending_s38.sh (thirty-eighth session): a GEMM's A computed in the loop (an operand prologue: a cast of an f32
# tile, a per-column scale, an RMSNorm's rstd and weight, a sum of two tiles) computed straight in its fragment
# layout -- wgmma with A from registers, the prologue's loads through the TMA ring in 128-byte-swizzled atoms -- where
# it ran mma.sync with A staged through shared memory each k-step (TILEC_PROLOGUE_A_FRAG=0).  One call, ~3-4 minutes,
# any sm_90 card:
#   1. tests/gpu/prologue_a.sh (7 kernels x on / off / sm_80 code against the interpreter, ragged sizes), the user
#      kernel a user found the gap with (tests/user_kernels/cutlass_computed_a.tile), compute-sanitizer memcheck and
#      racecheck on two of them;
#   2. bench/prologue_a_ab.py: on / off, cuBLAS's plain GEMM on the A computed beforehand, torch eager and
#      torch.compile of the expression, interleaved rounds, at 4096^3 and 8192x4096x14336.
# Call 1 (H100) found the register race (10 of 36 FAIL; fixed: the group waited for in its own k-step).  Predicted
# (before any run): on / off 1.2-1.6x (mma.sync's staging: stores, a CTA barrier and ldmatrix each k-step,
# the ring cp.async, against wgmma reading A from registers and B by descriptor off a TMA ring); x cuBLAS's plain GEMM
# 0.80-0.92 on (the plain GEMM is ~0.99x cuBLAS; the prologue's 16 ld.shared + conversions a thread a k-step on the
# consumers' path, and no producer warpgroup: route_pipeline keeps ws off with a prologue); x eager >= 1.3 (eager is
# an elementwise kernel then cuBLAS).  Rule (written before): the A-fragment rule becomes the default if every run of
# 1. passes and on / off >= 1.05 at every case with no case < 0.98 (opt-in, TILEC_PROLOGUE_A_FRAG=1, until then).
# After call 1's race fix (the group waited for in its own k-step) the prediction for on / off is 1.4-2.2x and on x the
# plain GEMM 0.45-0.65 (the tensor pipe idles while a k-step's A is read and converted); stages=2 (two CTAs an SM at
# 128x128) 1.05-1.3x on.
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_s38.sh .carry" carry=[".carry"] timeout_s=480
. bench/pending_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
PROLOGUE_A_FILES="tests/prologue_a/*.tile" TILEC_CACHE_DIR=/tmp/c38 timeout -k 10 200 sh tests/gpu/prologue_a.sh $B > $L/pa.log 2>&1; echo "prologue_a.sh rc $?: $(tail -1 $L/pa.log) [$(el) s]"
grep -A4 FAIL $L/pa.log | head -20
for cfg in 1 0; do
  echo "cutlass_computed_a frag=$cfg: $(TILEC_PROLOGUE_A_FRAG=$cfg TILEC_CACHE_DIR=/tmp/c38u timeout 90 $B/tilec run tests/user_kernels/cutlass_computed_a.tile --kernel cutlass_w2 --device --size M=300 --size K=700 --size N=260 2>&1 | grep -E 'PASS|FAIL|rror' | tail -2 | tr '\n' ' ' | cut -c1-200)"
done
for tool in memcheck racecheck; do
  echo "$tool cast_f32: $(TILEC_PROLOGUE_A_FRAG=1 TILEC_CACHE_DIR=/tmp/c38s timeout 120 compute-sanitizer --tool $tool $B/tilec run tests/prologue_a/cast_f32.tile --kernel cutlass_cast_f32 --device --size M=200 --size K=300 --size N=260 2>&1 | grep -E 'PASS|FAIL|ERROR SUMMARY|RACECHECK SUMMARY|rror' | tail -3 | tr '\n' ' ' | cut -c1-220)"
  echo "$tool col_scale_nt: $(TILEC_PROLOGUE_A_FRAG=1 TILEC_CACHE_DIR=/tmp/c38s timeout 120 compute-sanitizer --tool $tool $B/tilec run tests/prologue_a/col_scale.tile --kernel cutlass_col_scale_nt --device --size M=200 --size K=300 --size N=260 2>&1 | grep -E 'PASS|FAIL|ERROR SUMMARY|RACECHECK SUMMARY|rror' | tail -3 | tr '\n' ' ' | cut -c1-220)"
done
echo "[$(el) s]"
for k in lngemm cutlass_lngemm; do for a in "" --arch=sm_80; do echo "multi_loop/lngemm.tile $k $a: $(TILEC_CACHE_DIR=/tmp/c38u timeout 90 $B/tilec run tests/multi_loop/lngemm.tile --kernel $k $a --device --size M=200 --size N=300 --size K=256 2>&1 | grep -E "PASS|FAIL|rror" | tail -2 | tr "\n" " " | cut -c1-200)"; done; done
TILEC_CACHE_DIR=/tmp/c38b timeout -k 10 ${PA_BENCH_S:-240} python3 bench/prologue_a_ab.py --lib $B/libtilec.so --rounds 5 ${PA_ARGS:-} > $L/pab.log 2>&1
echo "bench rc $? [$(el) s]"; grep -E "^\||Error|error" $L/pab.log | cut -c1-220
