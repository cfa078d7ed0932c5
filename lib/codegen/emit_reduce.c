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
 * Step 3's barriers (own_slot / lead_barrier_needed): in a kernel without a dot each reduce
 * has its own slot of shared memory below the scratch other ops share, so the barrier
 * before its writes only guards against the readers of its own previous execution.  It is
 * left out where there is none (a reduce run once a program) or where another cross-warp
 * reduce in the same loop body, unconditional, puts its barrier between any two executions
 * (a chunk loop's max and sum): one barrier a reduce instead of two.  `TILEC_RED_SLOTS=0`:
 * the shared scratch and both barriers everywhere. 
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
#include "ring.h"

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

/* The number of warp bits along the reduced axis of reduce op o (0: no shared memory). */
static int warp_bits_along(cg *g, const tl_op *o) {
  const tl_layout *ls = cg_layout(g, o->opnd[0]);
  int n = 0;
  for (int j = 0; j < ls->nwarp; j++) n += ls->warp[j][o->axis] != 0;
  return n;
}

/* Reduces of this kernel get their own shared arrays: kernels without a dot (row kernels;
 * dot kernels keep the scratch, their shared memory is planned to the byte). */
static bool own_slot(cg *g) {
  if (tl_code_env_off("TILEC_RED_SLOTS")) return false;
  for (int32_t i = 0; i < g->f->ops.len; i++)
    if (g->f->ops.data[i].opc == TL_OP_dot && !(g->f->ops.data[i].flags & TL_OPF_DEAD)) return false;
  return true;
}

/* Whether reduce op o (with its own slot) must wait at a barrier before writing it: it may run
 * again while some warp still reads its previous partials.  Not when it runs once a program,
 * nor when another unconditional cross-warp reduce of the same loop body (whose barrier after
 * its writes every thread passes after reading o's) separates any two executions. */
static bool lead_barrier_needed(cg *g, const tl_op *o) {
  tl_func *f = g->f;
  const tl_region *loop_body;
  if (o->parent < 0) {
    if (!f->row_ahead && !f->persist && !f->ws) return false; /* once a program */
    loop_body = &f->body; /* codegen loops over the tiles */
  } else {
    const tl_op *p = tl_op_at(f, o->parent);
    if (p->opc != TL_OP_for) return true; /* inside an if: keep it */
    loop_body = &p->regions[0]; /* (a for has the one region o is in) */
  }
  for (int i = 0; i < loop_body->ops.len; i++) {
    const tl_op *x = tl_op_at(f, loop_body->ops.data[i]);
    if (x != o && x->opc == TL_OP_reduce && tl_val(f, x->opnd[0])->type.kind == TL_KIND_TILE && warp_bits_along(g, x))
      return false;
  }
  return true;
}

/* Each cross-warp reduce of a kernel without a dot gets its own slot at the bottom of shared
 * memory (the scratch other ops share starts above them); red_off[op] is its byte offset, -1
 * for the reduces that keep the scratch.  Returns the bytes taken (called by cg_make_plan). */
int cg_plan_reduce_slots(cg *g, int32_t **red_off) {
  tl_func *f = g->f;
  *red_off = NULL;
  if (!own_slot(g)) return 0;
  int32_t *off = tl_alloc(&g->ctx->arena, sizeof *off * ((size_t)f->ops.len + 1));
  int total = 0;
  for (int32_t i = 0; i < f->ops.len; i++) {
    tl_op *o = &f->ops.data[i];
    off[i] = -1;
    if ((o->flags & TL_OPF_DEAD) || o->opc != TL_OP_reduce) continue;
    const tl_type *st = &tl_val(f, o->opnd[0])->type, *rt = &tl_val(f, o->res[0])->type;
    if (st->kind != TL_KIND_TILE) continue;
    int nwa = warp_bits_along(g, o);
    if (!nwa) continue;
    int64_t numel = rt->kind == TL_KIND_TILE ? tl_type_numel(rt) : 1;
    int64_t bytes = numel * ((int64_t)1 << nwa) * tl_dtype_bytes(acc_dtype((tl_dtype)st->dtype));
    if (bytes > 4096 || total + bytes > 16384) continue;
    off[i] = total;
    total += (int)((bytes + 15) / 16 * 16);
  }
  *red_off = off;
  return total;
}

/* Byte `off` of the partials: in the reduce's own slot at slot_off, or (-1) in the scratch. */
static LLVMValueRef partial_ptr(cg *g, int32_t slot_off, LLVMValueRef off) {
  return slot_off >= 0 ? cg_smem_ptr(g, LLVMBuildAdd(g->B, off, cg_i32(g, slot_off), "")) : cg_scratch_ptr(g, off);
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
  /* attention (measuring, off by default): the row max and sum in independent chains, combined
   * pairwise.  TILEC_ATTN_RED_CHAINS=1 in the fa3 form (emit_overlap.c turns_late: a warpgroup's
   * softmax runs alone on its sub-partitions; ncu put 13 % of its stall samples on the row max's one
   * dependent FMNMX chain), =all also in every other loop of two or more wgmma dots (the two-program
   * kernels).  H200 (bench/RESULTS.md fifteenth session, branch attn7): 1 = 0.98-1.00x one chain in
   * the form, all = 0.97-1.00x the two-program kernels; so one chain. */
  const char *chains = tl_code_env("TILEC_ATTN_RED_CHAINS");
  bool planned = g->plan && g->plan_f == g->f;
  if (planned && chains &&
      ((chains[0] == '1' && !chains[1] && g->plan->turns_late) || (!strcmp(chains, "all") && g->plan->nwg >= 2)))
    parts = RED_PARTIALS;
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
    int32_t slot_off = g->plan->red_off ? g->plan->red_off[o - f->ops.data] : -1;
    bool own = slot_off >= 0; /* this reduce's own slot (cg_plan_reduce_slots) */
    if (!own) cg_scratch_use(g, (int)(numel * nw * bytes));
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
    if (!own || lead_barrier_needed(g, o)) cg_barrier(g);
    for (int32_t t = 0; t < n; t++) {
      if (!acc[t]) continue;
      LLVMValueRef off = LLVMBuildMul(g->B, LLVMBuildAdd(g->B, slot[t], wa, ""), cg_i32(g, bytes), "");
      LLVMBuildStore(g->B, cg_to_mem(g, acc[t], adt), partial_ptr(g, slot_off, off));
    }
    cg_barrier(g);
    for (int32_t t = 0; t < n; t++) {
      if (!acc[t]) continue;
      LLVMValueRef tot = NULL;
      for (int32_t w = 0; w < nw; w++) {
        LLVMValueRef off = LLVMBuildMul(g->B, LLVMBuildAdd(g->B, slot[t], cg_i32(g, w), ""), cg_i32(g, bytes), "");
        LLVMValueRef x = cg_from_mem(g, LLVMBuildLoad2(g->B, mt, partial_ptr(g, slot_off, off), ""), adt);
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
