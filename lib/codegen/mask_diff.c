/* mask_diff.c: requires a select whose condition all_true (emit_elementwise.c) decided; rebuilds
 * that condition's per-register predicates where the mask is applied, from the program's scalars
 * and the layout's lane/warp part, so the index tiles it compares (attention's `rows`, `cols`)
 * are not kept in registers across the code the mask does not run in.
 *
 * Every index expression of all_true's grammar (iota, constants, scalars; splat, broadcast,
 * expand_dims, convert_layout; add, sub) is affine in the tile coordinates x:
 *     v(x) = sum of scalars (signed) + k + sum_d coef_d * x_d.
 * In a layout, coordinate d of register i is lw_d (the lane/warp part, one value a thread) plus
 * creg_i[d] (a constant; the bases are distinct powers of two, so the XOR is a sum).  So a compare
 * a(x) OP b(x) is, per register,
 *     D_i = a_i - b_i = T + K_i,   T = scalars + sum_d coef_d * lw_d (one value a thread),
 *                                  K_i = k + sum_d coef_d * creg_i[d] (an immediate),
 * and a_i OP b_i is T OP' -K_i: one compare of one register against an immediate per element
 * (attention's causal mask `rows >= cols`: T = m0 - n0 + row_lw - col_lw, K_i = row_i - col_i).
 *
 * Two forms, picked by a branch of the masked path: the difference form when every index is its
 * mathematical value (all_true's `fits`: no i32 add wraps; uniform) and |T| <= 2^30 (T computed
 * exactly in i64; per thread), so T and T + K_i (|K_i| < 2^29) are exact in i32; else the exact
 * form, which rebuilds a_i and b_i as the wrapping i32 sums they are (one add each, as the
 * interpreter computes them) and compares those.
 * Both forms compute the lane/warp parts from the thread id read afresh in the masked block (an opaque
 * read of %tid.x), not from the prologue's: LICM would otherwise hoist their loop-invariant sums into the
 * preheader and keep them in registers across the whole loop, which is what cost other kernels spills.
 * Default on in the two-program wgmma attention kernel (route_pipeline's f->two_programs: D64 at
 * every S, D128 where the fa3 form is not taken), where the H200 measured it: D64 causal +10-13 %
 * at S 1k / 4k / 16k, full +1 % (bench/RESULTS.md, seventeenth session).  Elsewhere opt-in, since a
 * few other kernels move either way (sixteenth session, mask5) and none was measured:
 * TILEC_MASK_DIFF=1 on everywhere, =0 off everywhere (off: the selects read the compare's
 * registers); =2 on everywhere with the exact form every time (a test of that path, which real
 * sizes never reach). */
#include "cg.h"
#include "code_env.h"

#define AFF_TERMS 16
#define AFF_KMAX (1LL << 29)

typedef struct aff {
  int rank;
  int nterm;
  int32_t term[AFF_TERMS]; /* scalar values */
  int8_t sign[AFF_TERMS];
  int64_t coef[TL_MAX_RANK];
  int64_t k;
} aff;

static bool aff_add(aff *r, const aff *a, const aff *b, int sb) {
  if (a->nterm + b->nterm > AFF_TERMS) return false;
  *r = *a;
  for (int t = 0; t < b->nterm; t++) {
    r->term[r->nterm] = b->term[t];
    r->sign[r->nterm++] = (int8_t)(sb * b->sign[t]);
  }
  for (int d = 0; d < TL_MAX_RANK; d++) r->coef[d] += sb * b->coef[d];
  r->k += sb * b->k;
  return true;
}

/* The coordinates of v's tile after the shape op d (broadcast, expand_dims, convert_layout) of
 * its operand, whose affine form is *a (in place). */
static void aff_reshape(tl_func *f, tl_op *d, aff *a) {
  tl_type *src = &tl_val(f, d->opnd[0])->type, *dst = &tl_val(f, d->res[0])->type;
  if (src->kind != TL_KIND_TILE) { /* a scalar spread over the tile */
    a->rank = dst->rank;
    return;
  }
  if (d->opc == TL_OP_expand_dims) {
    for (int j = dst->rank - 1; j > d->axis; j--) a->coef[j] = a->coef[j - 1];
    a->coef[d->axis] = 0;
  } else if (d->opc == TL_OP_broadcast) {
    for (int j = 0; j < dst->rank; j++)
      if (src->shape[j] == 1) a->coef[j] = 0; /* x is 0 there in the source */
  }
  a->rank = dst->rank;
}

