/* emit_random.c: requires layouts; lowers `rand` (uniform / normal / int
 * from Philox-4x32-10) over the registers of the offsets: one block serves the
 * four (rand, randint) or two (randn) consecutive offsets it covers (philox.h),
 * so a group of registers holding o, o + 1, ... with o a multiple of the
 * group takes one block, behind a per-thread check; anything else takes a
 * block per element, its word chosen by the offset's low bits.  Every step mirrors
 * lib/philox.c operation for operation: 32-bit products as 64-bit multiplies,
 * f32 + - * without contraction (no fast-math flags), division and square
 * root as the correctly rounded div.rn / sqrt.rn, the polynomial constants
 * from philox.h; so the GPU's bits are the interpreter's. */
#include <stdio.h>
#include <stdlib.h>

#include "cg.h"
#include "philox.h"
#include "code_env.h"

static LLVMValueRef u32c(cg *g, uint32_t x) { return LLVMConstInt(g->i32, x, 0); }
static LLVMValueRef f32c(cg *g, float x) { return LLVMConstReal(g->f32, (double)x); }

/* Philox asm (default on since the eighth session; TILEC_PHILOX_ASM=0 off): the product as one
 * `mul.wide.u32` whose halves are split by `mov.b64` inside an inline asm.  From the 64-bit multiply LLVM narrows
 * `trunc(p >> 32) ^ trunc(q)` into a 64-bit xor of the two products, which ptxas 13.0 emits as
 * a LOP3 plus a VIADD of a zero register: 6 SASS instructions a round instead of 4 (two
 * IMAD.WIDE.U32, two 3-input LOP3), 20 of a block's ~60.  The same bits either way. */
static bool philox_asm(void) {
  return !tl_code_env_off("TILEC_PHILOX_ASM");
}

/* hi and lo 32 bits of the 64-bit product m * x. */
static void mul_wide(cg *g, uint32_t m, LLVMValueRef x, LLVMValueRef *hi, LLVMValueRef *lo) {
  LLVMBuilderRef B = g->B;
  if (philox_asm() && !LLVMIsConstant(x)) { /* (round 0's c2 = 0 folds away as before) */
    LLVMTypeRef two[2] = {g->i32, g->i32};
    char text[96];
    snprintf(text, sizeof text, "{ .reg .b64 t; mul.wide.u32 t, $2, 0x%08x; mov.b64 {$0, $1}, t; }", m);
    LLVMValueRef r = cg_asm(g, LLVMStructTypeInContext(g->C, two, 2, 0), text, "=r,=r,r", &x, 1, false);
    *lo = LLVMBuildExtractValue(B, r, 0, "");
    *hi = LLVMBuildExtractValue(B, r, 1, "");
    return;
  }
  LLVMValueRef p = LLVMBuildMul(B, LLVMConstInt(g->i64, m, 0), LLVMBuildZExt(B, x, g->i64, ""), "");
  *hi = LLVMBuildTrunc(B, LLVMBuildLShr(B, p, cg_i64(g, 32), ""), g->i32, "");
  *lo = LLVMBuildTrunc(B, p, g->i32, "");
}

