/* split_k: requires verified IR (before route_pipeline); runs only where the options ask for it
 * (a small-M form, lib/api/forms.c) and only on the kernel they name; breaks the kernel's meaning on
 * purpose: it becomes one of the two halves of a split-K GEMM (docs/small_m.md "Split K"), with a
 * parameter P: tensor<f32>[SPLIT, M, N] appended:
 *   partial  the main loop runs over the K range of split program_id(2) (SPLIT = P's first size
 *            slices of whole k-steps; a split past K runs none) and its accumulator is stored to
 *            P[s] in place of the epilogue; the grid gets a third axis of SPLIT;
 *   reduce   the main loop becomes `for s in 0..SPLIT: acc += P[s, tile]` (a fixed order, so the
 *            result does not depend on which split finished first) and the epilogue is the
 *            kernel's own.
 * A kernel whose shape it does not know (one dot in a top-level for carrying only its
 * accumulator, A and B loads of the loop at tile offsets defined before it) is an error. */
#include <stdio.h>
#include <string.h>

#include "ir.h"

typedef struct gemm_loop {
  int32_t for_op, pos;  /* the loop and its index in f->body */
  int32_t m0, n0;       /* the tile's first row / column (values defined before the loop) */
  int32_t bm, bn;       /* the accumulator's shape */
  tl_dimspec m_dim, n_dim; /* C's rows and columns: A's rows, B's columns (W's rows) */
} gemm_loop;

static int32_t through(tl_func *f, int32_t v, bool trans_ok, bool *transposed) {
  for (;;) {
    int32_t d = tl_val(f, v)->def;
    if (d < 0) return -1;
    tl_op *o = tl_op_at(f, d);
    if (o->opc == TL_OP_convert_layout || o->opc == TL_OP_cast || (trans_ok && o->opc == TL_OP_trans)) {
      if (o->opc == TL_OP_trans) *transposed = !*transposed;
      v = o->opnd[0];
      continue;
    }
    return o->opc == TL_OP_load ? d : -1;
  }
}

/* The tensor parameter a load reads, or -1. */
static int32_t load_param(tl_func *f, int32_t load) {
  tl_value *t = tl_val(f, tl_op_at(f, load)->opnd[0]);
  return t->def < 0 && t->region_owner < 0 ? t->index : -1;
}

static const char *find_loop(tl_func *f, gemm_loop *g) {
  int32_t dot = -1;
  for (int32_t i = 0; i < f->ops.len; i++)
    if (f->ops.data[i].opc == TL_OP_dot && !(f->ops.data[i].flags & TL_OPF_DEAD)) {
      if (dot >= 0) return "more than one dot";
      dot = i;
    }
  if (dot < 0) return "no dot";
  int32_t F = tl_op_at(f, dot)->parent;
  if (F < 0 || tl_op_at(f, F)->opc != TL_OP_for || tl_op_at(f, F)->parent >= 0)
    return "the dot is not in a for loop at the kernel's top level";
  tl_op *fo = tl_op_at(f, F), *d = tl_op_at(f, dot);
  if (fo->nopnd != 4 || fo->nres != 1) return "the loop carries more than the accumulator";
  tl_region *body = &fo->regions[0];
  int32_t last = body->ops.data[body->ops.len - 1];
  if (tl_op_at(f, last)->opc != TL_OP_yield || tl_op_at(f, last)->opnd[0] != d->res[0] ||
      d->opnd[2] != body->args.data[1])
    return "the loop does not yield dot(a, b, acc) into acc";
  bool ta = false, tb = false;
  int32_t la = through(f, d->opnd[0], false, &ta), lb = through(f, d->opnd[1], true, &tb);
  if (la < 0 || lb < 0 || !tl_op_inside(f, la, F) || !tl_op_inside(f, lb, F)) return "a or b is not a load of the loop";
  tl_op *a = tl_op_at(f, la), *b = tl_op_at(f, lb);
  int32_t pa = load_param(f, la), pb = load_param(f, lb);
  if (pa < 0 || pb < 0 || a->nopnd != 3 || b->nopnd != 3 || f->params.data[pa].rank != 2 ||
      f->params.data[pb].rank != 2)
    return "a or b is not a 2-D view of a 2-D parameter";
  g->m0 = a->opnd[1];
  g->n0 = tb ? b->opnd[1] : b->opnd[2];
  if (!tl_defined_outside(f, g->m0, F) || !tl_defined_outside(f, g->n0, F))
    return "the tile's offsets are not defined before the loop";
  g->m_dim = f->params.data[pa].dims[0];
  g->n_dim = f->params.data[pb].dims[tb ? 0 : 1];
  tl_type *acc = &tl_val(f, d->res[0])->type;
  /* the partials are f32 (tensor<f32>[SPLIT, M, N]): an integer accumulator (i8's i32) would need its own */
  if (acc->dtype != TL_F32) return "the accumulator is not f32 (the split-K form's partials are f32; i8's i32 sum is not split)";
  g->bm = acc->shape[0];
  g->bn = acc->shape[1];
  g->for_op = F;
  g->pos = -1;
  for (int i = 0; i < f->body.ops.len; i++)
    if (f->body.ops.data[i] == F) g->pos = i;
  return g->pos < 0 ? "the loop is not in the kernel's body" : NULL;
}

