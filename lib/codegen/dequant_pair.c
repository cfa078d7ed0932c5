/* dequant_pair.c: requires the LLVM values of two f32 elements about to be rounded to one bf16x2
 * operand pair (emit_dot.c pack_operand_pair); returns that pair computed by the int4 "magic
 * number" unpack and two bf16x2 fmas when both elements are a dequantization, else NULL.
 *
 * An element it takes:  e = cast<f32>(((x >> sh) & 15) + c) * s - z  (c an integer constant,
 * |c| <= 15; s and z widened bf16; "- z" may be "+ z" or absent), i.e. in LLVM
 *   fsub|fadd (fmul (sitofp|uitofp (add|sub? (and X 15) C)) S) Z   (either operand order)
 * with X the i32 the user shifted (the nibble is its low 4 bits).  For the pair (e0, e1):
 *   u  = prmt(X0, X1, 0x5410) & 0x000F000F | 0x43004300   bf16 (128 + n0, 128 + n1): a bf16 of
 *                                                          exponent 2^7 has the integer n in its
 *                                                          7 mantissa bits
 *   q  = fma.rn.bf16x2(u, 1, C - 128)                      n + c, exact (|n + c| < 2^8)
 *   w  = fma.rn.bf16x2(q, (s0, s1), (-z0, -z1))            round_bf16(q * s - z)
 * 4 instructions a pair (PRMT, LOP3, 2 HFMA2) where the f32 form takes 7 (2 LOP3 for & 15, 2 I2F,
 * 2 FFMA, the F2F pack); the shifts stay.
 *
 * The byte form (TILEC_DEQUANT_BYTE=0 off): when X0 = W >> sh0 and X1 = W >> sh1 shift one word
 * and, for every lane and warp, sh0 is a multiple of 8 below 32 and sh1 = sh0 + 4 (GPTQ's k % 8
 * nibbles of a B-fragment pair (k, k + 1), k even: the pair is byte sh0 / 8 of the word), proved by
 * evaluating the shift amounts' LLVM expressions (leaves: the lane, the warp, constants) for every
 * lane and warp, the two shifts go:
 *   v = prmt(W, 0, sh0 / 8 | 0x4440)   the byte, alone;  u = v * 0x1001: n0 at bits 0-3, n1 at 16-19
 * 5 instructions a pair (PRMT, IMAD, LOP3, 2 HFMA2) where the shifted form takes 6.
 *
 * Rounding: the f32 form rounds q * s - z to f32 (q * s is exact: 4 + 8 bits) and then to bf16;
 * the bf16x2 fma rounds the exact q * s - z once.  The two agree whenever q * s - z fits f32's 24
 * bits (|exponent(q s) - exponent(z)| below about 12: always for z = zero_point * s, GPTQ / AWQ /
 * Marlin's z), and otherwise differ at most where the f32 rounding lands on a bf16 tie (the bf16x2
 * result is then the correctly rounded one).  A contraction like TILEC_EXACT_FMA's, so behind its
 * own switch: TILEC_DEQUANT_BF16X2=0 turns it off (the f32 form); on by default since the twentieth
 * session (in the kernel cache key). */
#include "cg.h"
#include "code_env.h"

typedef struct dq_elem {
  LLVMValueRef x;     /* the i32 whose low nibble is n */
  int64_t c;          /* n + c is the integer the scale multiplies */
  LLVMValueRef s, z;  /* the scale and the zero point (widened bf16 f32; z NULL: none) */
  bool add_z;         /* e = q * s + z (else - z) */
} dq_elem;

static bool is_op(LLVMValueRef v, LLVMOpcode op) {
  return v && LLVMIsAInstruction(v) && LLVMGetInstructionOpcode(v) == op;
}

static bool const_int(LLVMValueRef v, int64_t *out) {
  if (!v || !LLVMIsAConstantInt(v)) return false;
  *out = LLVMConstIntGetSExtValue(v);
  return true;
}

/* An f32 that is a widened bf16 (its low 16 bits zero): fpext of a bfloat, or a bf16 taken from a
 * word (bitcast of `w << 16` or `w & 0xFFFF0000`, emit_elementwise.c bf16_from_word; or the
 * language's own `bitcast<f32>(w << 16)` / `bitcast<f32>(w & -65536)` of a word holding (s, z)). */
