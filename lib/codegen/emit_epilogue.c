/* emit_epilogue.c: requires the main-loop plan (cg_make_plan: the wgmma dots);
 * emits the ops after a GEMM main loop at the top level of the body (the
 * epilogue: bias, scales, activations, residual adds, casts, the store) in
 * column sub-tiles of the accumulator, one after the other, so only one
 * sub-tile's temporaries are live at a time.  docs/pipelines.md "Epilogue
 * sub-tiles".
 *
 * Each tile value of the epilogue gets a column dim: the dim that follows the
 * accumulator's columns through the ops (elementwise ops keep it, expand_dims
 * moves it, a broadcast from size 1 drops it), or none (a row vector, a tile
 * not derived from the accumulator's columns).  Sub-tile c of width W is, for
 * a value with a column dim, the registers whose column lies in [cW, cW + W):
 * a compile-time property of the register when no lane or warp basis of the
 * value's layout reaches W along that dim (checked).  Values without a column
 * dim and scalar ops are emitted whole with sub-tile 0; stores and loads take
 * their sub-tile's registers only (cg_reg_wanted).  The epilogue is emitted
 * in sub-tiles only when every op is one whose registers are independent:
 * elementwise ops, constants, splats, iota, loads and stores, and
 * expand_dims / broadcast that rename registers (no shared memory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"

#define EPI_NONE (-2) /* not an epilogue value */
#define EPI_WHOLE (-1) /* an epilogue value emitted whole with sub-tile 0 */

struct cg_epi {
  int width, nchunk, chunk;
  int8_t *cdim; /* per value: EPI_NONE, EPI_WHOLE or the column dim */
};

bool cg_reg_wanted(cg *g, int32_t v, int32_t r) {
  cg_epi *e = g->epi;
  if (!e || e->cdim[v] == EPI_NONE) return true;
  if (e->cdim[v] == EPI_WHOLE) return e->chunk == 0;
  const tl_type *t = &tl_val(g->f, v)->type;
  if (t->kind != TL_KIND_TILE) return e->chunk == 0;
  int32_t c[TL_MAX_RANK];
  tl_layout_reg_coords(tl_layout_at(g->f, t->layout), r, c);
  return c[e->cdim[v]] / e->width == e->chunk;
}

bool cg_epi_resume(cg *g, int32_t v) { return g->epi && g->epi->chunk > 0 && g->epi->cdim[v] != EPI_NONE; }

static bool is_tile(tl_func *f, int32_t v) { return tl_val(f, v)->type.kind == TL_KIND_TILE; }

/* The op's registers are computed independently of one another (given the
 * operands' registers at the same coordinates): what sub-tiles may split. */
static const char *op_unfit(cg *g, tl_op *o) {
  tl_func *f = g->f;
  if (o->nregions) return "control flow after the main loop";
  switch (o->opc) {
  case TL_OP_const: case TL_OP_splat: case TL_OP_dim: case TL_OP_program_id: case TL_OP_num_programs:
  case TL_OP_iota: case TL_OP_store:
    return NULL;
  case TL_OP_load:
    for (int i = 1; i < o->nopnd; i++)
      if (is_tile(f, o->opnd[i])) return "a gathered load";
    return NULL;
  case TL_OP_expand_dims:
  case TL_OP_broadcast:
    if (!is_tile(f, o->opnd[0])) return NULL;
    if (!cg_transfer_free(g, o->opnd[0], o->res[0], o->opc == TL_OP_broadcast ? CG_MAP_BCAST : CG_MAP_EXPAND, o->axis))
      return "a broadcast through shared memory";
    return NULL;
  default:
    if (tl_opinfo_table[o->opc].flags & TL_EW) return NULL;
    return "an op that is not elementwise";
  }
}

/* Unify the column dims a and b (EPI_WHOLE = unknown yet); false on a conflict. */
static bool meet(int8_t *cd, int32_t v, int d, bool *changed) {
  if (d == EPI_WHOLE || cd[v] == d) return true;
  if (cd[v] != EPI_WHOLE) return false;
  cd[v] = (int8_t)d;
  *changed = true;
  return true;
}