/* New op inserted at r[*pos] (then *pos moves past it); its first result, or -1. */
static int32_t insert(tl_func *f, tl_region *r, int *pos, tl_opcode opc, const int32_t *opnd, int n, const tl_type *t,
                      int nres, tl_loc loc) {
  int32_t op = tl_op_new(f, NULL, opc, opnd, n, t, nres, loc);
  tl_region_insert(f, r, (*pos)++, op);
  return nres ? tl_op_at(f, op)->res[0] : -1;
}

static int32_t iconst(tl_func *f, tl_region *r, int *pos, int64_t v, tl_loc loc) {
  tl_type i32 = tl_scalar_type(TL_I32);
  int32_t c = insert(f, r, pos, TL_OP_const, NULL, 0, &i32, 1, loc);
  tl_op_at(f, tl_val(f, c)->def)->ival = v;
  return c;
}

static int32_t binary(tl_func *f, tl_region *r, int *pos, tl_opcode opc, int32_t x, int32_t y, tl_loc loc) {
  tl_type i32 = tl_scalar_type(TL_I32);
  int32_t o[2] = {x, y};
  return insert(f, r, pos, opc, o, 2, &i32, 1, loc);
}

/* P: tensor<f32>[SPLIT, M, N] appended to f's parameters (SPLIT a new shape symbol); its value. */
static int32_t add_partials(tl_func *f, const gemm_loop *g) {
  tl_param p;
  memset(&p, 0, sizeof p);
  p.name = "splitk_partials";
  p.is_tensor = true;
  p.dtype = TL_F32;
  p.rank = 3;
  p.loc = f->loc;
  int32_t idx = f->params.len;
  tl_sym s = {"SPLIT", idx, 0};
  tl_vec_push(&f->ctx->arena, &f->syms, s);
  p.dims[0].sym = f->syms.len - 1;
  p.dims[1] = g->m_dim;
  p.dims[2] = g->n_dim;
  tl_func_add_param(f, &p);
  return f->params.data[idx].value;
}

/* Both halves' start: the partials parameter P (*P) and SPLIT = dim(P, 0), inserted at the loop
 * (*pos then after it). */
static int32_t add_split_count(tl_func *f, const gemm_loop *g, int *pos, int32_t *P) {
  *P = add_partials(f, g);
  *pos = g->pos;
  tl_type i32 = tl_scalar_type(TL_I32);
  int32_t dimo[1] = {*P};
  int32_t nsplit = insert(f, &f->body, pos, TL_OP_dim, dimo, 1, &i32, 1, tl_op_at(f, g->for_op)->loc);
  tl_op_at(f, tl_val(f, nsplit)->def)->axis = 0;
  return nsplit;
}

/* The partial half: the loop over split s's K range, its accumulator stored to P[s]. */
static void make_partial(tl_func *f, const gemm_loop *g) {
  int pos;
  int32_t P;
  int32_t nsplit = add_split_count(f, g, &pos, &P);
  tl_loc loc = tl_op_at(f, g->for_op)->loc;
  tl_type i32 = tl_scalar_type(TL_I32);
  int32_t dimo[1] = {P};
  int32_t s = insert(f, &f->body, &pos, TL_OP_program_id, NULL, 0, &i32, 1, loc);
  tl_op_at(f, tl_val(f, s)->def)->axis = 2;
  int32_t lo = tl_op_at(f, g->for_op)->opnd[0], hi = tl_op_at(f, g->for_op)->opnd[1];
  int32_t step = tl_op_at(f, g->for_op)->opnd[2];
  /* chunk = cdiv(cdiv(hi - lo, step), SPLIT) * step; [lo + s chunk, min(hi, lo + (s + 1) chunk)) */
  int32_t one = iconst(f, &f->body, &pos, 1, loc);
  int32_t len = binary(f, &f->body, &pos, TL_OP_sub, hi, lo, loc);
  int32_t steps = binary(f, &f->body, &pos, TL_OP_div,
                         binary(f, &f->body, &pos, TL_OP_sub, binary(f, &f->body, &pos, TL_OP_add, len, step, loc), one, loc),
                         step, loc);
  int32_t per = binary(f, &f->body, &pos, TL_OP_div,
                       binary(f, &f->body, &pos, TL_OP_sub, binary(f, &f->body, &pos, TL_OP_add, steps, nsplit, loc), one,
                              loc),
                       nsplit, loc);
  int32_t chunk = binary(f, &f->body, &pos, TL_OP_mul, per, step, loc);
  int32_t klo = binary(f, &f->body, &pos, TL_OP_add, lo, binary(f, &f->body, &pos, TL_OP_mul, s, chunk, loc), loc);
  int32_t khi = binary(f, &f->body, &pos, TL_OP_min, hi, binary(f, &f->body, &pos, TL_OP_add, klo, chunk, loc), loc);
  tl_op *fo = tl_op_at(f, g->for_op);
  fo->opnd[0] = klo;
  fo->opnd[1] = khi;
  /* the epilogue (everything after the loop) replaced by the store of the partial sum */
  while (f->body.ops.len > pos + 1) tl_op_erase(f, &f->body, f->body.ops.len - 1);
  int end = f->body.ops.len;
  int32_t st[5] = {P, s, g->m0, g->n0, tl_op_at(f, g->for_op)->res[0]};
  int32_t sop = tl_op_new(f, NULL, TL_OP_store, st, 5, NULL, 0, loc);
  tl_op *so = tl_op_at(f, sop);
  so->dims[0] = 0, so->dims[1] = g->bm, so->dims[2] = g->bn;
  tl_region_insert(f, &f->body, end, sop);
  /* the grid's third axis: the splits */
  tl_region *gr = &f->grid;
  int gpos = gr->ops.len - 1;
  int32_t gdim = insert(f, gr, &gpos, TL_OP_dim, dimo, 1, &i32, 1, loc);
  tl_op_at(f, tl_val(f, gdim)->def)->axis = 0;
  tl_op_append_opnd(f, gr->ops.data[gr->ops.len - 1], gdim);
}