/* tl_philox4x32_10 with ctr = (c0, stream, 0, 0); key uniform. */
static void philox(cg *g, LLVMValueRef c0, uint32_t stream, LLVMValueRef k0, LLVMValueRef k1, LLVMValueRef out[4]) {
  LLVMBuilderRef B = g->B;
  LLVMValueRef c1 = u32c(g, stream), c2 = u32c(g, 0), c3 = u32c(g, 0);
  for (int r = 0; r < TL_PHILOX_ROUNDS; r++) {
    LLVMValueRef hi0, lo0, hi1, lo1;
    mul_wide(g, TL_PHILOX_M0, c0, &hi0, &lo0);
    mul_wide(g, TL_PHILOX_M1, c2, &hi1, &lo1);
    c0 = LLVMBuildXor(B, LLVMBuildXor(B, hi1, c1, ""), k0, "");
    c1 = lo1;
    c2 = LLVMBuildXor(B, LLVMBuildXor(B, hi0, c3, ""), k1, "");
    c3 = lo0;
    k0 = LLVMBuildAdd(B, k0, u32c(g, TL_PHILOX_W0), "");
    k1 = LLVMBuildAdd(B, k1, u32c(g, TL_PHILOX_W1), "");
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

static LLVMValueRef fmul(cg *g, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFMul(g->B, a, b, ""); }
static LLVMValueRef fadd(cg *g, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFAdd(g->B, a, b, ""); }
static LLVMValueRef fsub(cg *g, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFSub(g->B, a, b, ""); }
static LLVMValueRef fdiv(cg *g, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef args[2] = {a, b};
  return cg_intrinsic(g, "llvm.nvvm.div.rn.f", g->f32, args, 2);
}

/* (x >> 8) * 2^-24 (plus = 1: ((x >> 8) + 1) * 2^-24) */
static LLVMValueRef uniform(cg *g, LLVMValueRef x, int plus) {
  LLVMValueRef t = LLVMBuildLShr(g->B, x, u32c(g, 8), "");
  if (plus) t = LLVMBuildAdd(g->B, t, u32c(g, 1), "");
  return fmul(g, LLVMBuildUIToFP(g->B, t, g->f32, ""), f32c(g, 0x1p-24f));
}

static LLVMValueRef horner(cg *g, const float *coef, int n, LLVMValueRef z) {
  LLVMValueRef p = f32c(g, coef[0]);
  for (int i = 1; i < n; i++) p = fadd(g, fmul(g, p, z), f32c(g, coef[i]));
  return p;
}

/* tl_rand_log */
static LLVMValueRef rand_log(cg *g, LLVMValueRef u) {
  LLVMBuilderRef B = g->B;
  LLVMValueRef b = LLVMBuildBitCast(B, u, g->i32, "");
  LLVMValueRef e = LLVMBuildSub(B, LLVMBuildLShr(B, b, u32c(g, 23), ""), u32c(g, 127), "");
  LLVMValueRef mb = LLVMBuildOr(B, LLVMBuildAnd(B, b, u32c(g, 0x7FFFFFu), ""), u32c(g, 0x3F800000u), "");
  LLVMValueRef m = LLVMBuildBitCast(B, mb, g->f32, "");
  LLVMValueRef big = LLVMBuildFCmp(B, LLVMRealOGT, m, f32c(g, TL_RAND_SQRT2), "");
  m = LLVMBuildSelect(B, big, fmul(g, m, f32c(g, 0.5f)), m, "");
  e = LLVMBuildSelect(B, big, LLVMBuildAdd(B, e, u32c(g, 1), ""), e, "");
  LLVMValueRef f = fsub(g, m, f32c(g, 1.0f));
  LLVMValueRef s = fdiv(g, f, fadd(g, f, f32c(g, 2.0f)));
  LLVMValueRef z = fmul(g, s, s);
  LLVMValueRef p = horner(g, tl_rand_log_coef, TL_RAND_LOG_NCOEF, z);
  LLVMValueRef logm = fmul(g, fadd(g, s, s), p);
  LLVMValueRef ef = LLVMBuildSIToFP(B, e, g->f32, "");
  return fadd(g, fmul(g, ef, f32c(g, TL_RAND_LN2_HI)), fadd(g, fmul(g, ef, f32c(g, TL_RAND_LN2_LO)), logm));
}

/* tl_rand_cos2pi */
static LLVMValueRef rand_cos2pi(cg *g, LLVMValueRef v) {
  LLVMBuilderRef B = g->B;
  LLVMValueRef t = fmul(g, v, f32c(g, 4.0f));
  LLVMValueRef q = LLVMBuildFPToSI(B, t, g->i32, "");
  LLVMValueRef x = fmul(g, fsub(g, t, LLVMBuildSIToFP(B, q, g->f32, "")), f32c(g, TL_RAND_HALF_PI));
  LLVMValueRef x2 = fmul(g, x, x);
  LLVMValueRef c = horner(g, tl_rand_cos_coef, TL_RAND_COS_NCOEF, x2);
  LLVMValueRef s = fmul(g, horner(g, tl_rand_sin_coef, TL_RAND_SIN_NCOEF, x2), x);
  LLVMValueRef nc = LLVMBuildFNeg(B, c, ""), ns = LLVMBuildFNeg(B, s, "");
  LLVMValueRef r = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, q, u32c(g, 2), ""), nc, s, "");
  r = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, q, u32c(g, 1), ""), ns, r, "");
  return LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, q, u32c(g, 0), ""), c, r, "");
}

