/* swpipe: requires verified IR after route_pipeline (f->pipeline, f->stages,
 * f->warps); keeps every op and value; records per dot in f->sched
 * (lib/schedule.h) which operands stream global->shared through a cp.async
 * ring in the dot's loop (streamed[]) and the ring depth (stages), cut to
 * the arch's shared-memory budget.  Breaks nothing.  docs/scheduling.md. */
#include <stdio.h>
#include <string.h>

#include "schedule.h"
#include "rope_producer.h"

#define MAX_STREAMS 16 /* codegen's ring table sizes (lib/codegen/ring.h) */
#define MAX_RINGS 4

/* The load op operand `which` of dot D streams from, or -1 with the reason
 * (the rule codegen follows, lib/schedule.c; an 8-bit [K][N] B only for a
 * wgmma dot, which transposes it through shared memory). */
static int32_t stream_source(tl_func *f, int32_t D, int which, const int32_t *uses, const char **why) {
  bool k_contiguous;
  return tl_stream_source(f, D, which, uses, which == 1 && tl_dot_wgmma_kn8(f, D), &k_contiguous, why);
}

/* Bytes codegen keeps resident for an operand staged once before its loop
 * (rows padded by 16 bytes, 128-byte granules). */
static int64_t invariant_bytes(tl_func *f, int32_t D, int which) {
  const tl_type *t = &tl_val(f, tl_op_at(f, D)->opnd[which])->type;
  int eb = tl_dtype_bytes((tl_dtype)t->dtype);
  /* TILEC_ROPE_PRODUCER=1 (fa3, rope_producer.h): q1', q2' are swizzled wgmma atoms, unpadded,
   * which the fa3 ring's third stage needs (the padded estimate is 4 KiB over the budget) */
  tl_dot_sched *e = tl_sched_dot(f, D, false);
  if (e && e->swizzled && e->swizzle_bytes[which] && tl_rope_producer_on(f, NULL))
    return ((int64_t)t->shape[0] * t->shape[1] * eb + 1023) / 1024 * 1024;
  tl_value *x = tl_val(f, tl_op_at(f, D)->opnd[which]);
  bool b_kn = which == 1 && eb == 2 && !(x->def >= 0 && tl_op_at(f, x->def)->opc == TL_OP_trans);
  int64_t rows = which == 0 || b_kn ? t->shape[0] : t->shape[1];
  int64_t cols = which == 0 || b_kn ? t->shape[1] : t->shape[0];
  return (rows * (cols * eb + 16) + 127) / 128 * 128;
}