/* The reduce half: the loop sums P[0..SPLIT) of the tile in order; the epilogue stays. */
static void make_reduce(tl_func *f, const gemm_loop *g) {
  int pos;
  int32_t P;
  int32_t nsplit = add_split_count(f, g, &pos, &P);
  tl_loc loc = tl_op_at(f, g->for_op)->loc;
  int32_t zero = iconst(f, &f->body, &pos, 0, loc), one = iconst(f, &f->body, &pos, 1, loc);
  tl_op *fo = tl_op_at(f, g->for_op);
  fo->opnd[0] = zero, fo->opnd[1] = nsplit, fo->opnd[2] = one;
  tl_region *body = &fo->regions[0];
  while (body->ops.len > 1) tl_op_erase(f, body, 0); /* all but the yield */
  int32_t iv = body->args.data[0], acc = body->args.data[1];
  int bpos = 0;
  int32_t shape[2] = {g->bm, g->bn};
  tl_type tile = tl_tile_type(TL_F32, 2, shape);
  int32_t lo[4] = {P, iv, g->m0, g->n0};
  int32_t part = insert(f, body, &bpos, TL_OP_load, lo, 4, &tile, 1, loc);
  tl_op *lop = tl_op_at(f, tl_val(f, part)->def);
  lop->dims[0] = 0, lop->dims[1] = g->bm, lop->dims[2] = g->bn;
  int32_t ad[2] = {acc, part};
  int32_t sum = insert(f, body, &bpos, TL_OP_add, ad, 2, &tile, 1, loc);
  tl_op_at(f, body->ops.data[body->ops.len - 1])->opnd[0] = sum;
}

static bool run_split_k(tl_func *f, const tl_pass_opts *o) {
  if (!o->split_k_role || !o->split_k_kernel || strcmp(o->split_k_kernel, f->name)) return true;
  gemm_loop g;
  const char *why = find_loop(f, &g);
  if (why) {
    tl_error(f->ctx, f->loc, "kernel '%s': no split-K form: %s", f->name, why);
    return false;
  }
  if (tl_val(f, tl_op_at(f, f->grid.ops.data[f->grid.ops.len - 1])->opnd[0])->def < 0 ||
      tl_op_at(f, f->grid.ops.data[f->grid.ops.len - 1])->nopnd != 2) {
    tl_error(f->ctx, f->loc, "kernel '%s': no split-K form: the grid is not two-dimensional", f->name);
    return false;
  }
  if (o->split_k_role == 1) make_partial(f, &g);
  else make_reduce(f, &g);
  if (o->explain && o->explain_out)
    tl_sbuf_printf(o->explain_out, "split_k: kernel '%s': the %s half of a split-K form (P: f32[SPLIT, %s, %s])\n",
                   f->name, o->split_k_role == 1 ? "partial" : "reduce",
                   g.m_dim.is_const ? "const" : f->syms.data[g.m_dim.sym].name,
                   g.n_dim.is_const ? "const" : f->syms.data[g.n_dim.sym].name);
  return true;
}

const tl_pass tl_pass_split_k = {
    "split_k",
    "requires verified IR; only with the split-k option, on the kernel it names: the partial or the reduce half of "
    "a split-K GEMM, a parameter P f32[SPLIT, M, N] appended (docs/small_m.md)",
    run_split_k,
};