/* The element of kind from the block's words a (and b: randn's second word). */
static LLVMValueRef rand_value(cg *g, int kind, LLVMValueRef a, LLVMValueRef b) {
  switch (kind) {
  case TL_RAND_UNIFORM: return uniform(g, a, 0);
  case TL_RAND_INT: return a;
  default: {
    LLVMValueRef u1 = uniform(g, a, 1), u2 = uniform(g, b, 0);
    LLVMValueRef lg = rand_log(g, u1);
    LLVMValueRef rr = cg_intrinsic(g, "llvm.nvvm.sqrt.rn.f", g->f32, (LLVMValueRef[]){fmul(g, f32c(g, -2.0f), lg)}, 1);
    return fmul(g, rr, rand_cos2pi(g, u2));
  }
  }
}

/* Offsets a block covers (4 uniforms / ints, 2 normals), log2 of it, and the counter's stream. */
static int per_block(int kind) { return kind == TL_RAND_NORMAL ? 2 : 4; }
static int block_shift(int kind) { return kind == TL_RAND_NORMAL ? 1 : 2; }
static uint32_t block_stream(int kind) { return kind == TL_RAND_NORMAL ? TL_RAND_NORMAL_STREAM : 0; }

/* One element on its own: the block of offset o, the word(s) picked by o's low bits. */
static LLVMValueRef rand_one(cg *g, int kind, LLVMValueRef o, LLVMValueRef k0, LLVMValueRef k1, bool words_only) {
  LLVMBuilderRef B = g->B;
  LLVMValueRef w[4];
  philox(g, LLVMBuildLShr(B, o, u32c(g, (uint32_t)block_shift(kind)), ""), block_stream(kind), k0, k1, w);
  LLVMValueRef j = LLVMBuildAnd(B, o, u32c(g, (uint32_t)per_block(kind) - 1), "");
  if (kind == TL_RAND_NORMAL) {
    LLVMValueRef hi = LLVMBuildICmp(B, LLVMIntNE, j, u32c(g, 0), "");
    return rand_value(g, kind, LLVMBuildSelect(B, hi, w[2], w[0], ""), LLVMBuildSelect(B, hi, w[3], w[1], ""));
  }
  LLVMValueRef x = w[0];
  for (uint32_t i = 1; i < 4; i++) x = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, j, u32c(g, i), ""), w[i], x, "");
  return words_only ? x : rand_value(g, kind, x, NULL);
}

/* Registers r .. r + n - 1 (offsets o[]): one block when o[0] is a multiple of n and
 * o[i] = o[0] + i, else an element at a time; the results join in phis.  n is the block's
 * offsets (per_block), or half of them for uniforms and ints: a pair o, o + 1 with o even takes
 * the block's words 0, 1 or 2, 3 by o's bit 1 (the mma layout holds column pairs). */
