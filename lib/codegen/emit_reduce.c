/* emit_reduce.c: requires the result in the slice of the operand's layout
 * (layout_assign); lowers reduce(sum|max|min, axis) in three steps, each over
 * the input bits whose basis points along the axis:
 *   1. registers: combine the registers of a thread that differ only there;
 *   2. lanes: shfl.sync.bfly over each such lane bit (a butterfly, so every
 *      lane ends with the full result);
 *   3. warps: through shared memory: each warp writes its partials, barrier,
 *      every thread reads the partials of all warps along the axis in order.
 * Replicated bits (zero bases) are skipped: they hold copies, not parts.
 * f16/bf16 are combined in f32 and rounded once at the end.
 *
 * Row kernels, opt-in (f->access_split; docs/rows.md "rows4"): `TILEC_REDUCE_ILP=1`
 * keeps RED_PARTIALS partial results per result register in step 1, the k-th
 * register of a result going to partial k % RED_PARTIALS, combined pairwise at
 * the end (instead of one serial chain); `TILEC_REDUCE_FMA=1` accumulates a sum
 * of f32 products with fmas (the products unrounded).  The language leaves a
 * reduction's order free; measured on the H200 neither moved layernorm or rmsnorm
 * (0.750 / 0.901 of the copy bandwidth off, 0.754 / 0.903 on). */
#include <string.h>

#include "cg.h"
#include "code_env.h"

enum { RED_PARTIALS = 4 };

LLVMValueRef cg_shfl_xor(cg *g, LLVMValueRef v, int mask) {
  LLVMTypeRef t = LLVMTypeOf(v);
  if (t == g->f32) {
    LLVMValueRef a[4] = {cg_i32(g, -1), v, cg_i32(g, mask), cg_i32(g, 31)};
    return cg_intrinsic(g, "llvm.nvvm.shfl.sync.bfly.f32", g->f32, a, 4);
  }
  if (t == g->i64) {
    LLVMValueRef lo = LLVMBuildTrunc(g->B, v, g->i32, "");
    LLVMValueRef hi = LLVMBuildTrunc(g->B, LLVMBuildLShr(g->B, v, cg_i64(g, 32), ""), g->i32, "");
    lo = cg_shfl_xor(g, lo, mask);
    hi = cg_shfl_xor(g, hi, mask);
    return LLVMBuildOr(g->B, LLVMBuildZExt(g->B, lo, g->i64, ""),
                       LLVMBuildShl(g->B, LLVMBuildZExt(g->B, hi, g->i64, ""), cg_i64(g, 32), ""), "");
  }
  if (t == g->i32) {
    LLVMValueRef a[4] = {cg_i32(g, -1), v, cg_i32(g, mask), cg_i32(g, 31)};
    return cg_intrinsic(g, "llvm.nvvm.shfl.sync.bfly.i32", g->i32, a, 4);
  }
  /* narrower ints */
  LLVMValueRef w = LLVMBuildZExt(g->B, v, g->i32, "");
  return LLVMBuildTrunc(g->B, cg_shfl_xor(g, w, mask), t, "");
}

/* The type the combination runs in. */
static tl_dtype acc_dtype(tl_dtype dt) { return dt == TL_F16 || dt == TL_BF16 ? TL_F32 : dt; }

static LLVMValueRef combine(cg *g, int kind, LLVMValueRef a, LLVMValueRef b, tl_dtype adt) {
  int opc = kind == TL_RED_SUM ? TL_OP_add : kind == TL_RED_MAX ? TL_OP_max : TL_OP_min;
  if (adt == TL_I1 && kind == TL_RED_SUM) opc = TL_OP_xor; /* sum of i1 wraps mod 2 */
  return cg_binop(g, opc, 0, a, b, adt);
}