static bool widened_bf16(LLVMValueRef v) {
  if (is_op(v, LLVMFPExt)) return LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(v, 0))) == LLVMBFloatTypeKind;
  if (!is_op(v, LLVMBitCast)) return false;
  LLVMValueRef w = LLVMGetOperand(v, 0);
  int64_t c;
  /* the language's `w << 16` is guarded for amounts past 31 (select(amount < 32, w << 16, 0)); a
   * constant amount leaves `select true, w << 16, 0` */
  if (is_op(w, LLVMSelect) && const_int(LLVMGetOperand(w, 0), &c) && c) w = LLVMGetOperand(w, 1);
  if (LLVMGetTypeKind(LLVMTypeOf(w)) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(LLVMTypeOf(w)) != 32) return false;
  if (is_op(w, LLVMShl)) return const_int(LLVMGetOperand(w, 1), &c) && c == 16;
  if (is_op(w, LLVMAnd)) return const_int(LLVMGetOperand(w, 1), &c) && (uint32_t)c == 0xFFFF0000u;
  return false;
}

/* q = sitofp|uitofp (and X 15) or of (add (and X 15) C): X and C into e. */
static bool nibble(LLVMValueRef q, dq_elem *e) {
  if (!is_op(q, LLVMSIToFP) && !is_op(q, LLVMUIToFP)) return false;
  LLVMValueRef n = LLVMGetOperand(q, 0);
  if (LLVMTypeOf(n) != LLVMInt32TypeInContext(LLVMGetTypeContext(LLVMTypeOf(n)))) return false;
  e->c = 0;
  if ((is_op(n, LLVMAdd) || is_op(n, LLVMSub)) && const_int(LLVMGetOperand(n, 1), &e->c)) {
    if (is_op(n, LLVMSub)) e->c = -e->c;
    if (e->c < -15 || e->c > 15) return false;
    if (is_op(q, LLVMUIToFP) && e->c < 0) return false; /* (n + c) as unsigned: wraps */
    n = LLVMGetOperand(n, 0);
  }
  int64_t m;
  if (!is_op(n, LLVMAnd) || !const_int(LLVMGetOperand(n, 1), &m) || m != 15) return false;
  e->x = LLVMGetOperand(n, 0);
  return true;
}

/* m = fmul(q, s) or fmul(s, q). */
static bool scaled(LLVMValueRef m, dq_elem *e) {
  if (!is_op(m, LLVMFMul)) return false;
  for (unsigned i = 0; i < 2; i++)
    if (nibble(LLVMGetOperand(m, i), e) && widened_bf16(LLVMGetOperand(m, 1 - i))) {
      e->s = LLVMGetOperand(m, 1 - i);
      return true;
    }
  return false;
}

static bool match(LLVMValueRef v, dq_elem *e) {
  if (LLVMTypeOf(v) != LLVMFloatTypeInContext(LLVMGetTypeContext(LLVMTypeOf(v)))) return false;
  e->z = NULL, e->add_z = false;
  if (scaled(v, e)) return true;
  if (is_op(v, LLVMFSub)) {
    e->z = LLVMGetOperand(v, 1);
    return widened_bf16(e->z) && scaled(LLVMGetOperand(v, 0), e);
  }
  if (is_op(v, LLVMFAdd)) {
    e->add_z = true;
    for (unsigned i = 0; i < 2; i++)
      if (widened_bf16(LLVMGetOperand(v, 1 - i)) && scaled(LLVMGetOperand(v, i), e)) {
        e->z = LLVMGetOperand(v, 1 - i);
        return true;
      }
  }
  return false;
}

