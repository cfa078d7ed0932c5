/* emit_elementwise.c: requires operands in the result's layout (layout_assign);
 * lowers elementwise ops register by register, each op computed once per
 * canonical register.  f16/bf16 arithmetic is done in f32 and rounded back
 * after every op (what the interpreter does).  Math: exp2 = ex2.approx.ftz.f32
 * (~2 ulp; results below 2^-126 flush to 0), exp(x) = ex2(x*log2 e),
 * log(x) = lg2.approx(x)*ln 2, rsqrt = rsqrt.approx, sin/cos = sin/cos.approx after a Cody-Waite reduction to
 * [-pi, pi], tanh and sigmoid through ex2 and rcp.approx.  Integer division by 0 gives 0,
 * shifts past the width give 0 (or -1), as in the interpreter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "code_env.h"
#include "narrow_store.h"

static bool is_f8(tl_dtype t) { return t == TL_F8E4M3 || t == TL_F8E5M2; }
static bool is_fp(tl_dtype t) { return tl_dtype_is_float(t) && !is_f8(t); }
static bool is_unsigned(tl_dtype t) { return t == TL_U8 || t == TL_I1; }

LLVMValueRef cg_to_mem(cg *g, LLVMValueRef v, tl_dtype dt) {
  return dt == TL_I1 ? LLVMBuildZExt(g->B, v, g->i8, "") : v;
}

LLVMValueRef cg_from_mem(cg *g, LLVMValueRef v, tl_dtype dt) {
  return dt == TL_I1 ? LLVMBuildICmp(g->B, LLVMIntNE, v, LLVMConstInt(g->i8, 0, 0), "") : v;
}

static LLVMValueRef f32c(cg *g, double x) { return LLVMConstReal(g->f32, x); }

static LLVMValueRef fcall1(cg *g, const char *name, LLVMValueRef x) {
  return cg_intrinsic(g, name, g->f32, &x, 1);
}

static LLVMValueRef f8_to_f32(cg *g, LLVMValueRef v, tl_dtype from) {
  if (g->sm < 89) cg_unsupported(g, "conversion from %s needs sm_89 or newer", tl_dtype_name(from));
  LLVMValueRef w = LLVMBuildZExt(g->B, v, g->i16, "");
  const char *text = from == TL_F8E4M3 ? "cvt.rn.f16x2.e4m3x2 $0, $1;" : "cvt.rn.f16x2.e5m2x2 $0, $1;";
  LLVMValueRef h2 = cg_asm(g, g->i32, text, "=r,h", &w, 1, false);
  LLVMValueRef h = LLVMBuildBitCast(g->B, LLVMBuildTrunc(g->B, h2, g->i16, ""), g->f16, "");
  return LLVMBuildFPExt(g->B, h, g->f32, "");
}

static LLVMValueRef f32_to_f8(cg *g, LLVMValueRef x, tl_dtype to) {
  if (g->sm < 89) cg_unsupported(g, "conversion to %s needs sm_89 or newer", tl_dtype_name(to));
  LLVMValueRef args[2] = {f32c(g, 0.0), x}; /* low byte of the pair: x */
  const char *text = to == TL_F8E4M3 ? "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;"
                                     : "cvt.rn.satfinite.e5m2x2.f32 $0, $1, $2;";
  LLVMValueRef p = cg_asm(g, g->i16, text, "=h,f,f", args, 2, false);
  return LLVMBuildTrunc(g->B, p, g->i8, "");
}

bool cg_bf16_words(cg *g) {
  const char *env = tl_code_env("TILEC_BF16_WORDS"); /* measuring only: 0 = a select and a widening an element */
  return g->f->access_split && !(env && env[0] == '0');
}

/* A bf16 element unpacked from a loaded 32-bit word (emit_memory.c: element e of the word
 * bitcast to <2 x bfloat>) widened to f32 straight from the word: its bits are the word
 * shifted or masked.  Row kernels only (f->access_split): the word, not the two 16-bit halves,
 * then stays live until the cast (layernorm over 4096 columns: its weights' 32 halves a thread
 * each took a register while the row was normalized). */
static LLVMValueRef bf16_from_word(cg *g, LLVMValueRef v) {
  if (!cg_bf16_words(g) || !LLVMIsAExtractElementInst(v)) return NULL;
  LLVMValueRef vec = LLVMGetOperand(v, 0), idx = LLVMGetOperand(v, 1);
  if (!LLVMIsABitCastInst(vec) || !LLVMIsAConstantInt(idx)) return NULL;
  LLVMValueRef w = LLVMGetOperand(vec, 0);
  LLVMTypeRef vt = LLVMTypeOf(vec);
  if (LLVMTypeOf(w) != g->i32 || LLVMGetTypeKind(vt) != LLVMVectorTypeKind || LLVMGetVectorSize(vt) != 2 ||
      LLVMGetElementType(vt) != g->bf16)
    return NULL;
  LLVMValueRef bits = LLVMConstIntGetZExtValue(idx) == 0 ? LLVMBuildShl(g->B, w, LLVMConstInt(g->i32, 16, 0), "")
                                                         : LLVMBuildAnd(g->B, w, LLVMConstInt(g->i32, 0xFFFF0000u, 0), "");
  return LLVMBuildBitCast(g->B, bits, g->f32, "");
}

/* Any float dtype -> f32 register (exact). */
static LLVMValueRef to_f32(cg *g, LLVMValueRef v, tl_dtype from) {
  if (from == TL_F32) return v;
  if (from == TL_BF16) {
    LLVMValueRef x = bf16_from_word(g, v);
    if (x) return x;
    /* a row kernel's other bf16 values (a loop-carried chunk: LLVM turns its phis into word
     * phis after codegen) widened as integers, the bits shifted up, so that LLVM folds the
     * half's extraction into the shift or a mask of its word (one instruction, not two) */
    if (cg_bf16_words(g)) {
      LLVMValueRef bits = LLVMBuildZExt(g->B, LLVMBuildBitCast(g->B, v, g->i16, ""), g->i32, "");
      return LLVMBuildBitCast(g->B, LLVMBuildShl(g->B, bits, LLVMConstInt(g->i32, 16, 0), ""), g->f32, "");
    }
  }
  if (is_f8(from)) return f8_to_f32(g, v, from);
  return LLVMBuildFPExt(g->B, v, g->f32, "");
}

/* f32 -> float dtype, round to nearest even (f8: satfinite). */
static LLVMValueRef from_f32(cg *g, LLVMValueRef v, tl_dtype to) {
  if (to == TL_F32) return v;
  if (is_f8(to)) return f32_to_f8(g, v, to);
  return LLVMBuildFPTrunc(g->B, v, cg_reg_type(g, to), "");
}

/* i32 register v is `x & c` with 0 <= c < 2^23 (a nibble or byte unpacked
 * from packed weights: W4A16's `(words >> s) & 15`). */
