/* ldmatrix_sched: requires verified IR; keeps every op and value; records per
 * dot in f->sched (lib/schedule.h) whether the ldmatrix of k-slice i+1 is
 * issued before the mma of slice i (lookahead): for dots inside a loop whose
 * K spans at least two k-slices (32 bytes of a row: 16 elements of 16-bit
 * operands, 32 of 8-bit ones, 8 of tf32).  Breaks nothing.  docs/scheduling.md. */
#include <stdio.h>

#include "schedule.h"

static bool in_loop(tl_func *f, int32_t op) {
  for (int32_t p = tl_op_at(f, op)->parent; p >= 0; p = tl_op_at(f, p)->parent)
    if (tl_op_at(f, p)->opc == TL_OP_for) return true;
  return false;
}

static bool run_ldmatrix_sched(tl_func *f, const tl_pass_opts *o) {
  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  for (int32_t id = 0; id < f->ops.len; id++) {
    tl_op *op = tl_op_at(f, id);
    if ((op->flags & TL_OPF_DEAD) || op->opc != TL_OP_dot) continue;
    const tl_type *at = &tl_val(f, op->opnd[0])->type;
    if (at->kind != TL_KIND_TILE || at->rank != 2) continue;
    int32_t K = at->shape[1];
    int32_t kslice = tl_dot_kstep((tl_dtype)at->dtype) ? tl_dot_kstep((tl_dtype)at->dtype) : 16;
    int32_t slices = K / kslice;
    bool loop = in_loop(f, id);
    tl_dot_sched *d = tl_sched_dot(f, id, true);
    d->scheduled = true;
    d->lookahead = loop && slices >= 2;
    if (ex)
      tl_sbuf_printf(ex, "ldmatrix_sched: kernel '%s': dot at %d:%d: %s (%s; K=%d is %d k-slice%s of %d)\n", f->name,
                     op->loc.line, op->loc.col, d->lookahead ? "lookahead" : "no lookahead",
                     loop ? "in a loop" : "not in a loop", K, slices, slices == 1 ? "" : "s", kslice);
  }
  return true;
}

const tl_pass tl_pass_ldmatrix_sched = {
    "ldmatrix_sched",
    "requires verified IR; keeps ops and values; records ldmatrix lookahead (next k-slice before this mma) per dot",
    run_ldmatrix_sched,
};