static void rand_group(cg *g, int kind, LLVMValueRef *o, int n, LLVMValueRef k0, LLVMValueRef k1, LLVMValueRef *out,
                       bool words_out) {
  LLVMBuilderRef B = g->B;
  LLVMValueRef fast = LLVMBuildICmp(B, LLVMIntEQ, LLVMBuildAnd(B, o[0], u32c(g, (uint32_t)n - 1), ""), u32c(g, 0), "");
  for (int i = 1; i < n; i++)
    fast = LLVMBuildAnd(B, fast, LLVMBuildICmp(B, LLVMIntEQ, o[i], LLVMBuildAdd(B, o[0], u32c(g, (uint32_t)i), ""), ""), "");
  LLVMBasicBlockRef fb = LLVMAppendBasicBlockInContext(g->C, g->fn, "rand.block");
  LLVMBasicBlockRef sb = LLVMAppendBasicBlockInContext(g->C, g->fn, "rand.each");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "rand.join");
  LLVMBuildCondBr(B, fast, fb, sb);
  LLVMPositionBuilderAtEnd(B, fb);
  LLVMValueRef w[4], vf[4], vs[4];
  philox(g, LLVMBuildLShr(B, o[0], u32c(g, (uint32_t)block_shift(kind)), ""), block_stream(kind), k0, k1, w);
  /* uniforms and ints: the words join, the value is made once after the join (a compare sees the
   * uniform's integer: emit_elementwise.c uniform_cmp) */
  bool words = kind != TL_RAND_NORMAL;
  if (words && n == 2) { /* (a pair: the block's upper words when o[0] & 2) */
    LLVMValueRef up = LLVMBuildICmp(B, LLVMIntNE, LLVMBuildAnd(B, o[0], u32c(g, 2), ""), u32c(g, 0), "");
    w[0] = LLVMBuildSelect(B, up, w[2], w[0], "");
    w[1] = LLVMBuildSelect(B, up, w[3], w[1], "");
  }
  for (int i = 0; i < n; i++) vf[i] = !words ? rand_value(g, kind, w[2 * i], w[2 * i + 1]) : w[i];
  LLVMBasicBlockRef fend = LLVMGetInsertBlock(B);
  LLVMBuildBr(B, jb);
  LLVMPositionBuilderAtEnd(B, sb);
  for (int i = 0; i < n; i++) vs[i] = rand_one(g, kind, o[i], k0, k1, words);
  LLVMBasicBlockRef send = LLVMGetInsertBlock(B);
  LLVMBuildBr(B, jb);
  LLVMPositionBuilderAtEnd(B, jb);
  for (int i = 0; i < n; i++) {
    out[i] = LLVMBuildPhi(B, LLVMTypeOf(vf[i]), "");
    LLVMValueRef vals[2] = {vf[i], vs[i]};
    LLVMBasicBlockRef from[2] = {fend, send};
    LLVMAddIncoming(out[i], vals, from, 2);
  }
  for (int i = 0; words && !words_out && i < n; i++) out[i] = rand_value(g, kind, out[i], NULL);
}

/* Uniforms and ints in a layout whose registers hold column pairs and whose lane bit 0 moves two columns (the mma
 * layout: lane t holds columns 4c, 4c + 1 of a row, lane t ^ 1 columns 4c + 2, 4c + 3): the two lanes share each
 * block.  Registers pr[2i], pr[2i] + 1 are pair 2i, the next two pair 2i + 1; lane t (bit 0 clear) computes the block
 * of its pair 2i, lane t ^ 1 that of its pair 2i + 1 (the same two counters: the same rows and column groups), and
 * each passes the half the other needs by one shuffle a word: a block a four elements, as the blocked layout's
 * fours, instead of a block a pair.  Only where every lane of the warp finds its offsets so (o even, o + 1 beside
 * it, o's bit 1 its lane's bit 0, the neighbour's o its own o ^ 2: vote.all); else a block an element. */