static bool small_nonneg(LLVMValueRef v) {
  if (LLVMTypeOf(v) != LLVMInt32TypeInContext(LLVMGetTypeContext(LLVMTypeOf(v))) || !LLVMIsAInstruction(v) ||
      LLVMGetInstructionOpcode(v) != LLVMAnd)
    return false;
  for (unsigned i = 0; i < 2; i++) {
    LLVMValueRef c = LLVMGetOperand(v, i);
    if (LLVMIsAConstantInt(c) && LLVMConstIntGetSExtValue(c) >= 0 && LLVMConstIntGetSExtValue(c) < (1 << 23)) return true;
  }
  return false;
}

/* f32 of an integer 0 <= v < 2^23 without the conversion unit (I2F runs at a
 * quarter of the FP32 rate on sm_90, and W4A16 converts every weight): the
 * bits 0x4B000000 | v are the float 2^23 + v exactly (v fills the mantissa),
 * so one OR (which ptxas merges with v's AND into a LOP3) and one exact FADD
 * give the value sitofp gives. */
static LLVMValueRef magic_u23_to_f32(cg *g, LLVMValueRef v) {
  LLVMValueRef bits = LLVMBuildOr(g->B, v, cg_i32(g, 0x4B000000), "");
  return LLVMBuildFSub(g->B, LLVMBuildBitCast(g->B, bits, g->f32, ""), f32c(g, 8388608.0), "");
}

/* TILEC_I2F=magic turns the form above on (in the kernel cache key).  Opt-in: on the H200
 * (seventh session) W4A16 ran at the same speed with it (-5 % .. +3 %, noise): the kernel is
 * bound by its K step's serial chain and barrier with one warp per scheduler, not by the
 * conversion unit's rate (bench/RESULTS.md, docs/pipelines.md "Operand prologues"). */
static bool i2f_magic(void) {
  const char *e = tl_code_env("TILEC_I2F");
  return e && !strcmp(e, "magic");
}

LLVMValueRef cg_cast(cg *g, LLVMValueRef v, tl_dtype from, tl_dtype to) {
  if (from == to) return v;
  LLVMTypeRef tt = cg_reg_type(g, to);
  bool ff = tl_dtype_is_float(from), tf = tl_dtype_is_float(to);
  if (ff && tf) {
    if (from == TL_F16 && to == TL_F32) return LLVMBuildFPExt(g->B, v, tt, "");
    if (from == TL_F32 && (to == TL_F16 || to == TL_BF16)) return LLVMBuildFPTrunc(g->B, v, tt, "");
    return from_f32(g, to_f32(g, v, from), to);
  }
  if (ff) { /* float -> int: truncate, saturate, NaN -> 0; -> i1 is x != 0 */
    LLVMValueRef x = to_f32(g, v, from);
    if (to == TL_I1) return LLVMBuildFCmp(g->B, LLVMRealONE, x, f32c(g, 0.0), "");
    char name[64];
    snprintf(name, sizeof name, "llvm.%s.sat.i%d.f32", is_unsigned(to) ? "fptoui" : "fptosi",
             tl_dtype_bits(to));
    return cg_intrinsic(g, name, tt, &x, 1);
  }
  if (tf) { /* int -> float, via f32 unless the target is f32/f16 */
    LLVMTypeRef mid = to == TL_F16 ? g->f16 : g->f32;
    LLVMValueRef x = mid == g->f32 && small_nonneg(v) && i2f_magic() ? magic_u23_to_f32(g, v)
                     : is_unsigned(from)               ? LLVMBuildUIToFP(g->B, v, mid, "")
                                                       : LLVMBuildSIToFP(g->B, v, mid, "");
    return to == TL_F16 ? x : from_f32(g, x, to);
  }
  /* int -> int */
  if (to == TL_I1) return LLVMBuildICmp(g->B, LLVMIntNE, v, LLVMConstInt(LLVMTypeOf(v), 0, 0), "");
  int fb = tl_dtype_bits(from), tb = tl_dtype_bits(to);
  if (fb == tb) return v;
  if (fb > tb) return LLVMBuildTrunc(g->B, v, tt, "");
  return is_unsigned(from) ? LLVMBuildZExt(g->B, v, tt, "") : LLVMBuildSExt(g->B, v, tt, "");
}

/* Significant bits an f32 register v can need, when it is known to be an
 * integer 0 <= v < 2^p (sitofp / uitofp of `x & c`, or the magic-number form
 * above) or a widened bf16 (8) / f16 (11); 24 when unknown. */
static int f32_sig_bits(LLVMValueRef v) {
  if (!LLVMIsAInstruction(v) || LLVMGetNumOperands(v) < 1) return 24;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  LLVMValueRef x = LLVMGetOperand(v, 0);
  if (op == LLVMFPExt) {
    LLVMTypeKind k = LLVMGetTypeKind(LLVMTypeOf(x));
    return k == LLVMBFloatTypeKind ? 8 : k == LLVMHalfTypeKind ? 11 : 24;
  }
  if (op == LLVMBitCast && LLVMTypeOf(x) == LLVMInt32TypeInContext(LLVMGetTypeContext(LLVMTypeOf(x))) &&
      LLVMIsAInstruction(x) && LLVMGetNumOperands(x) == 2) { /* bf16_from_word: the word << 16 or & 0xFFFF0000 */
    LLVMOpcode xo = LLVMGetInstructionOpcode(x);
    LLVMValueRef c = LLVMGetOperand(x, 1);
    if (LLVMIsAConstantInt(c) && ((xo == LLVMShl && LLVMConstIntGetZExtValue(c) == 16) ||
                                  (xo == LLVMAnd && LLVMConstIntGetZExtValue(c) == 0xFFFF0000u)))
      return 8;
    return 24;
  }
  LLVMValueRef m = NULL;
  if (op == LLVMSIToFP || op == LLVMUIToFP) m = x;
  LLVMBool loses = 0;
  if (op == LLVMFSub && LLVMIsAConstantFP(LLVMGetOperand(v, 1)) &&
      LLVMConstRealGetDouble(LLVMGetOperand(v, 1), &loses) == 8388608.0 && LLVMIsAInstruction(x) &&
      LLVMGetInstructionOpcode(x) == LLVMBitCast) { /* magic_u23_to_f32: (m | 0x4B000000) - 2^23 */
    LLVMValueRef o = LLVMGetOperand(x, 0);
    if (LLVMIsAInstruction(o) && LLVMGetInstructionOpcode(o) == LLVMOr && LLVMIsAConstantInt(LLVMGetOperand(o, 1)) &&
        LLVMConstIntGetZExtValue(LLVMGetOperand(o, 1)) == 0x4B000000u)
      m = LLVMGetOperand(o, 0);
  }
  if (!m || !small_nonneg(m)) return 24;
  for (unsigned i = 0; i < 2; i++) {
    LLVMValueRef c = LLVMGetOperand(m, i);
    if (LLVMIsAConstantInt(c)) {
      long long cv = LLVMConstIntGetSExtValue(c);
      int p = 0;
      while (p < 24 && (1LL << p) <= cv) p++;
      return p;
    }
  }
  return 24;
}

/* TILEC_EXACT_FMA=0 turns the contraction below off (in the kernel cache key). */
static bool exact_fma(void) {
  return !tl_code_env_off("TILEC_EXACT_FMA");
}

