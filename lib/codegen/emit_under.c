/* emit_under.c: requires the main-loop plan (dot_plan.c) and a wgmma dot whose group was
 * just committed; keeps program semantics (nothing moves past a store, an atomic, a region or
 * another dot, and loads keep their order); emits the global loads that follow the dot in its
 * loop body and are not dot operands (a block-scaled GEMM's scales, a vector read per k-step),
 * with the scalar index math they need, between the group's commit and its wait, so their
 * latency runs under the tensor cores.  The region's own pass over those ops then emits
 * nothing (cg->early).  TILEC_UNDER_WGMMA=0 turns it off (for measuring).
 *
 * Why there and not before the dot: issued before the group (the IR order `s = load(S); p =
 * dot(a, b)`), the loads' registers are still pending at wgmma.fence, and the blockscale GEMM
 * measured 0.90-0.95x of the loads left after the wait (H200, eleventh session); after the
 * wait their latency is exposed every k-step.  TILEC_LOAD_AHEAD=1 (passes/load_ahead.c) makes
 * those loads the next iteration's, carried, so this k-step's come from the previous one. */
#include "code_env.h"
#include "load_order.h"
#include "ring.h"

int cg_body_positions(cg *g, const tl_region *r, const tl_op *dot, int32_t **pos) {
  *pos = tl_alloc(&g->ctx->arena, sizeof(int32_t) * ((size_t)g->f->ops.len + 1));
  int at = -1;
  for (int i = 0; i < r->ops.len; i++) {
    (*pos)[r->ops.data[i]] = i;
    if (tl_op_at(g->f, r->ops.data[i]) == dot) at = i;
  }
  return at;
}

bool cg_body_ready(cg *g, const tl_region *r, const int32_t *pos, int at, int32_t v) {
  int32_t d = tl_val(g->f, v)->def;
  if (d < 0) return true; /* a parameter or a region argument (the iv, carried values) */
  const tl_op *o = tl_op_at(g->f, d);
  if (o->parent != r->owner) return true; /* defined outside the loop body: before it */
  return pos[d] < at || (g->early && g->early[d]);
}

bool cg_body_scan_stops(const tl_op *o) {
  return o->opc == TL_OP_store || o->opc == TL_OP_atomic || o->nregions > 0 || (tl_opinfo_table[o->opc].flags & TL_TERM);
}

void cg_emit_under(cg *g, tl_op *dot) {
  tl_func *f = g->f;
  cg_plan *p = g->plan;
  if (!p || dot->parent < 0 || tl_code_env_off("TILEC_UNDER_WGMMA")) return;
  tl_op *loop = tl_op_at(f, dot->parent);
  if (loop->opc != TL_OP_for) return;
  tl_region *r = &loop->regions[0];
  if (!g->early) {
    g->early = tl_alloc(&g->ctx->arena, (size_t)f->ops.len + 1);
    for (int i = 0; i <= f->ops.len; i++) g->early[i] = 0;
  }
  int32_t *pos;
  int at = cg_body_positions(g, r, dot, &pos);
  if (at < 0) return;
  /* the candidates, in order: the first store / atomic / region / dot ends the scan */
  for (int i = at + 1; i < r->ops.len; i++) {
    int32_t id = r->ops.data[i];
    tl_op *o = tl_op_at(f, id);
    if (o->flags & TL_OPF_DEAD) continue;
    if (cg_body_scan_stops(o) || o->opc == TL_OP_dot) break;
    bool load = o->opc == TL_OP_load;
    if (!load && !tl_is_index_math(f, id)) continue;
    if (load && p->vkind[o->res[0]] == SRC_STREAM) break; /* a ring's load: loads keep their order */
    bool ok = true;
    for (int k = 0; k < o->nopnd && ok; k++) ok = cg_body_ready(g, r, pos, at, o->opnd[k]);
    if (!ok) {
      if (load) break; /* it waits for tile work: so do the loads after it */
      continue;
    }
    cg_emit_op(g, id);
    g->early[id] = 1; /* emitted: the region's pass skips it; cg_body_ready() for the ops after it */
  }
}
