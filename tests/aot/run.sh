#!/bin/sh
# tests/aot/run.sh: the AOT launchers against the JIT, without a GPU.
#   run.sh TILEC_CLI FAKE_LIBCUDA JIT_REF EXAMPLES_DIR WORK_DIR CC
# 1. tilec --emit=c for rmsnorm.tile, gemm.tile (TMA kernel) and attn.tile: each TMA form with
#    its no-TMA image (docs/aot.md "Two images"), and again with --tma-fallback=inline (one
#    self-contained image a kernel, the opt-out);
# 2. consumer.c built from the generated files and cases.h alone (no libtilec,
#    no LLVM: its ldd must not name libtilec);
# 3. the consumer and jit_ref (libtilec's JIT) run the same cases against the
#    fake driver (fake_libcuda.c via TILEC_LIBCUDA), each launch recorded:
#    statuses and every launch (entry, grid, block, smem, stream, parameter
#    bytes, tensor maps) must be identical: the two-image launchers against the JIT's TMA
#    forms (a tensor no map can take: the no-TMA form, both sides), the inline ones against
#    the JIT at TILEC_TMA_FORM=0; a false require's diagnostic the same from both;
# 4. forms.c: which image a launch loads and runs (the fake's module queries).
set -eu
CLI=$1 FAKE=$2 JIT=$3 EX=$4 WORK=$5 CC=$6
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$WORK"; mkdir -p "$WORK"
mkdir -p "$WORK/inline"
for k in rmsnorm gemm attn; do
  "$CLI" "$EX/$k.tile" --arch sm_90a --emit=c -o "$WORK/aot_$k" 2>"$WORK/emit_$k.log" || { cat "$WORK/emit_$k.log"; exit 1; }
  "$CLI" "$EX/$k.tile" --arch sm_90a --tma-fallback=inline --emit=c -o "$WORK/inline/aot_$k" 2>"$WORK/emit_$k.log" ||
    { cat "$WORK/emit_$k.log"; exit 1; }
done
for d in "$WORK" "$WORK/inline"; do
  "$CC" -std=c11 -O1 -Wall -Wextra -Werror -I"$d" -I"$HERE" "$HERE/consumer.c" "$d/aot_rmsnorm.c" "$d/aot_gemm.c" \
    "$d/aot_attn.c" -o "$d/consumer" -ldl -lpthread
done
"$CC" -std=c11 -O1 -Wall -Wextra -Werror -I"$WORK" "$HERE/forms.c" "$WORK/aot_gemm.c" -o "$WORK/forms" -ldl -lpthread
if ldd "$WORK/consumer" | grep -Eq "libtilec|LLVM"; then echo "FAIL: the consumer links libtilec or LLVM"; ldd "$WORK/consumer"; exit 1; fi
export TILEC_LIBCUDA="$FAKE" TILEC_CACHE_DIR="$WORK/cache"
for d in "$WORK" "$WORK/inline"; do
  FAKE_CUDA_LOG="$d/aot.launches" "$d/consumer" >"$d/aot.status" 2>"$d/aot.err"
done
# the JIT without the small-M forms (docs/small_m.md): an AOT launcher runs the kernel as compiled at
# every M, so the JIT's launch of gemm at M <= 256 would be a form's; without the pitch repack (the
# JIT launcher's copy of a read-only operand no map can take; an AOT launcher makes none); at its
# default TMA forms (a tensor no map can take: the no-TMA form) beside the two-image launchers, and
# with the fallback inline (TILEC_TMA_FORM=0) beside the inline ones
TILEC_SMALL_M=0 TILEC_PITCH_REPACK=0 FAKE_CUDA_LOG="$WORK/jit.launches" "$JIT" "$EX" >"$WORK/jit.status" 2>"$WORK/jit.err"
TILEC_SMALL_M=0 TILEC_TMA_FORM=0 TILEC_PITCH_REPACK=0 FAKE_CUDA_LOG="$WORK/inline/jit.launches" "$JIT" "$EX" \
  >"$WORK/inline/jit.status" 2>"$WORK/inline/jit.err"