/* x * y + z (or - z) as one fma when the product is exact in f32: its factors
 * need p and q significant bits with p + q <= 24 (W4A16's `cast<f32>(q) *
 * s - z`: a nibble, 4 bits, times a bf16 scale, 8).  Then round(x * y) = x * y
 * and fma(x, y, z) = round(x * y + z): the same bits, one instruction fewer
 * (z - x * y too: fma(-x, y, z)).
 * The one difference: a product beyond the f32 range (|y| >= 2^(128 - p),
 * a bf16 scale over 2^124 for a nibble) is infinite apart and finite fused. */
static void contract_exact_product(LLVMValueRef x) {
  if (!exact_fma() || !LLVMIsAInstruction(x)) return;
  LLVMOpcode op = LLVMGetInstructionOpcode(x);
  if (op != LLVMFSub && op != LLVMFAdd) return;
  for (unsigned i = 0; i < 2; i++) {
    LLVMValueRef m = LLVMGetOperand(x, i);
    if (!LLVMIsAInstruction(m) || LLVMGetInstructionOpcode(m) != LLVMFMul) continue;
    if (f32_sig_bits(LLVMGetOperand(m, 0)) + f32_sig_bits(LLVMGetOperand(m, 1)) > 24) continue;
    LLVMSetFastMathFlags(m, LLVMGetFastMathFlags(m) | LLVMFastMathAllowContract);
    LLVMSetFastMathFlags(x, LLVMGetFastMathFlags(x) | LLVMFastMathAllowContract);
  }
}

static LLVMRealPredicate fpred(int kind) {
  switch (kind) {
  case TL_CMP_EQ: return LLVMRealOEQ;
  case TL_CMP_NE: return LLVMRealUNE;
  case TL_CMP_LT: return LLVMRealOLT;
  case TL_CMP_LE: return LLVMRealOLE;
  case TL_CMP_GT: return LLVMRealOGT;
  default: return LLVMRealOGE;
  }
}

static LLVMIntPredicate ipred(int kind, bool uns) {
  switch (kind) {
  case TL_CMP_EQ: return LLVMIntEQ;
  case TL_CMP_NE: return LLVMIntNE;
  case TL_CMP_LT: return uns ? LLVMIntULT : LLVMIntSLT;
  case TL_CMP_LE: return uns ? LLVMIntULE : LLVMIntSLE;
  case TL_CMP_GT: return uns ? LLVMIntUGT : LLVMIntSGT;
  default: return uns ? LLVMIntUGE : LLVMIntSGE;
  }
}

/* Signed min/max of i8/i16/i32, spelled setp + selp in inline asm (opaque to
 * LLVM, which would turn it back into min.s32).  Works around a ptxas bug
 * (CUDA 13.0, sm_90): when it fuses two signed min/max into one three-input
 * VIMNMX3 (.S16x2 too) it drops the negation of an operand, e.g.
 * min(min(-a, -b), c) runs as min(-a, b, c) (tests/lit/codegen/
 * minmax-negated.tile; found by the random differential test, seeds 1244 and
 * 1832).  ptxas does not fuse selp into VIMNMX3.  Unsigned min/max and i64
 * are not affected (the negations stay explicit; no 64-bit VIMNMX3). */
static LLVMValueRef signed_minmax(cg *g, bool is_max, LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef t = LLVMTypeOf(a);
  bool narrow = t != g->i32;
  LLVMValueRef ab[2] = {a, b};
  if (narrow)
    for (int k = 0; k < 2; k++) ab[k] = LLVMBuildSExt(g->B, ab[k], g->i32, "");
  const char *text = is_max ? "{ .reg .pred p; setp.gt.s32 p, $1, $2; selp.b32 $0, $1, $2, p; }"
                            : "{ .reg .pred p; setp.lt.s32 p, $1, $2; selp.b32 $0, $1, $2, p; }";
  LLVMValueRef r = cg_asm(g, g->i32, text, "=r,r,r", ab, 2, false);
  return narrow ? LLVMBuildTrunc(g->B, r, t, "") : r;
}

/* A uniform random number as emit_random.c makes it, u = uitofp(w >> 8) * 2^-24: the integer
 * w >> 8 (< 2^24), or NULL for any other value. */
static LLVMValueRef uniform_integer(LLVMValueRef v) {
  if (!LLVMIsAInstruction(v) || LLVMGetInstructionOpcode(v) != LLVMFMul) return NULL;
  LLVMValueRef k = LLVMGetOperand(v, 0), c = LLVMGetOperand(v, 1);
  LLVMBool lost = 0;
  if (!LLVMIsAConstantFP(c) || LLVMConstRealGetDouble(c, &lost) != 0x1p-24 || lost) return NULL;
  if (!LLVMIsAInstruction(k) || LLVMGetInstructionOpcode(k) != LLVMUIToFP) return NULL;
  LLVMValueRef w = LLVMGetOperand(k, 0);
  if (!LLVMIsAInstruction(w) || LLVMGetInstructionOpcode(w) != LLVMLShr || LLVMGetTypeKind(LLVMTypeOf(w)) != LLVMIntegerTypeKind ||
      LLVMGetIntTypeWidth(LLVMTypeOf(w)) != 32)
    return NULL;
  LLVMValueRef sh = LLVMGetOperand(w, 1);
  return LLVMIsAConstantInt(sh) && LLVMConstIntGetZExtValue(sh) == 8 ? w : NULL;
}

/* An ordered compare of a uniform random number u = k * 2^-24 (k < 2^24 an integer) with y, as an
 * integer compare of k with a threshold T made from y alone: with y' = y * 2^24 (exact, or inf where
 * y >= 2^104 > u), u >= y <=> k >= ceil(y'), u > y <=> k >= floor(y') + 1, u <= y <=> k < floor(y') + 1,
 * u < y <=> k < ceil(y'), T clamped to [0, 2^24] (a NaN y: 2^24 for >=, >, never true; 0 for <=, <).
 * Where y is a scalar (dropout's `rand(seed, o) >= p`) T is made once: the element's cvt.rn.f32.u32,
 * FMUL and FSETP become one ISETP (docs/rows.md "rows6"; `TILEC_RAND_CMP=0` off). */
static LLVMValueRef uniform_cmp(cg *g, int kind, LLVMValueRef x, LLVMValueRef y) {
  if (tl_code_env_off("TILEC_RAND_CMP") || kind == TL_CMP_EQ || kind == TL_CMP_NE) return NULL;
  LLVMValueRef k = uniform_integer(x);
  if (!k) {
    if (!(k = uniform_integer(y))) return NULL;
    LLVMValueRef t = x; /* y PRED u: u (swapped PRED) y */
    y = t;
    kind = kind == TL_CMP_LT ? TL_CMP_GT : kind == TL_CMP_GT ? TL_CMP_LT : kind == TL_CMP_LE ? TL_CMP_GE : TL_CMP_LE;
  }
  LLVMBuilderRef B = g->B;
  bool up = kind == TL_CMP_GE || kind == TL_CMP_GT; /* k >= T, else k < T */
  bool use_ceil = kind == TL_CMP_GE || kind == TL_CMP_LT;
  LLVMValueRef ys = LLVMBuildFMul(B, y, f32c(g, 0x1p24), "");
  LLVMValueRef lo = f32c(g, -1.0), hi = f32c(g, 0x1p24);
  LLVMValueRef c = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, ys, lo, ""), lo, ys, "");
  c = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOGT, c, hi, ""), hi, c, "");  /* NaN stays NaN */
  LLVMValueRef t = use_ceil ? fcall1(g, "llvm.ceil.f32", c) : LLVMBuildFAdd(B, fcall1(g, "llvm.floor.f32", c), f32c(g, 1.0), "");
  t = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, t, f32c(g, 0.0), ""), f32c(g, 0.0), t, "");
  t = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOGT, t, hi, ""), hi, t, "");
  t = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealUNO, ys, ys, ""), up ? hi : f32c(g, 0.0), t, "");
  LLVMValueRef ti = LLVMBuildFPToUI(B, t, g->i32, "");
  return LLVMBuildICmp(B, up ? LLVMIntUGE : LLVMIntULT, k, ti, "");
}

