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
 * expand_dims / broadcast that rename registers (no shared memory).
 *
 * The store (sm_90a, a 2-byte tile stored into a rank-2 tensor): each
 * sub-tile goes through a staging buffer in shared memory (two of them,
 * rows of W * 2 bytes, XOR-swizzled as TMA's 32/64/128-byte mode, so the
 * threads' 4-byte writes from the wgmma layout are conflict-free) and one
 * thread writes it out with a bulk tensor store (cp.async.bulk.tensor ...
 * .bulk_group: asynchronous, out-of-bounds rows and columns clipped by the
 * copy engine); it waits (wait_group.read) only before a buffer is written
 * again, and at the kernel's end.  A tensor that fails the map test at run
 * time takes the stores from registers (a uniform branch). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "code_env.h"

#define EPI_NONE (-2) /* not an epilogue value */
#define EPI_WHOLE (-1) /* an epilogue value emitted whole with sub-tile 0 */

struct cg_epi {
  int width, nchunk, chunk;
  int8_t *cdim;      /* per value: EPI_NONE, EPI_WHOLE or the column dim */
  int32_t for_op;    /* the main loop */
  /* the store through shared memory and TMA (-1: none) */
  int32_t tma_store;
  int map;           /* its tensor map (index among the hidden parameters) */
  int stage_off, stage_bytes, nbuf, rowbytes;
  LLVMValueRef store_ok, map_addr; /* kernel prologue */
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

/* TILEC_EPI_LOAD: `split` (the default since the seventh session's H200 run: the split form, a
 * small load one sub-tile ahead), `noahead` (the split form in its sub-tile), `combined` (the
 * combined form in each sub-tile: the default before). */
static const char *epi_load_env(void) {
  const char *s = tl_code_env("TILEC_EPI_LOAD");
  return s && *s ? s : "split";
}

bool cg_epi_split_load(cg *g) { return g->epi && strcmp(epi_load_env(), "combined"); }

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
  tl_op *lo = tl_op_at(f, r->ops.data[at - 1]);
  /* measuring: TILEC_EPI=0 the whole tile at once, =regs sub-tiles stored from registers, =N N columns */
  const char *env = tl_code_env("TILEC_EPI");
  if (env && *env == '0') return "TILEC_EPI=0";
  if (lo->nres < 1) return "the main loop carries no accumulator";
  const tl_type *acc = &tl_val(f, lo->res[0])->type;
  int32_t *uses = tl_count_uses(f);
  bool *split_res = tl_alloc(&g->ctx->arena, (size_t)lo->nres);
  for (int i = 0; i < lo->nres; i++) {
    const tl_type *t = &tl_val(f, lo->res[i])->type;
    split_res[i] = t->kind == TL_KIND_TILE && t->rank == 2 && t->shape[0] == acc->shape[0] && t->shape[1] == acc->shape[1];
    /* a carried value nothing reads after the loop (scales prefetched for the next k-step) is
     * no part of the epilogue */
    if (!split_res[i] && uses[lo->res[i]] > 0) return "the main loop carries more than accumulators";
  }
  int cols = acc->shape[1];
  int width = env && *env >= '1' && *env <= '9' ? atoi(env) : 64;
  if (width <= 0 || (width & (width - 1))) return "TILEC_EPI is not a power of two";
  if (cols <= width || cols % width) return "the tile has no more columns than one sub-tile";
  int8_t *cd = tl_alloc(&g->ctx->arena, (size_t)f->values.len + 1);
  memset(cd, EPI_NONE, (size_t)f->values.len + 1);
  for (int i = 0; i < lo->nres; i++)
    if (split_res[i]) cd[lo->res[i]] = 1;
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
  e->for_op = r->ops.data[at - 1];
  e->tma_store = -1;
  return NULL;
}

/* Why the split store op s cannot go through shared memory and TMA, or NULL. */
static const char *tma_store_unfit(cg *g, cg_epi *e, tl_op *s) {
  tl_func *f = g->f;
  const char *env = tl_code_env("TILEC_EPI");
  if (env && !strcmp(env, "regs")) return "TILEC_EPI=regs";
  const char *tma = tl_code_env("TILEC_TMA"); /* measuring: no TMA at all */
  if (tma && *tma == '0') return "TILEC_TMA=0";
  if (!cg_arch_is_90a(g)) return "the target is not sm_90a";
  if (cg_tma_mode(g) == TL_TMA_OFF) return "this is the kernel's no-TMA form (for tensors a tensor map cannot take)";
  int32_t v = s->opnd[s->nopnd - 1];
  const tl_type *t = &tl_val(f, v)->type;
  tl_value *tv = tl_val(f, s->opnd[0]);
  if (tv->type.rank != 2 || !s->dims[0] || !s->dims[1] || e->cdim[v] != 1) return "the stored tile is not a rank-2 tensor's rows and columns";
  for (int i = 1; i < s->nopnd - 1; i++)
    if (is_tile(f, s->opnd[i])) return "a scattered store";
  if (tl_dtype_bytes((tl_dtype)t->dtype) != 2) return "the stored elements are not 2 bytes";
  int rb = e->width * 2;
  if (rb != 32 && rb != 64 && rb != 128) return "a sub-tile row is not 32, 64 or 128 bytes";
  if (t->shape[0] > 256) return "the tile has more than 256 rows (the TMA box limit)";
  const tl_layout *l = tl_layout_at(f, t->layout);
  if (l->nreg < 1 || l->reg[0][0] != 0 || l->reg[0][1] != 1) return "the layout's registers do not pair columns";
  if (g->plan->ntma >= TL_MAX_TMA) return "more tensor maps than the launcher takes";
  return NULL;
}

/* Registers a thread holds of value v (split) in sub-tile 0. */
static int chunk_regs(cg *g, cg_epi *e, int32_t v) {
  const tl_layout *l = tl_layout_at(g->f, tl_val(g->f, v)->type.layout);
  int n = 0;
  for (int32_t r = 0; r < tl_layout_nregs(l); r++) {
    int32_t c[TL_MAX_RANK];
    tl_layout_reg_coords(l, r, c);
    n += tl_layout_canon_reg(l, r) == r && c[e->cdim[v]] < e->width;
  }
  return n;
}

/* A load of the accumulator's columns (split into sub-tiles) loaded one sub-tile ahead:
 * its next sub-tile's registers are live during this one's arithmetic, so only a small
 * one: up to AHEAD_REGS elements a thread (a bias or scale row vector: 16 of a 64-column
 * sub-tile), not a residual tile's sub-tile (32: gemm_residual then spills at 255
 * registers, ptxas -v; the plain GEMM already takes 224). */
#define AHEAD_REGS 16
static bool load_ahead(cg *g, cg_epi *e, tl_op *o) {
  return o->opc == TL_OP_load && is_tile(g->f, o->res[0]) && e->cdim[o->res[0]] >= 0 &&
         chunk_regs(g, e, o->res[0]) <= AHEAD_REGS;
}

int cg_plan_epilogue(cg *g, int persist) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  tl_region *r = &f->body;
  int at = -1; /* after the last top-level loop with a wgmma dot */
  for (int i = 0; i < r->ops.len; i++) {
    tl_op *o = tl_op_at(f, r->ops.data[i]);
    if ((o->flags & TL_OPF_DEAD) || o->opc != TL_OP_for) continue;
    for (int k = 0; k < p->nwg; k++)
      if (tl_op_inside(f, p->wg_dots[k], r->ops.data[i])) at = i + 1;
  }
  if (at < 0) return persist;
  cg_epi *e = tl_alloc(&g->ctx->arena, sizeof *e);
  memset(e, 0, sizeof *e);
  const char *why = plan_epi(g, r, at, e);
  tl_sbuf note = {0};
  if (why || !e->cdim) {
    if (why) tl_sbuf_printf(&note, "the whole tile at once (%s)", why);
  } else {
    p->epi = e;
    tl_sbuf_printf(&note, "in %d column sub-tiles of %d (the ops after the main loop, one sub-tile at a time)",
                   e->nchunk, e->width);
    int32_t store = -1, nsplit = 0;
    for (int i = at; i < r->ops.len; i++) {
      tl_op *o = tl_op_at(f, r->ops.data[i]);
      if ((o->flags & TL_OPF_DEAD) || o->opc != TL_OP_store || !is_tile(f, o->opnd[o->nopnd - 1])) continue;
      if (e->cdim[o->opnd[o->nopnd - 1]] >= 0) nsplit++, store = r->ops.data[i];
    }
    const char *tw = nsplit != 1 ? "not one store of the accumulator's columns" : tma_store_unfit(g, e, tl_op_at(f, store));
    int rows = 0;
    if (!tw) {
      rows = tl_val(f, tl_op_at(f, store)->opnd[tl_op_at(f, store)->nopnd - 1])->type.shape[0];
      e->rowbytes = e->width * 2;
      e->stage_bytes = rows * e->rowbytes;
      int at1k = (persist + 1023) / 1024 * 1024;
      int64_t budget = tl_arch_smem_budget(g->o ? g->o->arch : NULL);
      int nwg = p->ws == TL_WS_PINGPONG ? 2 : 1; /* ping-pong: each consumer warpgroup its own buffers */
      e->nbuf = at1k + 2 * nwg * e->stage_bytes <= budget ? 2 : at1k + nwg * e->stage_bytes <= budget ? 1 : 0;
      if (!e->nbuf) tw = "no room in shared memory for a staging buffer";
      else {
        e->stage_off = at1k;
        persist = at1k + nwg * e->nbuf * e->stage_bytes;
      }
    }
    if (tw) {
      tl_sbuf_printf(&note, "; stored from registers (no TMA store: %s)", tw);
    } else {
      tl_op *so = tl_op_at(f, store);
      tl_value *tv = tl_val(f, so->opnd[0]);
      e->tma_store = store;
      e->map = cg_tma_map_add(p, tv->index, e->width, rows, e->rowbytes, tv->type.dtype);
      tl_sbuf_printf(&note, "; %s stored by TMA from %d staging buffer%s of %dx%d (%d-byte swizzle)%s",
                     f->params.data[tv->index].name, e->nbuf, e->nbuf > 1 ? "s" : "", rows, e->width, e->rowbytes,
                     p->ws == TL_WS_PINGPONG ? ", a set per consumer warpgroup" : "");
    }
    /* the loads of the accumulator's columns: ahead or in their sub-tile (and why) */
    for (int i = at; i < r->ops.len; i++) {
      tl_op *o = tl_op_at(f, r->ops.data[i]);
      if ((o->flags & TL_OPF_DEAD) || o->opc != TL_OP_load || !is_tile(f, o->res[0]) || e->cdim[o->res[0]] < 0) continue;
      const char *name = f->params.data[tl_val(f, o->opnd[0])->index].name;
      int n = chunk_regs(g, e, o->res[0]);
      if (strcmp(epi_load_env(), "split"))
        tl_sbuf_printf(&note, "; %s loaded in its sub-tile (TILEC_EPI_LOAD=%s)", name, epi_load_env());
      else if (n <= AHEAD_REGS)
        tl_sbuf_printf(&note, "; %s loaded one sub-tile ahead (%d registers a thread)", name, n);
      else
        tl_sbuf_printf(&note, "; %s loaded in its sub-tile (%d registers a thread > %d to hold one ahead)", name, n,
                       AHEAD_REGS);
    }
  }
  if (note.len) p->epi_note = tl_strdup(&g->ctx->arena, note.data);
  tl_sbuf_free(&note);
  return persist;
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
  cg_epi *e = p ? p->epi : NULL;
  if (!e || r != &g->f->body || at < 1 || r->ops.data[at - 1] != e->for_op) return false;
  g->epi = e;
  bool ahead = !strcmp(epi_load_env(), "split");
  for (e->chunk = 0; e->chunk < e->nchunk; e->chunk++) {
    for (int i = at; i < r->ops.len; i++) {
      int32_t id = r->ops.data[i];
      tl_op *o = tl_op_at(g->f, id);
      if ((o->flags & TL_OPF_DEAD) || o->opc == TL_OP_yield) continue;
      if (e->chunk > 0 && !emit_in_every_chunk(g, o)) continue;
      if (!ahead || !load_ahead(g, e, o)) {
        cg_emit_op(g, id);
        continue;
      }
      /* a load one sub-tile ahead: sub-tile c + 1's registers are issued here, before
       * sub-tile c's arithmetic, so their latency runs under it (sub-tile c's were issued
       * in the pass before; sub-tile 0's here too) */
      int c = e->chunk;
      if (c == 0) cg_emit_op(g, id);
      if (c + 1 < e->nchunk) {
        e->chunk = c + 1;
        cg_emit_op(g, id);
        e->chunk = c;
      }
    }
  }
  g->epi = NULL;
  return true;
}