fail=0
# (the embedded PTX is a list of byte values: "tilec: TMA form", "cp.async.bulk.tensor", "#define aot_K_NNOTMA 1")
mark="116,105,108,101,99,58,32,84,77,65,32,102,111,114,109"
for k in gemm attn; do
  for d in "$WORK" "$WORK/inline"; do
    tr -d ' \n' <"$d/aot_$k.c" >"$d/aot_$k.bytes"
    grep -q "99,112,46,97,115,121,110,99,46,98,117,108,107,46,116,101,110,115,111,114" "$d/aot_$k.bytes" ||
      { echo "FAIL: $d/aot_$k.c has no TMA kernel"; fail=1; }
  done
  grep -q "$mark" "$WORK/inline/aot_$k.bytes" && { echo "FAIL: inline/aot_$k.c (--tma-fallback=inline) embeds a TMA form"; fail=1; }
  grep -q "$mark" "$WORK/aot_$k.bytes" || { echo "FAIL: aot_$k.c embeds no TMA form"; fail=1; }
  grep -q "^#define aot_${k}_NNOTMA 1$" "$WORK/aot_$k.c" || { echo "FAIL: aot_$k.c has no no-TMA image"; fail=1; }
  grep -q "^#define aot_${k}_NNOTMA 0$" "$WORK/inline/aot_$k.c" || { echo "FAIL: inline/aot_$k.c has a no-TMA image"; fail=1; }
done
for d in "$WORK" "$WORK/inline"; do
  cmp -s "$d/aot.status" "$d/jit.status" || { echo "FAIL: $d: statuses differ"; diff "$d/aot.status" "$d/jit.status" | head; fail=1; }
  cmp -s "$d/aot.launches" "$d/jit.launches" ||
    { echo "FAIL: $d: launches differ"; diff "$d/aot.launches" "$d/jit.launches" | head -6 | cut -c1-400; fail=1; }
done
# both forms of both TMA kernels ran (the no-TMA forms have no tensor-map parameters: fewer ':')
for e in cutlass_gemm cutlass_attn_fwd; do
  np=$(grep "^$e " "$WORK/aot.launches" | awk '{print gsub(/:/, ":")}' | sort -u | wc -l)
  [ "$np" = 2 ] || { echo "FAIL: $e launched $np parameter layouts (the TMA form's and the no-TMA form's: 2)"; fail=1; }
done
"$WORK/forms" >"$WORK/forms.out" 2>&1 || { cat "$WORK/forms.out"; fail=1; }
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
for d in "$WORK" "$WORK/inline"; do
  grep -A2 "require failed" "$d/aot.err" >"$d/aot.require"
  grep -A2 "require failed" "$d/jit.err" >"$d/jit.require"
  cmp -s "$d/aot.require" "$d/jit.require" || { echo "FAIL: $d: require messages differ"; diff "$d/aot.require" "$d/jit.require" | head; fail=1; }
done
# 5. text the generated C carries verbatim compiles under -std=c11: a require message with "??/" (a trigraph there:
#    it was emitted unescaped) and a source path with "*/" (it closed the header's first comment)
mkdir -p "$WORK/odd*/"
printf '%s\n' 'kernel k(X: tensor<f32>[N], Y: tensor<f32>[N]) tiles(B = 128) grid(cdiv(N, B)) {' \
  '    require(N > 0, "N??/ must be > 0??");' '    i = program_id(0) * B;' \
  '    store(Y[i : i + B], load(X[i : i + B]) * 2.0);' '}' >"$WORK/odd*/k.tile"
"$CLI" "$WORK/odd*/k.tile" --arch sm_90a --emit=c -o "$WORK/aot_odd" 2>"$WORK/emit_odd.log" || { cat "$WORK/emit_odd.log"; exit 1; }
"$CC" -std=c11 -Wall -Wextra -Werror -c "$WORK/aot_odd.c" -o "$WORK/aot_odd.o" 2>"$WORK/cc_odd.log" ||
  { echo "FAIL: the generated C of an odd path / require message does not compile"; head -5 "$WORK/cc_odd.log"; fail=1; }
[ $fail = 0 ] && echo "PASS: $n launches identical to the JIT's (both images, and inline), $e cases refused by both; $(tail -1 "$WORK/forms.out")"
exit $fail