/* v as an affine form; false when v is outside all_true's grammar or too large. */
static bool aff_of(tl_func *f, int32_t v, aff *r, int depth) {
  tl_value *x = tl_val(f, v);
  tl_dtype dt = (tl_dtype)x->type.dtype;
  if (depth > 16 || !(dt == TL_I32 || dt == TL_I64)) return false;
  *r = (aff){0};
  if (x->type.kind != TL_KIND_TILE) {
    r->nterm = 1;
    r->term[0] = v;
    r->sign[0] = 1;
    return true;
  }
  r->rank = x->type.rank;
  if (x->def < 0) return false;
  tl_op *d = tl_op_at(f, x->def);
  switch (d->opc) {
  case TL_OP_const: r->k = d->ival; return true;
  case TL_OP_iota: r->coef[0] = 1; return x->type.rank == 1;
  case TL_OP_splat:
  case TL_OP_broadcast:
  case TL_OP_expand_dims:
  case TL_OP_convert_layout:
    if (!aff_of(f, d->opnd[0], r, depth + 1)) return false;
    aff_reshape(f, d, r);
    return true;
  case TL_OP_add:
  case TL_OP_sub: {
    aff a, b;
    if (!aff_of(f, d->opnd[0], &a, depth + 1) || !aff_of(f, d->opnd[1], &b, depth + 1)) return false;
    return aff_add(r, &a, &b, d->opc == TL_OP_add ? 1 : -1);
  }
  default: return false;
  }
}

/* The compare under the select's condition c: its kind, and its operands' affine forms in c's
 * coordinates (through broadcast / expand_dims / convert_layout of the i1 tile). */
static bool cond_of(tl_func *f, int32_t c, int *kind, aff *a, aff *b, int depth) {
  tl_value *x = tl_val(f, c);
  if (depth > 16 || x->type.kind != TL_KIND_TILE || x->def < 0) return false;
  tl_op *d = tl_op_at(f, x->def);
  if (d->opc == TL_OP_broadcast || d->opc == TL_OP_expand_dims || d->opc == TL_OP_convert_layout) {
    if (tl_val(f, d->opnd[0])->type.kind != TL_KIND_TILE || !cond_of(f, d->opnd[0], kind, a, b, depth + 1))
      return false;
    aff_reshape(f, d, a);
    aff_reshape(f, d, b);
    return true;
  }
  if (d->opc != TL_OP_cmp) return false;
  if (d->kind != TL_CMP_LT && d->kind != TL_CMP_LE && d->kind != TL_CMP_GT && d->kind != TL_CMP_GE) return false;
  /* the difference form is for i32 indices (all_true's fits covers their adds) */
  if (tl_val(f, d->opnd[0])->type.dtype != TL_I32) return false;
  *kind = d->kind;
  return aff_of(f, d->opnd[0], a, 0) && aff_of(f, d->opnd[1], b, 0);
}

/* The largest |K_i| over the tile of shape sh: |k| + sum_d |coef_d| (sh_d - 1). */
static int64_t aff_kbound(const aff *a, const int32_t *sh) {
  int64_t m = a->k < 0 ? -a->k : a->k;
  for (int d = 0; d < a->rank; d++) {
    int64_t c = a->coef[d] < 0 ? -a->coef[d] : a->coef[d];
    if (c > AFF_KMAX) return AFF_KMAX + 1;
    m += c * (sh[d] - 1);
  }
  return m;
}

bool cg_mask_diff_on(cg *g) {
  const char *e = tl_code_env("TILEC_MASK_DIFF"); /* 1: on; 2: on, the exact form always (testing) */
  if (e && *e) return e[0] == '1' || e[0] == '2'; /* (empty = unset, as the cache key reads it) */
  return g->f->two_programs;
}

bool cg_mask_diff_fits(cg *g, int32_t c) {
  if (!cg_mask_diff_on(g)) return false;
  int kind;
  aff a, b, dd;
  if (!cond_of(g->f, c, &kind, &a, &b, 0) || !aff_add(&dd, &a, &b, -1)) return false;
  const int32_t *sh = tl_val(g->f, c)->type.shape;
  return aff_kbound(&dd, sh) < AFF_KMAX && aff_kbound(&a, sh) < AFF_KMAX && aff_kbound(&b, sh) < AFF_KMAX;
}

/* The lane/warp part of coordinate d of layout lid from the ids lane and warp (as ensure_lw). */
static LLVMValueRef lane_warp_part(cg *g, int32_t lid, int d, LLVMValueRef lane, LLVMValueRef warp) {
  const tl_layout *l = tl_layout_at(g->f, lid);
  LLVMValueRef acc = NULL;
  for (int src = 0; src < 2; src++) {
    int nb = src ? l->nwarp : TL_LAYOUT_LANE_BITS;
    for (int j = 0; j < nb; j++) {
      int32_t b = src ? l->warp[j][d] : l->lane[j][d];
      if (d >= l->rank || !b) continue;
      int sh = 0;
      while ((1 << sh) != b) sh++;
      LLVMValueRef id = src ? warp : lane;
      LLVMValueRef bit = j ? LLVMBuildLShr(g->B, id, cg_i32(g, j), "") : id;
      bit = LLVMBuildAnd(g->B, bit, cg_i32(g, 1), "");
      if (sh) bit = LLVMBuildShl(g->B, bit, cg_i32(g, sh), "");
      acc = acc ? LLVMBuildOr(g->B, acc, bit, "") : bit;
    }
  }
  return acc ? acc : cg_i32(g, 0);
}

/* T of form a at the builder: a wrapping i32 sum, or (wide) the exact i64 one; the lane/warp parts
 * from the ids lane and warp. */