LLVMValueRef cg_binop(cg *g, int opc, int kind, LLVMValueRef a, LLVMValueRef b, tl_dtype dt) {
  LLVMBuilderRef B = g->B;
  if (is_f8(dt) && opc != TL_OP_cmp) cg_unsupported(g, "'%s' on %s (cast to f32 first)", tl_opinfo_table[opc].name, tl_dtype_name(dt));
  if (is_fp(dt) || is_f8(dt)) { /* (an 8-bit float compares widened: language.md 3, comparisons take them) */
    LLVMValueRef x = to_f32(g, a, dt), y = to_f32(g, b, dt), r;
    switch (opc) {
    case TL_OP_add: r = LLVMBuildFAdd(B, x, y, ""); contract_exact_product(r); break;
    case TL_OP_sub: r = LLVMBuildFSub(B, x, y, ""); contract_exact_product(r); break;
    case TL_OP_mul: r = LLVMBuildFMul(B, x, y, ""); break;
    case TL_OP_div: r = LLVMBuildFDiv(B, x, y, ""); break;
    case TL_OP_rem: {
      /* fmod, exactly as the interpreter (C fmodf).  NVPTX expands an f32
       * frem as x - trunc(x / y) * y with the quotient rounded to f32, which
       * is off by one y when x / y rounds across an integer (found by the
       * random differential test, seed 2775).  In f64 the quotient of two f32
       * values truncates correctly and n * y and x - n * y are exact while
       * |x / y| < 2^29 (24 + 29 bits < 53); the result is exact in f32. */
      /* Spelled out (an f64 frem would be narrowed back to f32 by
       * InstCombine, frem being exact in LLVM's semantics): q = x / y,
       * n = trunc(q), r = x - n * y, with fmod's sign (that of x) and
       * fmod(x, +-inf) = x. */
      LLVMTypeRef d = LLVMDoubleTypeInContext(g->C);
      LLVMValueRef xd = LLVMBuildFPExt(B, x, d, ""), yd = LLVMBuildFPExt(B, y, d, "");
      LLVMValueRef q = LLVMBuildFDiv(B, xd, yd, "");
      LLVMValueRef n = cg_intrinsic(g, "llvm.trunc.f64", d, &q, 1);
      LLVMValueRef rd = LLVMBuildFSub(B, xd, LLVMBuildFMul(B, n, yd, ""), "");
      LLVMValueRef cs[2] = {rd, xd};
      rd = cg_intrinsic(g, "llvm.copysign.f64", d, cs, 2);
      LLVMValueRef ay = cg_intrinsic(g, "llvm.fabs.f64", d, &yd, 1);
      LLVMValueRef yinf = LLVMBuildFCmp(B, LLVMRealOEQ, ay, LLVMConstReal(d, __builtin_inf()), "");
      rd = LLVMBuildSelect(B, yinf, xd, rd, "");
      r = LLVMBuildFPTrunc(B, rd, g->f32, "");
      break;
    }
    case TL_OP_min: { LLVMValueRef xy[2] = {x, y}; r = cg_intrinsic(g, "llvm.minimum.f32", g->f32, xy, 2); break; }
    case TL_OP_max: { LLVMValueRef xy[2] = {x, y}; r = cg_intrinsic(g, "llvm.maximum.f32", g->f32, xy, 2); break; }
    case TL_OP_cmp: {
      LLVMValueRef u = dt == TL_F32 ? uniform_cmp(g, kind, x, y) : NULL;
      return u ? u : LLVMBuildFCmp(B, fpred(kind), x, y, "");
    }
    default: cg_unsupported(g, "'%s' on %s", tl_opinfo_table[opc].name, tl_dtype_name(dt));
    }
    return from_f32(g, r, dt);
  }
  bool uns = is_unsigned(dt);
  LLVMTypeRef t = LLVMTypeOf(a);
  int bits = tl_dtype_bits(dt);
  LLVMValueRef zero = LLVMConstInt(t, 0, 0), one = LLVMConstInt(t, 1, 0);
  switch (opc) {
  case TL_OP_add: return LLVMBuildAdd(B, a, b, "");
  case TL_OP_sub: return LLVMBuildSub(B, a, b, "");
  case TL_OP_mul: return LLVMBuildMul(B, a, b, "");
  case TL_OP_and: return LLVMBuildAnd(B, a, b, "");
  case TL_OP_or: return LLVMBuildOr(B, a, b, "");
  case TL_OP_xor: return LLVMBuildXor(B, a, b, "");
  case TL_OP_cmp: return LLVMBuildICmp(B, ipred(kind, uns), a, b, "");
  case TL_OP_min:
  case TL_OP_max:
    if (!uns && bits <= 32) return signed_minmax(g, opc == TL_OP_max, a, b);
    return LLVMBuildSelect(B, LLVMBuildICmp(B, opc == TL_OP_max ? (uns ? LLVMIntUGT : LLVMIntSGT)
                                                                : (uns ? LLVMIntULT : LLVMIntSLT), a, b, ""),
                           a, b, "");
  case TL_OP_div:
  case TL_OP_rem: {
    /* b == 0 -> 0; signed b == -1 -> -a (div) or 0 (rem): no UB, wraps */
    LLVMValueRef bz = LLVMBuildICmp(B, LLVMIntEQ, b, zero, "");
    LLVMValueRef bm1 = uns ? LLVMConstInt(g->i1, 0, 0) : LLVMBuildICmp(B, LLVMIntEQ, b, LLVMConstAllOnes(t), "");
    LLVMValueRef safe = LLVMBuildSelect(B, LLVMBuildOr(B, bz, bm1, ""), one, b, "");
    LLVMValueRef q;
    if (opc == TL_OP_div) {
      q = uns ? LLVMBuildUDiv(B, a, safe, "") : LLVMBuildSDiv(B, a, safe, "");
      q = LLVMBuildSelect(B, bm1, LLVMBuildSub(B, zero, a, ""), q, "");
    } else {
      q = uns ? LLVMBuildURem(B, a, safe, "") : LLVMBuildSRem(B, a, safe, "");
      q = LLVMBuildSelect(B, bm1, zero, q, "");
    }
    return LLVMBuildSelect(B, bz, zero, q, "");
  }
  case TL_OP_shl:
  case TL_OP_shr: {
    LLVMValueRef w = LLVMConstInt(t, (unsigned long long)bits, 0);
    LLVMValueRef inr = LLVMBuildICmp(B, LLVMIntULT, b, w, "");
    LLVMValueRef sb = LLVMBuildSelect(B, inr, b, LLVMConstInt(t, (unsigned long long)(bits - 1), 0), "");
    if (opc == TL_OP_shl) return LLVMBuildSelect(B, inr, LLVMBuildShl(B, a, sb, ""), zero, "");
    if (!uns) return LLVMBuildAShr(B, a, sb, "");
    return LLVMBuildSelect(B, inr, LLVMBuildLShr(B, a, sb, ""), zero, "");
  }
  default: cg_unsupported(g, "'%s' on %s", tl_opinfo_table[opc].name, tl_dtype_name(dt));
  }
}

