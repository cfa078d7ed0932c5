/* emit_ring_rows.c: requires the main-loop plan up to the TMA decision (emit_tma.c cg_plan_tma);
 * makes a loop's 1-D row loads whose view advances with the loop (tl_row_stream_view: the attention
 * backward's `load(LSE[z, h, m0 : m0 + BM], other = inf)` each step) streams of the loop's TMA ring
 * (TILEC_ROW_STREAM, on by default since the twenty-first session: the backward 1.13-1.27x on an
 * H100, bench/RESULTS.md "twenty-first session"; =0 off): one box of the row a stage, on the stage's
 * mbarrier beside the dot operands' boxes, read back from shared memory by each thread in the load's own layout
 * (emit_prologue.c read_slot), and puts the load's `other` where the view leaves the tensor
 * (TMA's out-of-bounds fill is zeros).  docs/pipelines.md "Ring rows". */
#include <string.h>

#include "cg.h"
#include "code_env.h"
#include "schedule.h"

#include "ring.h"

/* Why loop R's rows cannot stream through its TMA ring, or NULL (R->tma decided true). */
static const char *ring_unfit(cg *g, cg_ring *R) {
  if (cg_ws_wanted(g, R)) return "the ring is warp-specialized (the producer's loop issues only dot operands)";
  if (g->f->cluster > TL_CLUSTER_1X1) return "clusters multicast the dot operands' boxes only";
  if (g->plan->rope) return "fa3's rotating producer fills the stages";
  if (R->stages < 2) return "the ring has one stage";
  return NULL;
}

int cg_plan_ring_rows(cg *g, cg_ring *R, int persist, int nmaps, tl_sbuf *note) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  const char *env = tl_code_env("TILEC_ROW_STREAM");
  if (env && strcmp(env, "1")) return persist; /* (unset: on; =0 or any other value: off) */
  const char *why = ring_unfit(g, R);
  int64_t budget = tl_arch_smem_budget(g->o ? g->o->arch : NULL);
  tl_region *body = &tl_op_at(f, R->for_op)->regions[0];
  for (int i = 0; i < body->ops.len; i++) {
    int32_t ld = body->ops.data[i];
    tl_op *o = tl_op_at(f, ld);
    const char *no;
    if (o->opc != TL_OP_load || (o->flags & TL_OPF_DEAD) || p->vkind[o->res[0]] == SRC_STREAM) continue;
    if (!tl_row_stream_view(f, ld, R->for_op, &no)) {
      /* (a 1-D tile load the rule refuses: said, so that --explain tells why it stays a global load) */
      if (tl_val(f, o->res[0])->type.kind == TL_KIND_TILE && tl_val(f, o->res[0])->type.rank == 1)
        tl_sbuf_printf(note, "; the 1-D load at %d:%d is no row stream: %s", o->loc.line, o->loc.col, no);
      continue;
    }
    if (!why && p->nstream == 16) why = "16 streams already";
    if (!why && p->ntma + nmaps >= TL_MAX_TMA) why = "no tensor map left";
    tl_type *lt = &tl_val(f, o->res[0])->type;
    tl_value *tv = tl_val(f, o->opnd[0]);
    int eb = tl_dtype_bytes((tl_dtype)tv->type.dtype);
    int stage_bytes = (lt->shape[0] * eb + 127) / 128 * 128; /* (TMA writes 128-byte aligned boxes) */
    int at = (persist + 127) / 128 * 128;
    if (!why && at + (int64_t)R->stages * stage_bytes > budget) why = "its slots do not fit in shared memory";
    if (why) {
      tl_sbuf_printf(note, "; the row load at %d:%d is no row stream: %s", o->loc.line, o->loc.col, why);
      continue;
    }
    cg_stream *s = &p->streams[p->nstream];
    memset(s, 0, sizeof *s);
    s->load_op = ld;
    s->for_op = R->for_op;
    s->rows = 1;
    s->cols = lt->shape[0];
    s->eb = eb;
    s->pitch = s->cols * eb;
    s->stage_bytes = stage_bytes;
    s->readers = 1;
    s->prologue = true; /* (read back into registers by its load, emit_prologue.c) */
    s->ring_row = true;
    s->row_base = -1;
    s->offset = at;
    persist = at + R->stages * stage_bytes;
    p->vkind[o->res[0]] = SRC_STREAM;
    p->vstream[o->res[0]] = p->nstream++;
    nmaps++;
  }
  return persist;
}

/* A constant whose bits are all zero (what TMA's out-of-bounds fill gives)? */
static bool zero_bits(cg *g, int32_t v) {
  tl_value *x = tl_val(g->f, v);
  if (x->def < 0) return false;
  tl_op *d = tl_op_at(g->f, x->def);
  if (d->opc == TL_OP_splat) return zero_bits(g, d->opnd[0]);
  if (d->opc != TL_OP_const) return false;
  return tl_dtype_is_float((tl_dtype)x->type.dtype) ? d->fval == 0.0 && !__builtin_signbit(d->fval) : d->ival == 0;
}

