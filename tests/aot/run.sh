#!/bin/sh
# tests/aot/run.sh: the AOT launchers against the JIT, without a GPU.
#   run.sh TILEC_CLI FAKE_LIBCUDA JIT_REF EXAMPLES_DIR WORK_DIR CC
# 1. tilec --emit=c for rmsnorm.tile, gemm.tile (TMA kernel) and attn.tile;
# 2. consumer.c built from the generated files and cases.h alone (no libtilec,
#    no LLVM: its ldd must not name libtilec);
# 3. the consumer and jit_ref (libtilec's JIT) run the same cases against the
#    fake driver (fake_libcuda.c via TILEC_LIBCUDA), each launch recorded:
#    statuses and every launch (entry, grid, block, smem, stream, parameter
#    bytes, tensor maps) must be identical, and so must a false require's diagnostic.
set -eu
CLI=$1 FAKE=$2 JIT=$3 EX=$4 WORK=$5 CC=$6
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$WORK"; mkdir -p "$WORK"
for k in rmsnorm gemm attn; do
  "$CLI" "$EX/$k.tile" --arch sm_90a --emit=c -o "$WORK/aot_$k" 2>"$WORK/emit_$k.log" || { cat "$WORK/emit_$k.log"; exit 1; }
done
"$CC" -std=c11 -O1 -Wall -Wextra -Werror -I"$WORK" -I"$HERE" "$HERE/consumer.c" "$WORK/aot_rmsnorm.c" "$WORK/aot_gemm.c" \
  "$WORK/aot_attn.c" -o "$WORK/consumer" -ldl -lpthread
if ldd "$WORK/consumer" | grep -Eq "libtilec|LLVM"; then echo "FAIL: the consumer links libtilec or LLVM"; ldd "$WORK/consumer"; exit 1; fi
export TILEC_LIBCUDA="$FAKE" TILEC_CACHE_DIR="$WORK/cache"
FAKE_CUDA_LOG="$WORK/aot.launches" "$WORK/consumer" >"$WORK/aot.status" 2>"$WORK/aot.err"
# the JIT without the small-M forms (docs/small_m.md): an AOT launcher runs the kernel as compiled at
# every M, so the JIT's launch of gemm at M <= 256 would be a form's; and with the TMA kernels'
# fallback inline (TILEC_TMA_FORM=0), as an AOT launcher embeds them (the JIT's default TMA forms
# run a second kernel for tensors a map cannot take: docs/codegen.md "Round 9"), and without the pitch
# repack (the JIT launcher's copy of a read-only operand no map can take; an AOT launcher makes none)
TILEC_SMALL_M=0 TILEC_TMA_FORM=0 TILEC_PITCH_REPACK=0 FAKE_CUDA_LOG="$WORK/jit.launches" "$JIT" "$EX" >"$WORK/jit.status" 2>"$WORK/jit.err"
fail=0
# (the embedded PTX is a list of byte values: "tilec: TMA form", "cp.async.bulk.tensor")
for k in gemm attn; do
  tr -d ' \n' <"$WORK/aot_$k.c" >"$WORK/aot_$k.bytes"
  if grep -q "116,105,108,101,99,58,32,84,77,65,32,102,111,114,109" "$WORK/aot_$k.bytes"; then
    echo "FAIL: aot_$k.c embeds a TMA form"; fail=1
  fi
  grep -q "99,112,46,97,115,121,110,99,46,98,117,108,107,46,116,101,110,115,111,114" "$WORK/aot_$k.bytes" ||
    { echo "FAIL: aot_$k.c has no TMA kernel"; fail=1; }
done
cmp -s "$WORK/aot.status" "$WORK/jit.status" || { echo "FAIL: statuses differ"; diff "$WORK/aot.status" "$WORK/jit.status" | head; fail=1; }
cmp -s "$WORK/aot.launches" "$WORK/jit.launches" || { echo "FAIL: launches differ"; diff "$WORK/aot.launches" "$WORK/jit.launches" | head -6 | cut -c1-400; fail=1; }
n=$(wc -l <"$WORK/aot.launches"); e=$(grep -vc " 0$" "$WORK/aot.status" || true)
# the cases must launch (not all refused) and refuse exactly the wrong ones
[ "$n" -ge 60 ] || { echo "FAIL: only $n launches recorded"; fail=1; }
[ "$e" -ge 6 ] || { echo "FAIL: only $e refused cases"; fail=1; }
grep -q "K = " "$WORK/aot.err" || { echo "FAIL: no shape-symbol message"; fail=1; }
grep -q "not 2-byte aligned" "$WORK/aot.err" || { echo "FAIL: no alignment message"; fail=1; }
grep -q "expected the constant 64" "$WORK/aot.err" || { echo "FAIL: no constant-dim message"; fail=1; }
grep -q "^null-strides 0$" "$WORK/aot.status" || { echo "FAIL: NULL strides"; fail=1; }
# a false require (rmsnorm's C <= BC, docs/language.md "Launch-time checks"): the same diagnostic from both
grep -q "rmsnorm.tile:[0-9]*:5: error: require failed in kernel 'rmsnorm': C <= BC (C = [0-9]*, BC = 4096): \"one tile" \
  "$WORK/aot.err" || { echo "FAIL: no require message"; fail=1; }
grep -A2 "require failed" "$WORK/aot.err" >"$WORK/aot.require"
grep -A2 "require failed" "$WORK/jit.err" >"$WORK/jit.require"
cmp -s "$WORK/aot.require" "$WORK/jit.require" || { echo "FAIL: require messages differ"; diff "$WORK/aot.require" "$WORK/jit.require" | head; fail=1; }
[ $fail = 0 ] && echo "PASS: $n launches identical to the JIT's, $e cases refused by both"
exit $fail