/* exp2 via ex2.approx.ftz.f32 (relative error ~2^-22).  The .ftz form is one
 * MUFU.EX2; without it ptxas wraps every ex2 in a subnormal range check and
 * two scalings (FSETP + 2 FMUL: attention's softmax spent 15% of its loop
 * instructions there).  What it changes: a result below 2^-126 (x < -126)
 * is +0 instead of a subnormal, and a subnormal x gives exp2(0) = 1, which
 * is the rounded exact value anyway. */
static LLVMValueRef ex2(cg *g, LLVMValueRef x) { return fcall1(g, "llvm.nvvm.ex2.approx.ftz.f", x); }

/* 1 / d for d >= 1 (sigmoid's 1 + e, tanh's 1 + e) via rcp.approx.ftz.f32:
 * one MUFU.RCP, at most 1 ulp off (the division it replaces is 0.5 ulp).
 * A correctly rounded f32 division (div.rn / rcp.rn) is, in SASS, a range
 * check and a branch to a slow path around each element: every element's
 * chain (ex2, add, check, rcp, 2 fma) then runs alone, nothing interleaves
 * across the branches, and a 64x256 epilogue of GELUs (128 elements a
 * thread) is latency-bound.  The functions are approximate anyway: the
 * bounds of docs/language.md 8.1 hold with the extra half ulp.  d = +inf
 * gives +0 (y = 0 exactly); d > 2^126 gives +0 (|y| < 2^-126). */
static LLVMValueRef rcp(cg *g, LLVMValueRef d) {
  /* the one-instruction form (the default since the seventh session's H200 run); TILEC_RCP=rn:
   * the correctly rounded division (the default before) */
  const char *env = tl_code_env("TILEC_RCP");
  if (env && !strcmp(env, "rn")) return LLVMBuildFDiv(g->B, f32c(g, 1.0), d, "");
  return fcall1(g, "llvm.nvvm.rcp.approx.ftz.f", d);
}

/* TILEC_TANH_APPROX (in the kernel cache key; sixteenth session, branch gelu6): tanh and
 * sigmoid by one `tanh.approx.f32` (one MUFU.TANH, sm_75+) instead of ex2 + rcp (two MUFU; tanh
 * also a polynomial and a select).  The MUFU (XU) pipe does 16 results a clock an SM against 128
 * FP32 ops, so an epilogue of GELUs is XU-bound: 2 MUFU + 1 F2F an element was ~3 us of a 128x256
 * tile, the tensor cores idle (docs/pipelines.md "The GELU epilogue's cost").  The price: the
 * instruction's relative error, 2^-11 (PTX ISA), against the default's ~2^-21 (docs/language.md 8.1
 * "Under TILEC_TANH_APPROX").  =1: every tanh / sigmoid; =2 (eighteenth session, branch gelu7): only
 * those whose result reaches memory through bf16 / f16 stores after tame elementwise ops
 * (lib/narrow_store.h), where the error is below the stored rounding: the default since the twentieth
 * session (H200, gemm_bias_gelu 8192x4096x4096 / 8192x14336x4096: 0.959 / 0.980x the plain linear
 * against 0.931 / 0.914, bench/RESULTS.md); 0: none. */
int cg_tanh_approx_level(void) {
  const char *env = tl_code_env("TILEC_TANH_APPROX");
  return !env ? 2 : env[0] == '1' ? 1 : env[0] == '2' ? 2 : 0;
}

bool cg_tanh_approx(cg *g, const tl_op *o) {
  if (g->sm < 75 || (o->opc != TL_OP_tanh && o->opc != TL_OP_sigmoid)) return false;
  int level = cg_tanh_approx_level();
  if (level != 2) return level == 1;
  if (g->narrow_f != g->f) {
    g->narrow = tl_narrow_only(g->f);
    g->narrow_f = g->f;
  }
  return g->narrow[o->res[0]] != 0;
}

static LLVMValueRef tanh_mufu(cg *g, LLVMValueRef x) {
  return cg_asm(g, g->f32, "tanh.approx.f32 $0, $1;", "=f,f", &x, 1, false);
}

/* x / 2 for sigmoid's tanh argument.  When x = c * w with c a constant (GELU's 1.5957691216 * (...)),
 * w * (c / 2) instead: halving is exact, so the two agree except where c * w is subnormal (then
 * tanh(x / 2) is 0.5 either way), and the product c * w is left dead: one FMUL an element less. */
static LLVMValueRef half_of(cg *g, LLVMValueRef x) {
  if (LLVMIsAInstruction(x) && LLVMGetInstructionOpcode(x) == LLVMFMul)
    for (unsigned i = 0; i < 2; i++) {
      LLVMValueRef c = LLVMGetOperand(x, i);
      LLVMBool loses = 0;
      if (!LLVMIsAConstantFP(c)) continue;
      double v = LLVMConstRealGetDouble(c, &loses);
      double a = v < 0 ? -v : v;
      if (loses || !(a >= 0x1p-125 && a <= 0x1p127)) continue; /* finite, v / 2 exact in f32 */
      return LLVMBuildFMul(g->B, LLVMGetOperand(x, 1 - i), f32c(g, v * 0.5), "");
    }
  return LLVMBuildFMul(g->B, x, f32c(g, 0.5), "");
}

/* sin/cos: reduce to [-pi, pi] (k = rint(x / 2pi), r = x - k*2pi in two
 * parts, Cody-Waite), then the .approx instruction (abs error ~2^-21 there). */
static LLVMValueRef sincos(cg *g, LLVMValueRef x, bool is_sin) {
  LLVMValueRef k = fcall1(g, "llvm.rint.f32", LLVMBuildFMul(g->B, x, f32c(g, 0.15915494309189535), ""));
  LLVMValueRef a1[3] = {LLVMBuildFNeg(g->B, k, ""), f32c(g, 6.28125), x};
  LLVMValueRef r = cg_intrinsic(g, "llvm.fma.f32", g->f32, a1, 3);
  LLVMValueRef a2[3] = {LLVMBuildFNeg(g->B, k, ""), f32c(g, 1.9353071795864769e-3), r};
  r = cg_intrinsic(g, "llvm.fma.f32", g->f32, a2, 3);
  return fcall1(g, is_sin ? "llvm.nvvm.sin.approx.f" : "llvm.nvvm.cos.approx.f", r);
}