/* The bf16 halves of two widened-bf16 f32s as one bf16x2 (lo = a). */
static LLVMValueRef bf16_pair(cg *g, LLVMValueRef a, LLVMValueRef b) {
  if (is_op(a, LLVMFPExt) && is_op(b, LLVMFPExt)) { /* the bfloats' bits: no shift to f32 and back */
    LLVMValueRef lo = LLVMBuildZExt(g->B, LLVMBuildBitCast(g->B, LLVMGetOperand(a, 0), g->i16, ""), g->i32, "");
    LLVMValueRef hi = LLVMBuildZExt(g->B, LLVMBuildBitCast(g->B, LLVMGetOperand(b, 0), g->i16, ""), g->i32, "");
    return LLVMBuildOr(g->B, lo, LLVMBuildShl(g->B, hi, cg_i32(g, 16), ""), "");
  }
  LLVMValueRef ab[3] = {LLVMBuildBitCast(g->B, a, g->i32, ""), LLVMBuildBitCast(g->B, b, g->i32, ""), cg_i32(g, 0x7632)};
  return cg_asm(g, g->i32, "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r", ab, 3, false);
}

/* On unless TILEC_DEQUANT_BF16X2=0: the default since the twentieth session (H200, bench/pending_w4a16d.sh
 * and pending_w4a16e.sh: gemm_w4a16's split-K BM16 1.25-1.55x cuBLAS bf16 against 1.13-1.25 at M 1-16,
 * 4096^3 0.273x against 0.206, the same error against fp64; test_w4a16 passes in every form). */
bool cg_dequant_bf16x2_on(void) { return !tl_code_env_off("TILEC_DEQUANT_BF16X2"); }

/* X0 = W >> sh0 and X1 = W >> sh1 (ashr, or lshr) of one word W with, for every lane and warp,
 * sh0 in {0, 8, 16, 24} and sh1 = sh0 + 4: W (and sh0 in *sh) for the byte form, else NULL. */
static LLVMValueRef byte_pair(cg *g, LLVMValueRef x0, LLVMValueRef x1, LLVMValueRef *sh) {
  if (tl_code_env_off("TILEC_DEQUANT_BYTE") || !LLVMIsAInstruction(x0) || !LLVMIsAInstruction(x1)) return NULL;
  LLVMOpcode o0 = LLVMGetInstructionOpcode(x0), o1 = LLVMGetInstructionOpcode(x1);
  if (o0 != o1 || (o0 != LLVMAShr && o0 != LLVMLShr) || LLVMGetOperand(x0, 0) != LLVMGetOperand(x1, 0)) return NULL;
  LLVMValueRef s0 = LLVMGetOperand(x0, 1), s1 = LLVMGetOperand(x1, 1);
  int warps = g->f->warps > 0 ? g->f->warps : 1;
  for (int64_t w = 0; w < warps; w++)
    for (int64_t l = 0; l < 32; l++) {
      int64_t a, b;
      if (!cg_lane_eval(g, s0, l, w, &a) || !cg_lane_eval(g, s1, l, w, &b)) return NULL;
      if (a < 0 || a > 24 || a % 8 || b != a + 4) return NULL;
    }
  *sh = s0;
  return LLVMGetOperand(x0, 0);
}

/* The halves form (TILEC_DEQUANT_HALVES=0 off): X0 = W >> sh0 and X1 = W >> sh1 (ashr or lshr) of one
 * word W with, for every lane and warp, 0 <= sh0 <= 12 and sh1 = sh0 + 16: the pair's nibbles are
 * bits sh0 .. sh0 + 3 and sh0 + 16 .. sh0 + 19 of W (a repacked layout,
 * examples/gemm_w4a16_packed.tile), so W >> sh0 (logical; the bits kept are below 32 either way)
 * has them at bits 0-3 and 16-19 and one lop3 makes the bf16 pair: W and sh0 into *sh, else NULL. */
static LLVMValueRef half_pair(cg *g, LLVMValueRef x0, LLVMValueRef x1, LLVMValueRef *sh) {
  if (tl_code_env_off("TILEC_DEQUANT_HALVES") || !LLVMIsAInstruction(x0) || !LLVMIsAInstruction(x1)) return NULL;
  LLVMOpcode o0 = LLVMGetInstructionOpcode(x0), o1 = LLVMGetInstructionOpcode(x1);
  if (o0 != o1 || (o0 != LLVMAShr && o0 != LLVMLShr) || LLVMGetOperand(x0, 0) != LLVMGetOperand(x1, 0)) return NULL;
  LLVMValueRef s0 = LLVMGetOperand(x0, 1), s1 = LLVMGetOperand(x1, 1);
  int warps = cg_all_warps(g);
  for (int64_t w = 0; w < warps; w++)
    for (int64_t l = 0; l < 32; l++) {
      int64_t a, b;
      if (!cg_lane_eval(g, s0, l, w, &a) || !cg_lane_eval(g, s1, l, w, &b)) return NULL;
      if (a < 0 || a > 12 || b != a + 16) return NULL;
    }
  *sh = s0;
  return LLVMGetOperand(x0, 0);
}

