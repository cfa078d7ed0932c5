/* loop_loads: requires verified IR; keeps semantics (no load crosses a store, a region or
 * another load: lib/load_order.h); in each loop whose body holds a dot, moves the loads the
 * dots do not take as operands (a block-scaled GEMM's scales, a bias row read per k-step) up
 * to just after their index math, so that they leave before the dot and their latency runs
 * under its tensor-core work.  Breaks nothing.  docs/scheduling.md "loop_loads".
 *
 * Why: codegen emits a loop's ops in program order and the dot (wgmma under fp8 promote, or
 * mma.sync) waits for its result where it stands, so `p = dot(a, trans(w)); s = load(S[..,
 * kb]); acc += p * s` issued the scale loads only after the tensor cores had finished, and
 * every k-step waited a memory latency with the tensor cores idle. */
#include <stdio.h>

#include "load_order.h"

/* Marks every load of region r whose value reaches operand a or b of a dot of r (through any
 * ops of r): the streamed operands and an operand prologue's loads, which stay where they are. */
static void mark_operand_loads(tl_func *f, tl_region *r, int32_t v, bool *feeds, int depth) {
  int32_t d = tl_val(f, v)->def;
  if (d < 0 || depth > 64) return;
  tl_op *o = tl_op_at(f, d);
  if (o->parent != r->owner || feeds[d]) return;
  feeds[d] = true;
  for (int k = 0; k < o->nopnd; k++) mark_operand_loads(f, r, o->opnd[k], feeds, depth + 1);
}

static bool not_an_operand(tl_func *f, int32_t op, void *ctx) {
  (void)f;
  return !((const bool *)ctx)[op];
}

static bool run_loop_loads(tl_func *f, const tl_pass_opts *opts) {
  tl_sbuf *ex = opts->explain && opts->explain_out ? opts->explain_out : NULL;
  bool *feeds = NULL;
  for (int i = 0; i < f->ops.len; i++) {
    tl_op *loop = &f->ops.data[i];
    if ((loop->flags & TL_OPF_DEAD) || loop->opc != TL_OP_for || loop->nregions < 1) continue;
    tl_region *r = &loop->regions[0];
    int ndots = 0;
    for (int j = 0; j < r->ops.len; j++) ndots += tl_op_at(f, r->ops.data[j])->opc == TL_OP_dot;
    if (!ndots) continue;
    if (!feeds) feeds = tl_alloc(&f->ctx->arena, (size_t)f->ops.len + 1);
    for (int j = 0; j < f->ops.len; j++) feeds[j] = false;
    for (int j = 0; j < r->ops.len; j++) {
      tl_op *d = tl_op_at(f, r->ops.data[j]);
      if (d->opc != TL_OP_dot) continue;
      mark_operand_loads(f, r, d->opnd[0], feeds, 0);
      mark_operand_loads(f, r, d->opnd[1], feeds, 0);
    }
    int moved = tl_hoist_loads_in(f, r, not_an_operand, feeds);
    if (ex && moved)
      tl_sbuf_printf(ex, "loop_loads: kernel '%s': loop at %d:%d: %d load%s issued before the dot%s (not dot operands)\n",
                     f->name, loop->loc.line, loop->loc.col, moved, moved == 1 ? "" : "s", ndots == 1 ? "" : "s");
  }
  return true;
}

const tl_pass tl_pass_loop_loads = {
    "loop_loads",
    "requires verified IR; keeps semantics (no load crosses a store, region or other load); moves a dot loop's non-operand loads up past its tile work",
    run_loop_loads,
};