/* ---- the store through shared memory and TMA ---------------------------------------------- */

/* The map test of the stored tensor (codegen.h's ABI, as for the ring's
 * maps) and the map's address, once in the kernel prologue. */
void cg_epi_prologue(cg *g) {
  cg_plan *p = g->plan && g->plan_f == g->f ? g->plan : NULL;
  cg_epi *e = p ? p->epi : NULL;
  if (!e || e->tma_store < 0 || e->store_ok) return;
  tl_op *o = tl_op_at(g->f, e->tma_store);
  LLVMBuilderRef save = g->B;
  g->B = g->PB;
  tl_value *tv = tl_val(g->f, o->opnd[0]);
  cg_tensor *t = &g->tensors[tv->index];
  LLVMValueRef ok = cg_tma_map_test(g, LLVMConstInt(g->i1, 1, 0), t, 2, tl_dtype_bytes((tl_dtype)tv->type.dtype));
  e->store_ok = cg_tma_assume(g, ok);
  e->map_addr = cg_tma_map_addr(g, e->map);
  g->B = save;
}

/* The stored tile's f32 source when it is cast<bf16|f16>(x) of an f32 x in
 * the same layout: each staging word is then one cvt.rn.{bf16,f16}x2.f32 of
 * x's two registers (the same rounding, one instruction for two F2F and their
 * pack; the casts stay for the register fallback, which LLVM sinks into its
 * block).  By default only when x is the main loop's accumulator itself (a
 * plain GEMM: +0.9..2.2 % on the H200, ninth session); with elementwise code
 * between (bias + GELU) it measured 5 % slower, so TILEC_EPI_PACK=1 asks for
 * it there and =0 turns it off.  Under TILEC_TANH_APPROX=2 it is on there too
 * when the function has a tanh / sigmoid lowered by tanh.approx (gelu6's H200
 * run: the packing alone 0.923x the plain linear, the approximation alone
 * 0.927, both 0.948; the packing rounds as the casts do, so it needs no scope
 * of its own).  *cvt: the instruction. */