LLVMValueRef cg_dequant_pair_bf16(cg *g, LLVMValueRef e0, LLVMValueRef e1) {
  dq_elem a, b;
  if (!cg_dequant_bf16x2_on() || !match(e0, &a) || !match(e1, &b)) return NULL;
  if (a.c != b.c || (a.z == NULL) != (b.z == NULL) || a.add_z != b.add_z) return NULL;
  /* C - 128 as bf16 (an integer of at most 8 significant bits: exact) in both halves */
  uint32_t off = 0;
  {
    int64_t d = a.c - 128; /* -143 .. -113 */
    uint32_t mag = (uint32_t)(-d), e = 0;
    while ((mag >> e) > 1) e++;
    uint32_t mant = (mag << (7 - e)) & 0x7F; /* mag < 256: e <= 7, no bits lost */
    off = 0x8000u | ((127 + e) << 7) | mant;
  }
  LLVMValueRef s2 = bf16_pair(g, a.s, b.s);
  LLVMValueRef z2 = a.z ? bf16_pair(g, a.z, b.z) : cg_i32(g, 0);
  /* - z: flip the signs; no z: -0 (q * s + -0 = q * s, a -0 product kept) */
  if (!a.add_z) z2 = LLVMBuildXor(g->B, z2, cg_i32(g, (int64_t)0x80008000u), "");
  LLVMValueRef sh = NULL, word = half_pair(g, a.x, b.x, &sh);
  if (word) { /* lop3 and the two fmas; the shift as LLVM's (none by 0; shared by the pairs of one amount) */
    LLVMValueRef hargs[6] = {LLVMBuildLShr(g->B, word, sh, ""), cg_i32(g, 0x3F803F80),
                             cg_i32(g, (int64_t)(off | (off << 16))), s2, z2};
    return cg_asm(g, g->i32,
                  "{ .reg .b32 u; lop3.b32 u, $1, 0x000F000F, 0x43004300, 0xEA; fma.rn.bf16x2 u, u, $2, $3; "
                  "fma.rn.bf16x2 $0, u, $4, $5; }",
                  "=r,r,r,r,r,r", hargs, 5, false);
  }
  word = byte_pair(g, a.x, b.x, &sh);
  if (word) {
    LLVMValueRef sel = LLVMBuildOr(g->B, LLVMBuildLShr(g->B, sh, cg_i32(g, 3), ""), cg_i32(g, 0x4440), "");
    LLVMValueRef bargs[6] = {word, sel, cg_i32(g, 0x3F803F80), cg_i32(g, (int64_t)(off | (off << 16))), s2, z2};
    return cg_asm(g, g->i32,
                  "{ .reg .b32 u; prmt.b32 u, $1, 0, $2; mul.lo.u32 u, u, 0x1001; "
                  "lop3.b32 u, u, 0x000F000F, 0x43004300, 0xEA; fma.rn.bf16x2 u, u, $3, $4; fma.rn.bf16x2 $0, u, $5, $6; }",
                  "=r,r,r,r,r,r,r", bargs, 6, false);
  }
  /* prmt + lop3 in the asm: as LLVM and / or, ptxas spends a LOP3 on each constant */
  LLVMValueRef args[6] = {a.x, b.x, cg_i32(g, 0x3F803F80), cg_i32(g, (int64_t)(off | (off << 16))), s2, z2};
  return cg_asm(g, g->i32,
                "{ .reg .b32 u; prmt.b32 u, $1, $2, 0x5410; lop3.b32 u, u, 0x000F000F, 0x43004300, 0xEA; "
                "fma.rn.bf16x2 u, u, $3, $4; fma.rn.bf16x2 $0, u, $5, $6; }",
                "=r,r,r,r,r,r,r", args, 6, false);
}