static bool run_swpipe(tl_func *f, const tl_pass_opts *o) {
  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  int32_t *uses = tl_count_uses(f);
  bool pipelining = f->pipeline != TL_PIPE_SIMPLE && f->stages >= 2;
  int32_t rings[MAX_RINGS], stream_load[MAX_STREAMS];
  int nstream = 0, nring = 0;
  int64_t ring_bytes = 0, resident = 0;
  bool *resident_seen = tl_alloc(&f->ctx->arena, (size_t)f->values.len + 1);
  memset(resident_seen, 0, (size_t)f->values.len + 1);
  const char *why[2] = {NULL, NULL};

  /* first: every dot's entry and its streamed operands */
  for (int32_t D = 0; D < f->ops.len; D++) {
    tl_op *op = tl_op_at(f, D);
    if ((op->flags & TL_OPF_DEAD) || op->opc != TL_OP_dot) continue;
    tl_dot_sched *d = tl_sched_dot(f, D, true);
    d->pipelined = true;
    d->stages = 1;
    d->streamed[0] = d->streamed[1] = false;
    d->prologue[0] = d->prologue[1] = 0;
    int32_t L = op->parent;
    if (!pipelining || L < 0 || tl_op_at(f, L)->opc != TL_OP_for) continue;
    for (int w = 0; w < 2; w++) {
      const tl_type *xt = &tl_val(f, op->opnd[w])->type;
      if (xt->kind != TL_KIND_TILE || xt->rank != 2) continue;
      int32_t ld = nstream < MAX_STREAMS ? stream_source(f, D, w, uses, &why[w]) : (why[w] = "too many streams", -1);
      int ri = 0;
      while (ld >= 0 && ri < nring && rings[ri] != L) ri++;
      if (ld >= 0 && ri == nring && nring == MAX_RINGS) ld = -1, why[w] = "too many pipelined loops";
      if (ld >= 0) {
        if (ri == nring) rings[nring++] = L;
        /* a load read by several dots streams once (one slot they share) */
        int k = 0;
        while (k < nstream && stream_load[k] != ld) k++;
        if (k == nstream) {
          stream_load[nstream++] = ld;
          const tl_type *lt = &tl_val(f, tl_op_at(f, ld)->res[0])->type;
          ring_bytes += (int64_t)lt->shape[0] * lt->shape[1] * tl_dtype_bytes((tl_dtype)lt->dtype);
        }
        tl_sched_dot(f, D, false)->streamed[w] = true;
        /* the K-major buffers the transposed 8-bit B goes through (codegen, dot_plan.c: two; one a ring stage
         * where the producer warpgroup transposes -- ws coop without a cluster: counted in the stage, or 3 stages
         * of a 128x256x128 fp8 [K][N] kernel asked for 245832 bytes, over the SM's 232448; a cliff hunt) */
        if (w == 1 && tl_dot_wgmma_kn8(f, D)) {
          const tl_type *bt = &tl_val(f, tl_op_at(f, ld)->res[0])->type;
          if (tl_ws_transposes_b(f)) ring_bytes += (int64_t)bt->shape[0] * bt->shape[1];
          else resident += 2 * (int64_t)bt->shape[0] * bt->shape[1];
        }
      } else if (tl_defined_outside(f, op->opnd[w], L)) {
        if (!resident_seen[op->opnd[w]]) resident += invariant_bytes(f, D, w);
        resident_seen[op->opnd[w]] = true;
      } else {
        /* an operand prologue: the loads it is computed from stream through
         * the ring too (their boxes, each once), read back into registers */
        int32_t pl[MAX_STREAMS];
        const char *pwhy;
        int np = tl_prologue_loads(f, D, w, pl, MAX_STREAMS, &pwhy);
        int fresh = 0;
        for (int i = 0; i < np; i++) {
          int k = 0;
          while (k < nstream && stream_load[k] != pl[i]) k++;
          fresh += k == nstream;
        }
        if (np <= 0 || nstream + fresh > MAX_STREAMS) continue;
        while (ri < nring && rings[ri] != L) ri++;
        if (ri == nring && nring == MAX_RINGS) continue;
        if (ri == nring) rings[nring++] = L;
        for (int i = 0; i < np; i++) {
          int k = 0;
          while (k < nstream && stream_load[k] != pl[i]) k++;
          if (k < nstream) continue;
          stream_load[nstream++] = pl[i];
          int32_t rows, base;
          const char *vwhy;
          tl_prologue_view(f, pl[i], L, (f->warps > 0 ? f->warps : 4) * 32, &rows, &base, &vwhy);
          const tl_type *lt = &tl_val(f, tl_op_at(f, pl[i])->res[0])->type;
          ring_bytes += (int64_t)rows * lt->shape[1] * tl_dtype_bytes((tl_dtype)lt->dtype);
        }
        tl_sched_dot(f, D, false)->prologue[w] = np;
      }
    }
  }

  /* then the ring depth: route_pipeline's stages, fewer while the rings and
   * the resident operands overflow the budget; below 2 nothing streams */
  int64_t budget = tl_arch_smem_budget(o->arch);
  int stages = f->stages;
  /* TILEC_ROPE_PRODUCER=1: the ring holds only k's halves and V (the tables are the producer's
   * global loads), fa3's three stages fit where attn_rope asks for two (rope_producer.h) */
  if (stages < 3 && tl_rope_producer_on(f, NULL)) stages = 3;
  while (stages > 2 && resident + stages * ring_bytes > budget) stages--;
  bool fits = nstream > 0 && resident + stages * ring_bytes <= budget;
  for (int i = 0; f->sched && i < ((tl_sched *)f->sched)->dots.len; i++) {
    tl_dot_sched *d = &((tl_sched *)f->sched)->dots.data[i];
    if (!d->pipelined) continue;
    if (!fits) d->streamed[0] = d->streamed[1] = false, d->prologue[0] = d->prologue[1] = 0;
    d->stages = d->streamed[0] || d->streamed[1] || d->prologue[0] || d->prologue[1] ? stages : 1;
  }

  if (!ex) return true;
  for (int32_t D = 0; D < f->ops.len; D++) {
    tl_op *op = tl_op_at(f, D);
    if ((op->flags & TL_OPF_DEAD) || op->opc != TL_OP_dot) continue;
    tl_dot_sched *d = tl_sched_dot(f, D, false);
    tl_sbuf_printf(ex, "swpipe: kernel '%s': dot at %d:%d: ", f->name, op->loc.line, op->loc.col);
    int32_t L = op->parent;
    if (L < 0 || tl_op_at(f, L)->opc != TL_OP_for) tl_sbuf_puts(ex, "not in a loop: stages=1, nothing streamed");
    else if (f->pipeline == TL_PIPE_SIMPLE) tl_sbuf_puts(ex, "pipeline=simple: stages=1, nothing streamed");
    else if (f->stages < 2) tl_sbuf_puts(ex, "stages=1 (route_pipeline): nothing streamed");
    else if (nstream > 0 && !fits)
      tl_sbuf_printf(ex, "rings of %lld B a stage + %lld B resident exceed %lld B (%s) even at 2 stages: nothing streamed",
                     (long long)ring_bytes, (long long)resident, (long long)budget, o->arch ? o->arch : "sm_90a");
    else {
      for (int w = 0; w < 2; w++) {
        if (w) tl_sbuf_puts(ex, ", ");
        tl_sbuf_printf(ex, "%c ", w ? 'b' : 'a');
        if (d->streamed[w]) tl_sbuf_puts(ex, "streams (cp.async ring)");
        else if (d->prologue[w])
          tl_sbuf_printf(ex, "a prologue of %d load%s streaming (cp.async ring; elementwise code between shared memory and the staging)",
                         d->prologue[w], d->prologue[w] > 1 ? "s" : "");
        else {
          /* recompute the reason of this operand */
          const char *r = "not a 2-D tile";
          const tl_type *xt = &tl_val(f, op->opnd[w])->type;
          /* (a load that could stream did not: the kernel's rings or streams were all taken) */
          if (xt->kind == TL_KIND_TILE && xt->rank == 2 && stream_source(f, D, w, uses, &r) >= 0)
            r = "a load, but the kernel's rings (4 pipelined loops) or streams (16) are all taken";
          tl_sbuf_printf(ex, "staged (%s%s)", r, tl_defined_outside(f, op->opnd[w], L) ? ", resident: staged once" : "");
        }
      }
      if (d->streamed[0] || d->streamed[1] || d->prologue[0] || d->prologue[1])
        tl_sbuf_printf(ex, "; stages=%d (route_pipeline %d; %d x %lld B rings + %lld B resident <= %lld B %s)",
                       d->stages, f->stages, d->stages, (long long)ring_bytes, (long long)resident, (long long)budget,
                       o->arch ? o->arch : "sm_90a");
      else tl_sbuf_puts(ex, "; stages=1");
    }
    tl_sbuf_puts(ex, "\n");
  }
  return true;
}

const tl_pass tl_pass_swpipe = {
    "swpipe",
    "requires verified IR (after route_pipeline); keeps ops and values; records streamed operands and ring stages per dot",
    run_swpipe,
};