static void rand_lane_chunk(cg *g, int kind, LLVMValueRef *o, int n, LLVMValueRef k0, LLVMValueRef k1, LLVMValueRef *out) {
  LLVMBuilderRef B = g->B;
  LLVMValueRef odd = LLVMBuildAnd(B, g->lane, u32c(g, 1), "");
  LLVMValueRef is_odd = LLVMBuildICmp(B, LLVMIntNE, odd, u32c(g, 0), "");
  LLVMValueRef ok = LLVMConstInt(g->i1, 1, 0);
  for (int j = 0; j < n; j += 2) {
    LLVMValueRef o0 = o[j], nb = cg_shfl_xor(g, o0, 1);
    ok = LLVMBuildAnd(B, ok, LLVMBuildICmp(B, LLVMIntEQ, LLVMBuildAnd(B, o0, u32c(g, 3), ""), LLVMBuildShl(B, odd, u32c(g, 1), ""), ""), "");
    ok = LLVMBuildAnd(B, ok, LLVMBuildICmp(B, LLVMIntEQ, o[j + 1], LLVMBuildAdd(B, o0, u32c(g, 1), ""), ""), "");
    ok = LLVMBuildAnd(B, ok, LLVMBuildICmp(B, LLVMIntEQ, nb, LLVMBuildXor(B, o0, u32c(g, 2), ""), ""), "");
  }
  LLVMValueRef okv = LLVMBuildZExt(B, ok, g->i32, "");
  LLVMValueRef all = cg_asm(g, g->i32,
                            "{ .reg .pred p, q; setp.ne.u32 p, $1, 0; vote.sync.all.pred q, p, 0xffffffff; selp.u32 $0, 1, 0, q; }",
                            "=r,r", &okv, 1, false);
  LLVMBasicBlockRef fb = LLVMAppendBasicBlockInContext(g->C, g->fn, "rand.lanes");
  LLVMBasicBlockRef sb = LLVMAppendBasicBlockInContext(g->C, g->fn, "rand.pairs");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "rand.lanes.join");
  LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntNE, all, u32c(g, 0), ""), fb, sb);
  LLVMPositionBuilderAtEnd(B, fb);
  LLVMValueRef *vf = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)n * 2), *vs = vf + n;
  for (int j = 0; j < n; j += 4) { /* pairs j / 2 and j / 2 + 1: registers j, j + 1 and j + 2, j + 3 */
    LLVMValueRef own = LLVMBuildSelect(B, is_odd, o[j + 2], o[j], ""), w[4];
    philox(g, LLVMBuildLShr(B, own, u32c(g, 2), ""), block_stream(kind), k0, k1, w);
    LLVMValueRef r[2];
    for (int i = 0; i < 2; i++) /* the even lane passes words 2, 3; the odd one words 0, 1 */
      r[i] = cg_shfl_xor(g, LLVMBuildSelect(B, is_odd, w[i], w[2 + i], ""), 1);
    for (int i = 0; i < 2; i++) {
      vf[j + i] = LLVMBuildSelect(B, is_odd, r[i], w[i], "");
      vf[j + 2 + i] = LLVMBuildSelect(B, is_odd, w[2 + i], r[i], "");
    }
  }
  LLVMBasicBlockRef fend = LLVMGetInsertBlock(B);
  LLVMBuildBr(B, jb);
  LLVMPositionBuilderAtEnd(B, sb);
  for (int j = 0; j < n; j++) vs[j] = rand_one(g, kind, o[j], k0, k1, true); /* (offsets of another shape) */
  LLVMBasicBlockRef send = LLVMGetInsertBlock(B);
  LLVMBuildBr(B, jb);
  LLVMPositionBuilderAtEnd(B, jb);
  for (int i = 0; i < n; i++) {
    out[i] = LLVMBuildPhi(B, g->i32, "");
    LLVMValueRef vals[2] = {vf[i], vs[i]};
    LLVMBasicBlockRef from[2] = {fend, send};
    LLVMAddIncoming(out[i], vals, from, 2);
  }
  for (int i = 0; i < n; i++) out[i] = rand_value(g, kind, out[i], NULL); /* (after the join: uniform_cmp) */
}

/* ... eight registers (two blocks a lane) a vote: one vote over a whole tile kept every offset and word live across
 * it (a GEMM epilogue's dropout at 64 x 128: 255 registers and 88 B of spills against 167 with the blocked layout,
 * a rand-in-dot-kernels hunt) */