/* Propagate column dims over the epilogue ops [at, n) of the body to a fixpoint. */
static const char *propagate(cg *g, tl_region *r, int at, int8_t *cd) {
  tl_func *f = g->f;
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = at; i < r->ops.len; i++) {
      tl_op *o = tl_op_at(f, r->ops.data[i]);
      if ((o->flags & TL_OPF_DEAD) || o->opc == TL_OP_yield) continue;
      bool ok = true;
      if (tl_opinfo_table[o->opc].flags & TL_EW) {
        if (!is_tile(f, o->res[0])) continue;
        int d = cd[o->res[0]];
        for (int k = 0; k < o->nopnd && d == EPI_WHOLE; k++)
          if (is_tile(f, o->opnd[k]) && cd[o->opnd[k]] >= 0) d = cd[o->opnd[k]];
        ok = meet(cd, o->res[0], d, &changed);
        for (int k = 0; k < o->nopnd && ok; k++)
          if (is_tile(f, o->opnd[k]) && cd[o->opnd[k]] != EPI_NONE) ok = meet(cd, o->opnd[k], d, &changed);
      } else if (o->opc == TL_OP_expand_dims && is_tile(f, o->opnd[0])) {
        int32_t s = o->opnd[0], d = o->res[0];
        if (cd[s] >= 0) ok = meet(cd, d, cd[s] + (cd[s] >= o->axis), &changed);
        else if (cd[d] >= 0 && cd[d] != o->axis) ok = meet(cd, s, cd[d] - (cd[d] > o->axis), &changed);
      } else if (o->opc == TL_OP_broadcast && is_tile(f, o->opnd[0])) {
        int32_t s = o->opnd[0], d = o->res[0];
        const tl_type *st = &tl_val(f, s)->type;
        if (cd[s] >= 0) ok = meet(cd, d, cd[s], &changed);
        else if (cd[d] >= 0 && st->shape[cd[d]] != 1) ok = meet(cd, s, cd[d], &changed);
      } else if (o->opc == TL_OP_store && is_tile(f, o->opnd[o->nopnd - 1])) {
        /* nothing to unify: the view follows the value */
      }
      if (!ok) return "a value whose columns are the accumulator's along two dims";
    }
  }
  return NULL;
}

/* Why the epilogue after the loop at r->ops[at - 1] cannot be emitted in
 * sub-tiles (else NULL: *e filled). */