/* The load's `other` where the view leaves the tensor.  TMA fills what lies outside with zeros, the
 * load's default; any other `other` (the backward's LSE: inf) is put back per element, but only in a
 * step whose row is not wholly inside the tensor: a uniform branch on (start + cols <= size, the
 * scalar indices in range) skips it in every other step, so a step pays one compare and a branch,
 * not a compare and a select an element (the form the global load's predicates had).  Filling the
 * slot's tail instead would need generic-proxy stores into a slot TMA writes, a proxy fence and a
 * barrier in that step. */
void cg_ring_row_other(cg *g, tl_op *o, cg_stream *s, int32_t res) {
  tl_func *f = g->f;
  tl_value *tv = tl_val(f, o->opnd[0]);
  int rank = tv->type.rank;
  int32_t other = o->nopnd > 1 + rank ? o->opnd[1 + rank] : -1;
  if (other < 0 || zero_bits(g, other)) return;
  cg_tensor *t = &g->tensors[tv->index];
  tl_type *rt = &tl_val(f, res)->type;
  const tl_layout *l = cg_layout(g, res);
  int32_t n = tl_layout_nregs(l);
  cg_val *d = cg_get(g, res);
  cg_val *ov = cg_get(g, other);
  tl_dtype odt = (tl_dtype)tl_val(f, other)->type.dtype, mdt = (tl_dtype)tv->type.dtype, rdt = (tl_dtype)rt->dtype;
  /* (uniform) the scalar indices in range, and the row's room left: size - start */
  LLVMValueRef ok = NULL, left = NULL;
  for (int k = 0; k < rank; k++) {
    LLVMValueRef ix = cg_to_i64(g, cg_get(g, o->opnd[1 + k])->r[0]);
    LLVMValueRef sz = LLVMBuildZExt(g->B, t->size[k], g->i64, "");
    if (k == rank - 1) {
      left = LLVMBuildSub(g->B, sz, ix, "");
      continue;
    }
    LLVMValueRef c = LLVMBuildICmp(g->B, LLVMIntULT, ix, sz, "");
    ok = ok ? LLVMBuildAnd(g->B, ok, c, "") : c;
  }
  LLVMValueRef whole = LLVMBuildICmp(g->B, LLVMIntSGE, left, cg_i64(g, s->cols), "");
  if (ok) whole = LLVMBuildAnd(g->B, whole, ok, "");
  LLVMBasicBlockRef from = LLVMGetInsertBlock(g->B);
  LLVMBasicBlockRef tail = LLVMAppendBasicBlockInContext(g->C, g->fn, "row.tail");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->C, g->fn, "row.join");
  cg_cond_br_likely(g, whole, join, tail);
  LLVMPositionBuilderAtEnd(g->B, tail);
  LLVMValueRef col_l = LLVMBuildZExt(g->B, cg_lane_warp(g, rt->layout, 0), g->i64, "");
  LLVMValueRef *sel = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)n);
  for (int32_t r = 0; r < n; r++) {
    if (tl_layout_canon_reg(l, r) != r) continue;
    int32_t k[TL_MAX_RANK];
    tl_layout_reg_coords(l, r, k);
    LLVMValueRef in = LLVMBuildICmp(g->B, LLVMIntSLT, LLVMBuildAdd(g->B, col_l, cg_i64(g, k[0]), ""), left, "");
    if (ok) in = LLVMBuildAnd(g->B, in, ok, "");
    LLVMValueRef x = cg_cast(g, cg_cast(g, ov->r[0], odt, mdt), mdt, rdt); /* (a scalar: tl_row_stream_view) */
    sel[r] = LLVMBuildSelect(g->B, in, d->r[r], x, "");
  }
  LLVMBuildBr(g->B, join);
  LLVMPositionBuilderAtEnd(g->B, join);
  for (int32_t r = 0; r < n; r++) {
    if (tl_layout_canon_reg(l, r) != r) continue;
    LLVMValueRef phi = LLVMBuildPhi(g->B, LLVMTypeOf(d->r[r]), "");
    LLVMValueRef in[2] = {d->r[r], sel[r]};
    LLVMBasicBlockRef bb[2] = {from, tail};
    LLVMAddIncoming(phi, in, bb, 2);
    d->r[r] = phi;
  }
  for (int32_t r = 0; r < n; r++)
    if (tl_layout_canon_reg(l, r) != r) d->r[r] = d->r[tl_layout_canon_reg(l, r)];
}