static bool has_scoped_tanh_approx(cg *g) {
  if (cg_tanh_approx_level() != 2) return false;
  for (int i = 0; i < g->f->ops.len; i++) {
    const tl_op *o = &g->f->ops.data[i];
    if (!(o->flags & TL_OPF_DEAD) && cg_tanh_approx(g, o)) return true;
  }
  return false;
}

static cg_val *packed_source(cg *g, int32_t v, const char **cvt) {
  if (tl_code_env_off("TILEC_EPI_PACK")) return NULL;
  tl_value *vv = tl_val(g->f, v);
  tl_op *cv = vv->def >= 0 ? tl_op_at(g->f, vv->def) : NULL;
  if (!cv || cv->opc != TL_OP_cast) return NULL;
  const tl_value *xv = tl_val(g->f, cv->opnd[0]);
  const tl_type *src = &xv->type;
  if (src->dtype != TL_F32 || src->layout != vv->type.layout) return NULL;
  bool from_loop = xv->def >= 0 && tl_op_at(g->f, xv->def)->opc == TL_OP_for;
  if (!from_loop && !tl_code_env_on("TILEC_EPI_PACK") && !has_scoped_tanh_approx(g)) return NULL;
  if (vv->type.dtype == TL_BF16) *cvt = "cvt.rn.bf16x2.f32 $0, $2, $1;";
  else if (vv->type.dtype == TL_F16) *cvt = "cvt.rn.f16x2.f32 $0, $2, $1;";
  else return NULL;
  return cg_get(g, cv->opnd[0]);
}