static const char *plan_epi(cg *g, tl_region *r, int at, cg_epi *e) {
  tl_func *f = g->f;
  cg_plan *p = g->plan;
  tl_op *lo = tl_op_at(f, r->ops.data[at - 1]);
  const char *env = getenv("TILEC_EPI"); /* measuring: 0 = the whole tile at once, N = N columns */
  if (env && *env == '0') return "TILEC_EPI=0";
  /* a GEMM loop: it carries only accumulators of wgmma dots, all of one shape */
  bool wg = false;
  for (int i = 0; i < p->nwg; i++) wg = wg || tl_op_inside(f, p->wg_dots[i], r->ops.data[at - 1]);
  if (!wg) return NULL; /* (not a wgmma loop: no note) */
  if (lo->nres < 1) return "the main loop carries no accumulator";
  const tl_type *acc = &tl_val(f, lo->res[0])->type;
  for (int i = 0; i < lo->nres; i++) {
    const tl_type *t = &tl_val(f, lo->res[i])->type;
    if (t->kind != TL_KIND_TILE || t->rank != 2 || t->shape[0] != acc->shape[0] || t->shape[1] != acc->shape[1])
      return "the main loop carries more than accumulators";
  }
  int cols = acc->shape[1];
  int width = env && *env ? atoi(env) : 64;
  if (width <= 0 || (width & (width - 1))) return "TILEC_EPI is not a power of two";
  if (cols <= width || cols % width) return "the tile has no more columns than one sub-tile";
  int8_t *cd = tl_alloc(&g->ctx->arena, (size_t)f->values.len + 1);
  memset(cd, EPI_NONE, (size_t)f->values.len + 1);
  for (int i = 0; i < lo->nres; i++) cd[lo->res[i]] = 1;
  int nops = 0;
  for (int i = at; i < r->ops.len; i++) {
    tl_op *o = tl_op_at(f, r->ops.data[i]);
    if ((o->flags & TL_OPF_DEAD) || o->opc == TL_OP_yield) continue;
    const char *why = op_unfit(g, o);
    if (why) return why;
    for (int k = 0; k < o->nres; k++) cd[o->res[k]] = EPI_WHOLE;
    nops++;
  }
  if (!nops) return NULL;
  const char *why = propagate(g, r, at, cd);
  if (why) return why;
  /* every value split by columns: the accumulator's column count, and the
   * sub-tile a register belongs to fixed by its register bits */
  int split = 0;
  for (int32_t v = 0; v < f->values.len; v++) {
    if (cd[v] < 0) continue;
    const tl_type *t = &tl_val(f, v)->type;
    if (t->shape[cd[v]] != cols) return "a value's columns are not the accumulator's";
    const tl_layout *l = tl_layout_at(f, t->layout);
    for (int j = 0; j < TL_LAYOUT_LANE_BITS; j++)
      if (l->lane[j][cd[v]] >= width) return "a layout spreads one sub-tile's columns over lanes";
    for (int j = 0; j < l->nwarp; j++)
      if (l->warp[j][cd[v]] >= width) return "a layout spreads one sub-tile's columns over warps";
    split += v != lo->res[0];
  }
  if (!split) return "nothing after the loop follows the accumulator's columns";
  e->width = width;
  e->nchunk = cols / width;
  e->chunk = 0;
  e->cdim = cd;
  return NULL;
}

/* Only sub-tile 0 emits an op none of whose results (or stored value) is split. */
static bool emit_in_every_chunk(cg *g, tl_op *o) {
  tl_func *f = g->f;
  if (o->opc == TL_OP_store) {
    int32_t v = o->opnd[o->nopnd - 1];
    return is_tile(f, v) && g->epi->cdim[v] >= 0;
  }
  for (int k = 0; k < o->nres; k++)
    if (is_tile(f, o->res[k]) && g->epi->cdim[o->res[k]] >= 0) return true;
  return false;
}

bool cg_emit_epilogue(cg *g, tl_region *r, int at) {
  cg_plan *p = g->plan && g->plan_f == g->f ? g->plan : NULL;
  if (!p || r != &g->f->body || at < 1 || tl_op_at(g->f, r->ops.data[at - 1])->opc != TL_OP_for) return false;
  cg_epi *e = tl_alloc(&g->ctx->arena, sizeof *e);
  const char *why = plan_epi(g, r, at, e);
  char note[200];
  if (why) {
    snprintf(note, sizeof note, "the whole tile at once (%s)", why);
    if (!p->epi_note) p->epi_note = tl_strdup(&g->ctx->arena, note);
    return false;
  }
  if (!e->cdim) return false;
  snprintf(note, sizeof note, "in %d column sub-tiles of %d (the ops after the main loop, one sub-tile at a time)",
           e->nchunk, e->width);
  if (!p->epi_note) p->epi_note = tl_strdup(&g->ctx->arena, note);
  g->epi = e;
  for (e->chunk = 0; e->chunk < e->nchunk; e->chunk++) {
    for (int i = at; i < r->ops.len; i++) {
      int32_t id = r->ops.data[i];
      tl_op *o = tl_op_at(g->f, id);
      if ((o->flags & TL_OPF_DEAD) || o->opc == TL_OP_yield) continue;
      if (e->chunk > 0 && !emit_in_every_chunk(g, o)) continue;
      cg_emit_op(g, id);
    }
  }
  g->epi = NULL;
  return true;
}