static LLVMValueRef aff_thread_part(cg *g, const aff *a, int32_t lid, bool wide, LLVMValueRef lane,
                                    LLVMValueRef warp) {
  LLVMTypeRef ty = wide ? g->i64 : g->i32;
  LLVMValueRef s = LLVMConstInt(ty, 0, 0);
  for (int i = 0; i < a->nterm; i++) {
    LLVMValueRef v = cg_get(g, a->term[i])->r[0];
    if (LLVMTypeOf(v) != ty) v = wide ? LLVMBuildSExt(g->B, v, ty, "") : LLVMBuildTrunc(g->B, v, ty, "");
    s = a->sign[i] > 0 ? LLVMBuildAdd(g->B, s, v, "") : LLVMBuildSub(g->B, s, v, "");
  }
  for (int d = 0; d < a->rank; d++) {
    if (!a->coef[d]) continue;
    LLVMValueRef lw = lane_warp_part(g, lid, d, lane, warp);
    if (wide) lw = LLVMBuildZExt(g->B, lw, ty, "");
    s = LLVMBuildAdd(g->B, s, LLVMBuildMul(g->B, lw, LLVMConstInt(ty, (unsigned long long)a->coef[d], 1), ""), "");
  }
  return s;
}

/* The thread's lane and warp ids read at the builder (an opaque read of %tid.x, then what the
 * prologue computes), so that nothing of a masked block is hoisted into the loop's preheader and
 * kept in registers across the whole loop (causal attention's rows and the columns' lane part). */
static void fresh_ids(cg *g, LLVMValueRef *lane, LLVMValueRef *warp) {
  LLVMValueRef tid = cg_asm(g, g->i32, "mov.u32 $0, %tid.x;", "=r", NULL, 0, true);
  *lane = LLVMBuildAnd(g->B, tid, cg_i32(g, 31), "");
  *warp = LLVMBuildLShr(g->B, tid, cg_i32(g, 5), "");
  if (cg_ws_pingpong(g)) *warp = LLVMBuildAnd(g->B, *warp, cg_i32(g, 3), "");
}

static int64_t aff_reg_const(const aff *a, const tl_layout *l, int32_t i) {
  int32_t c[TL_MAX_RANK] = {0};
  tl_layout_reg_coords(l, i, c);
  int64_t k = a->k;
  for (int d = 0; d < a->rank; d++) k += a->coef[d] * c[d];
  return k;
}

LLVMValueRef cg_mask_diff_t(cg *g, int32_t c, int32_t lid) {
  int kind;
  aff a, b, dd;
  if (!cond_of(g->f, c, &kind, &a, &b, 0) || !aff_add(&dd, &a, &b, -1))
    TL_INTERNAL(g->ctx, "codegen: mask_diff on a condition it does not take");
  LLVMValueRef lane, warp;
  fresh_ids(g, &lane, &warp);
  return aff_thread_part(g, &dd, lid, true, lane, warp);
}

void cg_mask_diff_preds(cg *g, int32_t c, int32_t lid, LLVMValueRef t, LLVMValueRef *pred) {
  const tl_layout *l = tl_layout_at(g->f, lid);
  int32_t n = tl_layout_nregs(l);
  int kind;
  aff a, b, dd;
  if (!cond_of(g->f, c, &kind, &a, &b, 0) || !aff_add(&dd, &a, &b, -1))
    TL_INTERNAL(g->ctx, "codegen: mask_diff on a condition it does not take");
  LLVMIntPredicate p = kind == TL_CMP_LT ? LLVMIntSLT : kind == TL_CMP_LE ? LLVMIntSLE
                     : kind == TL_CMP_GT ? LLVMIntSGT : LLVMIntSGE;
  if (!t) { /* the exact form: a_i and b_i as the wrapping i32 sums they are */
    LLVMValueRef lane, warp;
    fresh_ids(g, &lane, &warp);
    LLVMValueRef ta = aff_thread_part(g, &a, lid, false, lane, warp);
    LLVMValueRef tb = aff_thread_part(g, &b, lid, false, lane, warp);
    for (int32_t i = 0; i < n; i++) {
      if (tl_layout_canon_reg(l, i) != i) continue;
      LLVMValueRef ai = LLVMBuildAdd(g->B, ta, cg_i32(g, (int32_t)(uint32_t)aff_reg_const(&a, l, i)), "");
      LLVMValueRef bi = LLVMBuildAdd(g->B, tb, cg_i32(g, (int32_t)(uint32_t)aff_reg_const(&b, l, i)), "");
      pred[i] = LLVMBuildICmp(g->B, p, ai, bi, "");
    }
    return;
  }
  /* D_i = T + K_i OP 0  <=>  T OP -K_i (the caller's branch: |T| <= 2^30, |K_i| < 2^29) */
  for (int32_t i = 0; i < n; i++) {
    if (tl_layout_canon_reg(l, i) != i) continue;
    pred[i] = LLVMBuildICmp(g->B, p, t, cg_i32(g, -aff_reg_const(&dd, l, i)), "");
  }
}