static LLVMValueRef to_i32(cg *g, LLVMValueRef v) {
  return LLVMTypeOf(v) == g->i32 ? v : LLVMBuildTrunc(g->B, v, g->i32, "");
}

bool cg_epi_store(cg *g, tl_op *o, void (*regs_store)(cg *g, tl_op *o)) {
  cg_epi *e = g->epi;
  tl_func *f = g->f;
  if (!e || e->tma_store < 0 || tl_op_at(f, e->tma_store) != o) return false;
  LLVMBasicBlockRef jb = cg_tma_or_fallback(g, e->store_ok, o, regs_store, "epi");
  int32_t v = o->opnd[o->nopnd - 1];
  int32_t lid = tl_val(f, v)->type.layout;
  const tl_layout *l = tl_layout_at(f, lid);
  cg_val *sv = cg_get(g, v);
  const char *cvt = NULL;
  cg_val *wide = packed_source(g, v, &cvt);
  int buf = e->nbuf > 1 ? e->chunk % 2 : 0;
  /* the buffer's previous bulk store has read it (thread 0), and everyone knows */
  char txt[160];
  snprintf(txt, sizeof txt, "@p cp.async.bulk.wait_group.read %d;", e->nbuf - 1);
  cg_thread0_asm(g, txt, NULL, 0, "r,~{memory}");
  cg_barrier(g);
  LLVMValueRef base = cg_add_c(g, cg_smem_base32(g), e->stage_off + buf * e->stage_bytes);
  if (g->pp_wg) /* a ping-pong consumer warpgroup's own buffers */
    base = LLVMBuildAdd(g->B, base, LLVMBuildMul(g->B, g->pp_wg, cg_i32(g, e->nbuf * e->stage_bytes), ""), "");
  cg_soff so;
  LLVMValueRef row_l = cg_lane_warp(g, lid, 0), col_l = cg_lane_warp(g, lid, 1);
  cg_soff_init(g, &so, base, e->rowbytes, e->rowbytes / 16, true, row_l, cg_mul_c(g, col_l, 2), e->rowbytes - 1);
  for (int32_t r = 0; r < tl_layout_nregs(l); r += 2) {
    if (tl_layout_canon_reg(l, r) != r || !cg_reg_wanted(g, v, r)) continue;
    int32_t c[TL_MAX_RANK];
    tl_layout_reg_coords(l, r, c);
    LLVMValueRef word;
    if (wide) { /* register r in the low half, r + 1 in the high half */
      LLVMValueRef xy[2] = {wide->r[r], wide->r[r + 1]};
      word = cg_asm(g, g->i32, cvt, "=r,f,f", xy, 2, false);
    } else if (!tl_code_env_off("TILEC_EPI_HALVES") && LLVMTypeOf(sv->r[r]) != g->i16) {
      /* the same pack as the branch below, written as PTX: its IR (two bitcasts, two zext, a
       * shl, an or: 6 IR instructions a word, InstCombine's `or` the costliest) cost gemm_bias_gelu
       * 19 M host instructions for 64 words (docs/codegen.md "Round 11").  Same instructions in
       * the same order (the pack before the address: ptxas allocates otherwise when the pack
       * follows it, as one asm with the store would).  TILEC_EPI_HALVES=0: the IR pack. */
      LLVMValueRef halves[2] = {sv->r[r], sv->r[r + 1]};
      word = cg_asm(g, g->i32, "{ .reg .b32 hi; cvt.u32.u16 $0, $1; cvt.u32.u16 hi, $2; shl.b32 hi, hi, 16; or.b32 $0, hi, $0; }",
                    "=r,h,h", halves, 2, false);
    } else {
      LLVMValueRef lo16 = LLVMBuildZExt(g->B, LLVMBuildBitCast(g->B, sv->r[r], g->i16, ""), g->i32, "");
      LLVMValueRef hi16 = LLVMBuildZExt(g->B, LLVMBuildBitCast(g->B, sv->r[r + 1], g->i16, ""), g->i32, "");
      word = LLVMBuildOr(g->B, lo16, LLVMBuildShl(g->B, hi16, cg_i32(g, 16), ""), "");
    }
    LLVMValueRef addr = cg_soff_at(g, &so, c[0], (c[1] % e->width) * 2);
    LLVMValueRef args[2] = {addr, word};
    cg_asm_void(g, "st.shared.b32 [$0], $1;", "r,r,~{memory}", args, 2);
  }
  cg_asm_void(g, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
  cg_barrier(g);
  LLVMValueRef args[4] = {e->map_addr, base, cg_add_c(g, to_i32(g, cg_get(g, o->opnd[2])->r[0]), e->chunk * e->width),
                          to_i32(g, cg_get(g, o->opnd[1])->r[0])};
  cg_thread0_asm(g, "@p cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$1, {$3, $4}], [$2]; "
                 "@p cp.async.bulk.commit_group;",
              args, 4, "r,l,r,r,r,~{memory}");
  cg_warp_converge(g);
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, jb);
  return true;
}

void cg_epi_kernel_end(cg *g) {
  cg_plan *p = g->plan && g->plan_f == g->f ? g->plan : NULL;
  if (!p || !p->epi || p->epi->tma_store < 0) return;
  /* no bulk store still reads this CTA's shared memory when it exits */
  cg_thread0_asm(g, "@p cp.async.bulk.wait_group 0;", NULL, 0, "r,~{memory}");
}