void cg_emit_reduce(cg *g, tl_op *o) {
  cg_make_plan(g);
  tl_func *f = g->f;
  int32_t src = o->opnd[0], res = o->res[0];
  tl_type *st = &tl_val(f, src)->type, *rt = &tl_val(f, res)->type;
  if (st->kind != TL_KIND_TILE) cg_unsupported(g, "reduce of a scalar");
  tl_dtype dt = (tl_dtype)st->dtype, adt = acc_dtype(dt);
  if (dt == TL_F8E4M3 || dt == TL_F8E5M2) cg_unsupported(g, "reduce over %s (cast to f32 first)", tl_dtype_name(dt));
  int axis = o->axis;
  const tl_layout *ls = cg_layout(g, src);
  bool to_scalar = rt->kind != TL_KIND_TILE;
  const tl_layout *lr = to_scalar ? NULL : cg_layout(g, res);
  if (lr && lr->nreg != ls->nreg) TL_INTERNAL(g->ctx, "codegen: reduce result is not a slice of its operand");
  cg_val *sv = cg_get(g, src);
  int32_t n = tl_layout_nregs(ls);
  /* 1. registers: source register r lands in result register r (a slice keeps
   * the register bits); accumulate into the canonical one of the result, in
   * `parts` independent chains combined pairwise. */
  LLVMValueRef *acc = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)n);
  int parts = g->f->access_split && tl_code_env_on("TILEC_REDUCE_ILP") ? RED_PARTIALS : 1;
  bool fma = g->f->access_split && o->kind == TL_RED_SUM && dt == TL_F32 && tl_code_env_on("TILEC_REDUCE_FMA");
  LLVMValueRef *part = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)n * (size_t)parts);
  int32_t *count = tl_alloc(&g->ctx->arena, sizeof(int32_t) * (size_t)n);
  memset(part, 0, sizeof(LLVMValueRef) * (size_t)n * (size_t)parts);
  memset(count, 0, sizeof(int32_t) * (size_t)n);
  for (int32_t r = 0; r < n; r++) {
    if (tl_layout_canon_reg(ls, r) != r) continue;
    int32_t t = to_scalar ? 0 : tl_layout_canon_reg(lr, r);
    LLVMValueRef x = cg_cast(g, sv->r[r], dt, adt), *p = &part[(size_t)t * (size_t)parts + (size_t)(count[t]++ % parts)];
    if (*p && fma && LLVMIsAInstruction(x) && LLVMGetInstructionOpcode(x) == LLVMFMul) {
      LLVMValueRef a[3] = {LLVMGetOperand(x, 0), LLVMGetOperand(x, 1), *p}; /* the product unrounded */
      *p = cg_intrinsic(g, "llvm.fma.f32", g->f32, a, 3);
    } else {
      *p = *p ? combine(g, o->kind, *p, x, adt) : x;
    }
  }
  for (int32_t t = 0; t < n; t++) { /* the partials pairwise: (p0 + p1) + (p2 + p3) */
    LLVMValueRef *p = &part[(size_t)t * (size_t)parts];
    for (int step = 1; step < parts; step *= 2)
      for (int k = 0; k + step < parts; k += 2 * step)
        if (p[k + step]) p[k] = p[k] ? combine(g, o->kind, p[k], p[k + step], adt) : p[k + step];
    acc[t] = p[0];
  }
  /* 2. lanes along the axis */
  for (int j = 0; j < TL_LAYOUT_LANE_BITS; j++) {
    if (!ls->lane[j][axis]) continue;
    for (int32_t t = 0; t < n; t++)
      if (acc[t]) acc[t] = combine(g, o->kind, acc[t], cg_shfl_xor(g, acc[t], 1 << j), adt);
  }
  /* 3. warps along the axis */
  int nwa = 0, wbit[TL_LAYOUT_MAX_WARP_BITS];
  for (int j = 0; j < ls->nwarp; j++)
    if (ls->warp[j][axis]) wbit[nwa++] = j;
  if (nwa) {
    int bytes = tl_dtype_bytes(adt);
    int32_t nw = 1 << nwa;
    int64_t numel = to_scalar ? 1 : tl_type_numel(rt);
    cg_scratch_use(g, (int)(numel * nw * bytes));
    /* this warp's index among the warps along the axis */
    LLVMValueRef wa = cg_i32(g, 0);
    for (int k = 0; k < nwa; k++) {
      LLVMValueRef bit = LLVMBuildAnd(g->B, LLVMBuildLShr(g->B, g->warp, cg_i32(g, wbit[k]), ""), cg_i32(g, 1), "");
      wa = LLVMBuildOr(g->B, wa, LLVMBuildShl(g->B, bit, cg_i32(g, k), ""), "");
    }
    LLVMTypeRef mt = cg_mem_type(g, adt);
    LLVMValueRef *slot = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)n);
    for (int32_t t = 0; t < n; t++) {
      if (!acc[t]) continue;
      LLVMValueRef flat = cg_i32(g, 0);
      for (int d = 0; !to_scalar && d < rt->rank; d++)
        flat = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, flat, cg_i32(g, rt->shape[d]), ""), cg_coord(g, rt->layout, t, d), "");
      slot[t] = LLVMBuildMul(g->B, flat, cg_i32(g, nw), "");
    }
    cg_barrier(g);
    for (int32_t t = 0; t < n; t++) {
      if (!acc[t]) continue;
      LLVMValueRef off = LLVMBuildMul(g->B, LLVMBuildAdd(g->B, slot[t], wa, ""), cg_i32(g, bytes), "");
      LLVMBuildStore(g->B, cg_to_mem(g, acc[t], adt), cg_scratch_ptr(g, off));
    }
    cg_barrier(g);
    for (int32_t t = 0; t < n; t++) {
      if (!acc[t]) continue;
      LLVMValueRef tot = NULL;
      for (int32_t w = 0; w < nw; w++) {
        LLVMValueRef off = LLVMBuildMul(g->B, LLVMBuildAdd(g->B, slot[t], cg_i32(g, w), ""), cg_i32(g, bytes), "");
        LLVMValueRef x = cg_from_mem(g, LLVMBuildLoad2(g->B, mt, cg_scratch_ptr(g, off), ""), adt);
        tot = tot ? combine(g, o->kind, tot, x, adt) : x;
      }
      acc[t] = tot;
    }
  }
  tl_dtype rdt = (tl_dtype)rt->dtype;
  if (to_scalar) {
    cg_new_val(g, res, 1)->r[0] = cg_cast(g, acc[0], adt, rdt);
    return;
  }
  cg_val *d = cg_new_val(g, res, n);
  for (int32_t r = 0; r < n; r++) {
    int32_t c = tl_layout_canon_reg(lr, r);
    if (c == r) {
      if (!acc[r]) TL_INTERNAL(g->ctx, "codegen: reduce left result register %d empty", (int)r);
      d->r[r] = cg_cast(g, acc[r], adt, rdt);
    } else {
      d->r[r] = d->r[c];
    }
  }
}