/* exp2(a * b - c) (or + c): the multiply and the add may be fused into one
 * fma (LLVM's `contract` on both), attention's exp2(s * scale - m * scale).
 * Only for an exp2 argument: the fma skips the rounding of a * b, which
 * moves the argument by at most half an ulp of a * b, and exp2 turns that
 * into a relative change of ln 2 times it (at |a * b| < 128: < 2^-17,
 * below the .approx instruction's own error).  Elsewhere (x * y - z with
 * cancellation) fusing could change a result entirely, so nothing else is
 * contracted. */
static void contract_exp2_arg(LLVMValueRef x) {
  if (!LLVMIsAInstruction(x)) return;
  LLVMOpcode op = LLVMGetInstructionOpcode(x);
  if (op != LLVMFSub && op != LLVMFAdd) return;
  for (unsigned i = 0; i < 2; i++) {
    LLVMValueRef m = LLVMGetOperand(x, i);
    if (!LLVMIsAInstruction(m) || LLVMGetInstructionOpcode(m) != LLVMFMul) continue;
    LLVMSetFastMathFlags(m, LLVMGetFastMathFlags(m) | LLVMFastMathAllowContract);
    LLVMSetFastMathFlags(x, LLVMGetFastMathFlags(x) | LLVMFastMathAllowContract);
  }
}

static LLVMValueRef unop(cg *g, int opc, LLVMValueRef a, tl_dtype dt, bool tanh_fast) {
  LLVMBuilderRef B = g->B;
  if (!tl_dtype_is_float(dt)) {
    LLVMTypeRef t = LLVMTypeOf(a);
    switch (opc) {
    case TL_OP_neg: return LLVMBuildSub(B, LLVMConstInt(t, 0, 0), a, "");
    case TL_OP_not: return LLVMBuildXor(B, a, LLVMConstAllOnes(t), "");
    case TL_OP_abs:
      if (is_unsigned(dt)) return a;
      return LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, a, LLVMConstInt(t, 0, 0), ""),
                             LLVMBuildSub(B, LLVMConstInt(t, 0, 0), a, ""), a, "");
    default: cg_unsupported(g, "'%s' on %s", tl_opinfo_table[opc].name, tl_dtype_name(dt));
    }
  }
  if (is_f8(dt)) cg_unsupported(g, "'%s' on %s (cast to f32 first)", tl_opinfo_table[opc].name, tl_dtype_name(dt));
  LLVMValueRef x = to_f32(g, a, dt), r;
  const double log2e = 1.4426950408889634, ln2 = 0.6931471805599453;
  switch (opc) {
  case TL_OP_neg: r = LLVMBuildFNeg(B, x, ""); break;
  case TL_OP_abs: r = fcall1(g, "llvm.fabs.f32", x); break;
  case TL_OP_exp2:
    if (dt == TL_F32) contract_exp2_arg(x);
    r = ex2(g, x);
    break;
  case TL_OP_exp: r = ex2(g, LLVMBuildFMul(B, x, f32c(g, log2e), "")); break;
  case TL_OP_log2: r = fcall1(g, "llvm.nvvm.lg2.approx.f", x); break;
  case TL_OP_log: r = LLVMBuildFMul(B, fcall1(g, "llvm.nvvm.lg2.approx.f", x), f32c(g, ln2), ""); break;
  case TL_OP_sqrt: r = fcall1(g, "llvm.sqrt.f32", x); break;
  case TL_OP_rsqrt: r = fcall1(g, "llvm.nvvm.rsqrt.approx.f", x); break;
  case TL_OP_sin: r = sincos(g, x, true); break;
  case TL_OP_cos: r = sincos(g, x, false); break;
  case TL_OP_floor: r = fcall1(g, "llvm.floor.f32", x); break;
  case TL_OP_ceil: r = fcall1(g, "llvm.ceil.f32", x); break;
  case TL_OP_sigmoid: {
    if (tanh_fast) { /* sigmoid(x) = 0.5 + 0.5 tanh(x / 2): an FMUL, the MUFU, an FFMA */
      LLVMValueRef t = tanh_mufu(g, half_of(g, x));
      LLVMValueRef half[3] = {t, f32c(g, 0.5), f32c(g, 0.5)};
      r = cg_intrinsic(g, "llvm.fma.f32", g->f32, half, 3);
      break;
    }
    LLVMValueRef e = ex2(g, LLVMBuildFMul(B, x, f32c(g, -log2e), ""));
    r = rcp(g, LLVMBuildFAdd(B, f32c(g, 1.0), e, ""));
    break;
  }
  case TL_OP_tanh: {
    if (tanh_fast) {
      r = tanh_mufu(g, x);
      break;
    }
    /* tanh|x| = (1 - e) / (1 + e), e = 2^(-2|x| log2 e); odd polynomial near 0 */
    LLVMValueRef ax = fcall1(g, "llvm.fabs.f32", x);
    LLVMValueRef e = ex2(g, LLVMBuildFMul(B, ax, f32c(g, -2.0 * log2e), ""));
    LLVMValueRef big = LLVMBuildFMul(B, LLVMBuildFSub(B, f32c(g, 1.0), e, ""), rcp(g, LLVMBuildFAdd(B, f32c(g, 1.0), e, "")), "");
    LLVMValueRef sx[2] = {big, x};
    big = cg_intrinsic(g, "llvm.copysign.f32", g->f32, sx, 2);
    LLVMValueRef x2 = LLVMBuildFMul(B, x, x, "");
    /* x - x^3/3 + 2x^5/15 - 17x^7/315 */
    LLVMValueRef p = f32c(g, -17.0 / 315.0);
    LLVMValueRef c1[3] = {p, x2, f32c(g, 2.0 / 15.0)};
    p = cg_intrinsic(g, "llvm.fma.f32", g->f32, c1, 3);
    LLVMValueRef c2[3] = {p, x2, f32c(g, -1.0 / 3.0)};
    p = cg_intrinsic(g, "llvm.fma.f32", g->f32, c2, 3);
    LLVMValueRef c3[3] = {LLVMBuildFMul(B, p, x2, ""), x, x};
    LLVMValueRef small = cg_intrinsic(g, "llvm.fma.f32", g->f32, c3, 3);
    r = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, ax, f32c(g, 0.0625), ""), small, big, "");
    break;
  }
  default: cg_unsupported(g, "'%s' on %s", tl_opinfo_table[opc].name, tl_dtype_name(dt));
  }
  return from_f32(g, r, dt);
}

void cg_cond_br_likely(cg *g, LLVMValueRef cond, LLVMBasicBlockRef if_true, LLVMBasicBlockRef if_false) {
  LLVMValueRef br = LLVMBuildCondBr(g->B, cond, if_true, if_false);
  LLVMMetadataRef md[3] = {LLVMMDStringInContext2(g->C, "branch_weights", 14),
                           LLVMValueAsMetadata(LLVMConstInt(g->i32, 1000, 0)),
                           LLVMValueAsMetadata(LLVMConstInt(g->i32, 1, 0))};
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(g->C, "prof", 4), LLVMMetadataAsValue(g->C, LLVMMDNodeInContext2(g->C, md, 3)));
}