static void rand_lane_pairs(cg *g, int kind, LLVMValueRef *o, int n, LLVMValueRef k0, LLVMValueRef k1, LLVMValueRef *out) {
  for (int c = 0; c < n; c += 8) rand_lane_chunk(g, kind, o + c, n - c < 8 ? n - c : 8, k0, k1, out + c);
}

/* Basis b of layout l is `step` along the last dimension and 0 along the others. */
static bool unit_last(const tl_layout *l, const int32_t *b, int step) {
  for (int d = 0; d < l->rank; d++)
    if (b[d] != (d == l->rank - 1 ? step : 0)) return false;
  return true;
}

void cg_emit_rand(cg *g, tl_op *o) {
  LLVMBuilderRef B = g->B;
  LLVMValueRef seed = cg_get(g, o->opnd[0])->r[0];
  LLVMValueRef k0 = LLVMBuildTrunc(B, seed, g->i32, "");
  LLVMValueRef k1 = LLVMBuildTrunc(B, LLVMBuildLShr(B, seed, cg_i64(g, 32), ""), g->i32, "");
  cg_val *off = cg_get(g, o->opnd[1]);
  tl_type *rt = &tl_val(g->f, o->res[0])->type;
  if (rt->kind == TL_KIND_TILE && tl_val(g->f, o->opnd[1])->type.layout != rt->layout)
    TL_INTERNAL(g->ctx, "codegen: rand's offsets are not in the result's layout");
  cg_val *d = cg_new_val(g, o->res[0], off->n);
  const tl_layout *l = rt->kind == TL_KIND_TILE ? cg_layout(g, o->res[0]) : NULL;
  int per = per_block(o->kind);
  const char *env = tl_code_env("TILEC_RAND_BLOCK"); /* measuring only: 0 = a block per element (the same bits) */
  if (env && env[0] == '0') per = 1;
  /* a layout whose registers hold pairs along the last dimension, not fours (the mma layout: columns 2c,
   * 2c + 1, then 8 rows down): a block a pair, where fours would take a block an element (the run-time
   * test of four consecutive offsets fails) */
  if (per == 4 && l && l->nreg >= 1 && unit_last(l, l->reg[0], 1) && (l->nreg < 2 || !unit_last(l, l->reg[1], 2))) {
    per = 2;
    /* ... and where the lane's bit 0 moves two columns, the neighbour lane's pair completes the four */
    bool all_canon = off->n % 4 == 0 && !tl_code_env_off("TILEC_RAND_LANES");
    for (int32_t r = 0; r < off->n && all_canon; r++) all_canon = tl_layout_canon_reg(l, r) == r;
    if (all_canon && unit_last(l, l->lane[0], 2)) {
      LLVMValueRef *ov = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)off->n);
      for (int32_t r = 0; r < off->n; r++)
        ov[r] = LLVMTypeOf(off->r[r]) != g->i32 ? LLVMBuildTrunc(B, off->r[r], g->i32, "") : off->r[r];
      rand_lane_pairs(g, o->kind, ov, off->n, k0, k1, d->r);
      return;
    }
  }
  for (int32_t r = 0; r < off->n;) {
    if (l && tl_layout_canon_reg(l, r) != r) {
      d->r[r] = d->r[tl_layout_canon_reg(l, r)];
      r++;
      continue;
    }
    LLVMValueRef ov[4];
    int n = 0;
    while (n < per && r + n < off->n && (!l || tl_layout_canon_reg(l, r + n) == r + n)) {
      ov[n] = off->r[r + n];
      if (LLVMTypeOf(ov[n]) != g->i32) ov[n] = LLVMBuildTrunc(B, ov[n], g->i32, "");
      n++;
    }
    if (n == per && per > 1) {
      rand_group(g, o->kind, ov, n, k0, k1, d->r + r, false);
      r += n;
    } else {
      d->r[r] = rand_one(g, o->kind, ov[0], k0, k1, false);
      r++;
    }
  }
}