LLVMBasicBlockRef cg_tma_or_fallback(cg *g, LLVMValueRef ok, tl_op *o, void (*fallback)(cg *g, tl_op *o),
                                     const char *prefix) {
  char name[64];
  snprintf(name, sizeof name, "%s.tma", prefix);
  LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(g->C, g->fn, name);
  snprintf(name, sizeof name, "%s.fallback", prefix);
  LLVMBasicBlockRef fb = LLVMAppendBasicBlockInContext(g->C, g->fn, name);
  snprintf(name, sizeof name, "%s.join", prefix);
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, name);
  cg_cond_br_likely(g, ok, tb, fb);
  LLVMPositionBuilderAtEnd(g->B, fb);
  fallback(g, o);
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, tb);
  return jb;
}

/* ---- selects whose condition holds for the whole tile --------------------------- */

/* Bounds [lo, hi] (i64, uniform) of the signed integer value v over its whole
 * tile when v is built from iota, constants and scalars by splat /
 * broadcast / expand_dims / convert_layout / add / sub (masks such as
 * `iota[BN][None, :] + n0 < S`).  *fits accumulates "every intermediate stays
 * in the dtype's range" (so an i32 add that would wrap is not mistaken for an
 * in-range one).  False when v is anything else. */
static bool int_range(cg *g, int32_t v, LLVMValueRef *lo, LLVMValueRef *hi, LLVMValueRef *fits, int depth) {
  tl_func *f = g->f;
  tl_value *x = tl_val(f, v);
  tl_dtype dt = (tl_dtype)x->type.dtype;
  if (depth > 16 || is_unsigned(dt) || !(dt == TL_I32 || dt == TL_I64)) return false;
  if (x->type.kind != TL_KIND_TILE) { /* a scalar: one value per program */
    *lo = *hi = LLVMBuildSExt(g->B, cg_get(g, v)->r[0], g->i64, "");
    if (LLVMTypeOf(cg_get(g, v)->r[0]) == g->i64) *lo = *hi = cg_get(g, v)->r[0];
    return true;
  }
  if (x->def < 0) return false;
  tl_op *d = tl_op_at(f, x->def);
  switch (d->opc) {
  case TL_OP_const: *lo = *hi = LLVMConstInt(g->i64, (unsigned long long)d->ival, 1); return true;
  case TL_OP_iota:
    *lo = cg_i64(g, 0);
    *hi = cg_i64(g, x->type.shape[0] - 1);
    return true;
  case TL_OP_splat:
  case TL_OP_broadcast:
  case TL_OP_expand_dims:
  case TL_OP_convert_layout: return int_range(g, d->opnd[0], lo, hi, fits, depth + 1);
  case TL_OP_add:
  case TL_OP_sub: {
    LLVMValueRef l0, h0, l1, h1;
    if (!int_range(g, d->opnd[0], &l0, &h0, fits, depth + 1) || !int_range(g, d->opnd[1], &l1, &h1, fits, depth + 1))
      return false;
    if (d->opc == TL_OP_add) {
      *lo = LLVMBuildAdd(g->B, l0, l1, "");
      *hi = LLVMBuildAdd(g->B, h0, h1, "");
    } else {
      *lo = LLVMBuildSub(g->B, l0, h1, "");
      *hi = LLVMBuildSub(g->B, h0, l1, "");
    }
    if (dt == TL_I32) {
      LLVMValueRef in = LLVMBuildAnd(g->B, LLVMBuildICmp(g->B, LLVMIntSGE, *lo, cg_i64(g, INT32_MIN), ""),
                                     LLVMBuildICmp(g->B, LLVMIntSLE, *hi, cg_i64(g, INT32_MAX), ""), "");
      *fits = *fits ? LLVMBuildAnd(g->B, *fits, in, "") : in;
    }
    return true; /* i64: operands are i32-sized program values plus tile offsets; no wrap */
  }
  default: return false;
  }
}

/* A uniform i1 that is true only when the i1 tile c is true everywhere, or
 * NULL when c is not such a compare (see int_range).  *fits: an i1, true when
 * no i32 add or sub under the compare wraps (NULL: there is none). */
static LLVMValueRef all_true(cg *g, int32_t c, LLVMValueRef *fits_out) {
  tl_func *f = g->f;
  tl_value *x = tl_val(f, c);
  if (x->type.kind != TL_KIND_TILE || x->def < 0) return NULL;
  tl_op *d = tl_op_at(f, x->def);
  if (d->opc == TL_OP_broadcast || d->opc == TL_OP_expand_dims || d->opc == TL_OP_convert_layout)
    return all_true(g, d->opnd[0], fits_out);
  if (d->opc != TL_OP_cmp) return NULL;
  LLVMValueRef la, ha, lb, hb, fits = NULL;
  if (!int_range(g, d->opnd[0], &la, &ha, &fits, 0) || !int_range(g, d->opnd[1], &lb, &hb, &fits, 0)) return NULL;
  *fits_out = fits;
  LLVMValueRef r;
  switch (d->kind) {
  case TL_CMP_LT: r = LLVMBuildICmp(g->B, LLVMIntSLT, ha, lb, ""); break; /* max a < min b */
  case TL_CMP_LE: r = LLVMBuildICmp(g->B, LLVMIntSLE, ha, lb, ""); break;
  case TL_CMP_GT: r = LLVMBuildICmp(g->B, LLVMIntSGT, la, hb, ""); break; /* min a > max b */
  case TL_CMP_GE: r = LLVMBuildICmp(g->B, LLVMIntSGE, la, hb, ""); break;
  default: return NULL;
  }
  return fits ? LLVMBuildAnd(g->B, r, fits, "") : r;
}

/* The selects of the masked path, from the predicates pred (NULL: c's registers) into sel. */
static void masked_selects(cg *g, tl_op *o, const tl_layout *l, int32_t n, LLVMValueRef *pred, LLVMValueRef *sel) {
  cg_val *c = cg_get(g, o->opnd[0]), *a = cg_get(g, o->opnd[1]), *b = cg_get(g, o->opnd[2]);
  for (int32_t i = 0; i < n; i++) {
    if (tl_layout_canon_reg(l, i) != i || !cg_reg_wanted(g, o->res[0], i)) continue;
    LLVMValueRef ci = pred ? pred[i] : c->n == 1 ? c->r[0] : c->r[i];
    LLVMValueRef ai = a->n == 1 ? a->r[0] : a->r[i], bi = b->n == 1 ? b->r[0] : b->r[i];
    sel[i] = LLVMBuildSelect(g->B, ci, ai, bi, "");
  }
}

/* select(c, a, b) over a tile where c is a bounds-decidable compare
 * (attention's `cols < S` and causal `rows >= cols`): a uniform branch skips
 * every per-element select when c holds for the whole tile (all but the last
 * key block, or the diagonal blocks when causal).  The result registers are
 * phis of a's (whole tile true) and the selects.  The masked path rebuilds c
 * there (mask_diff.c: one per-thread difference against immediates; the exact
 * i32 form behind a uniform branch when an index may wrap), so c's index
 * tiles are not live across the path that skips it. */
static bool emit_select_uniform(cg *g, tl_op *o, const tl_layout *l, int32_t n) {
  LLVMValueRef fits = NULL;
  LLVMValueRef all = all_true(g, o->opnd[0], &fits);
  if (!all) return false;
  bool diff = cg_mask_diff_fits(g, o->opnd[0]);
  cg_val *a = cg_get(g, o->opnd[1]);
  int32_t lid = tl_val(g->f, o->res[0])->type.layout;
  LLVMBasicBlockRef from = LLVMGetInsertBlock(g->B);
  /* placed right after this block, so the PTX keeps the source order */
  LLVMBasicBlockRef next = LLVMGetNextBasicBlock(from);
  LLVMBasicBlockRef join = next ? LLVMInsertBasicBlockInContext(g->C, next, "sel.join")
                                : LLVMAppendBasicBlockInContext(g->C, g->fn, "sel.join");
  LLVMBasicBlockRef part = LLVMInsertBasicBlockInContext(g->C, join, "sel.part");
  LLVMBasicBlockRef body = part, wrap = NULL;
  if (diff) { /* part branches: the difference form, or the exact one */
    body = LLVMInsertBasicBlockInContext(g->C, join, "sel.diff");
    wrap = LLVMInsertBasicBlockInContext(g->C, join, "sel.wrap");
  }
  cg_cond_br_likely(g, all, join, part);
  LLVMValueRef *sel = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)n * 3);
  LLVMValueRef *selw = sel + n, *pred = sel + 2 * (size_t)n;
  LLVMPositionBuilderAtEnd(g->B, part);
  if (wrap) { /* the difference form in i32 needs every index exact and |T| <= 2^30 */
    LLVMValueRef t = cg_mask_diff_t(g, o->opnd[0], lid);
    LLVMValueRef ok = LLVMBuildICmp(g->B, LLVMIntULE, LLVMBuildAdd(g->B, t, cg_i64(g, 1LL << 30), ""),
                                    cg_i64(g, 1LL << 31), "");
    if (fits) ok = LLVMBuildAnd(g->B, ok, fits, "");
    const char *e = tl_code_env("TILEC_MASK_DIFF");
    if (e && e[0] == '2') ok = LLVMConstInt(g->i1, 0, 0); /* testing: always the exact form */
    LLVMBuildCondBr(g->B, ok, body, wrap);
    LLVMPositionBuilderAtEnd(g->B, body);
    cg_mask_diff_preds(g, o->opnd[0], lid, LLVMBuildTrunc(g->B, t, g->i32, ""), pred);
  }
  masked_selects(g, o, l, n, diff ? pred : NULL, sel);
  LLVMBasicBlockRef part_end = LLVMGetInsertBlock(g->B);
  LLVMBuildBr(g->B, join);
  if (wrap) { /* an index may wrap: the exact i32 compares */
    LLVMPositionBuilderAtEnd(g->B, wrap);
    cg_mask_diff_preds(g, o->opnd[0], lid, NULL, pred);
    masked_selects(g, o, l, n, pred, selw);
    LLVMBuildBr(g->B, join);
  }
  LLVMPositionBuilderAtEnd(g->B, join);
  cg_val *d = cg_new_val(g, o->res[0], n);
  for (int32_t i = 0; i < n; i++) {
    if (!cg_reg_wanted(g, o->res[0], i)) continue;
    int32_t k = tl_layout_canon_reg(l, i);
    if (k != i) {
      d->r[i] = d->r[k];
      continue;
    }
    LLVMValueRef ai = a->n == 1 ? a->r[0] : a->r[i];
    LLVMValueRef phi = LLVMBuildPhi(g->B, LLVMTypeOf(ai), "");
    LLVMValueRef vals[3] = {ai, sel[i], selw[i]};
    LLVMBasicBlockRef bbs[3] = {from, part_end, wrap};
    LLVMAddIncoming(phi, vals, bbs, wrap ? 3 : 2);
    d->r[i] = phi;
  }
  return true;
}

void cg_emit_ew(cg *g, tl_op *o) {
  tl_func *f = g->f;
  int32_t res = o->res[0];
  tl_type *rt = &tl_val(f, res)->type;
  bool tile = rt->kind == TL_KIND_TILE;
  const tl_layout *l = tile ? cg_layout(g, res) : NULL;
  int32_t n = tile ? tl_layout_nregs(l) : 1;
  cg_val *args[3];
  tl_dtype adt[3];
  int na = o->nopnd;
  if (na > 3) TL_INTERNAL(g->ctx, "codegen: elementwise op with %d operands", na);
  for (int k = 0; k < na; k++) {
    args[k] = cg_get(g, o->opnd[k]);
    tl_type *at = &tl_val(f, o->opnd[k])->type;
    adt[k] = (tl_dtype)at->dtype;
    if (at->kind == TL_KIND_TILE && (!tile || at->layout != rt->layout))
      TL_INTERNAL(g->ctx, "codegen: operand %d of '%s' is not in the result's layout", k, tl_opinfo_table[o->opc].name);
  }
  if (o->opc == TL_OP_select && tile && emit_select_uniform(g, o, l, n)) return;
  cg_val *d = cg_new_val(g, res, n);
  bool tanh_fast = cg_tanh_approx(g, o);
  for (int32_t i = 0; i < n; i++) {
    if (!cg_reg_wanted(g, res, i)) continue;
    int32_t c = tile ? tl_layout_canon_reg(l, i) : i;
    if (c != i) {
      d->r[i] = d->r[c];
      continue;
    }
    LLVMValueRef x[3];
    for (int k = 0; k < na; k++) x[k] = args[k]->n == 1 ? args[k]->r[0] : args[k]->r[i];
    switch (o->opc) {
    case TL_OP_select: d->r[i] = LLVMBuildSelect(g->B, x[0], x[1], x[2], ""); break;
    case TL_OP_fma: { /* one rounding in f32, then the dtype's (as the interpreter) */
      tl_dtype dt = (tl_dtype)rt->dtype;
      if (!is_fp(dt)) cg_unsupported(g, "fma on %s (cast to f32 first)", tl_dtype_name(dt));
      LLVMValueRef y[3] = {to_f32(g, x[0], adt[0]), to_f32(g, x[1], adt[1]), to_f32(g, x[2], adt[2])};
      d->r[i] = from_f32(g, cg_intrinsic(g, "llvm.fma.f32", g->f32, y, 3), dt);
      break;
    }
    case TL_OP_cast: d->r[i] = cg_cast(g, x[0], adt[0], (tl_dtype)rt->dtype); break;
    case TL_OP_bitcast: {
      tl_dtype to = (tl_dtype)rt->dtype;
      LLVMValueRef bits = LLVMBuildBitCast(g->B, cg_to_mem(g, x[0], adt[0]), cg_mem_type(g, to), "");
      d->r[i] = cg_from_mem(g, bits, to);
      break;
    }
    default:
      if (na == 2) d->r[i] = cg_binop(g, o->opc, o->kind, x[0], x[1], adt[0]);
      else d->r[i] = unop(g, o->opc, x[0], adt[0], tanh_fast);
    }
  }
}
