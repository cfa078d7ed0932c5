/* hoist_operand: requires verified IR (before route_pipeline); runs only where the options ask for
 * it (option "hoist-operand" = form | pre, on the kernel the option "kernel" names); changes the
 * kernel's signature and, for pre, its meaning on purpose: a parameter `hoisted` [K, N] of B's type
 * is appended; form: the dot's B (computed in the loop from loads that do not depend on
 * program_id(0)) becomes a plain load of hoisted[k0 : k0 + BK, n0 : n0 + BN]; pre: that B tile is
 * stored there instead of multiplied, one k-step a program along grid axis 0, no epilogue
 * (lib/hoist_operand.h).  A kernel without such a B is an error. */
#include <stdio.h>
#include <string.h>

#include "hoist_operand.h"

extern const tl_pass tl_pass_dce;

/* ---- the recognizer (also passes/hoist_form.c's) ------------------------------------------------ */

typedef struct walk {
  tl_func *f;
  tl_hoist_plan *plan;
  int32_t body_region_owner; /* the loop */
  char *seen;
  char *why;
  size_t n;
} walk;

static bool refuse(walk *w, const char *fmt, const char *a, long long b) {
  snprintf(w->why, w->n, fmt, a, b);
  return false;
}

static int32_t param_of_value(const tl_func *f, int32_t v) {
  for (int i = 0; i < f->params.len; i++)
    if (f->params.data[i].value == v) return i;
  return -1;
}

static void note_src(tl_hoist_plan *p, const char *name) {
  for (int i = 0; i < p->nsrcs; i++)
    if (!strcmp(p->srcs[i], name)) return;
  if (p->nsrcs < 4) p->srcs[p->nsrcs++] = name;
}

/* Whether value v (in B's slice; in_index: an index of a gather) may be computed once per (k-step,
 * column tile); else false with the reason. */
static bool slice_ok(walk *w, int32_t v, bool in_index) {
  tl_func *f = w->f;
  if (w->seen[v] & (in_index ? 2 : 1)) return true;
  w->seen[v] |= in_index ? 2 : 1;
  const tl_value *val = tl_val(f, v);
  if (val->def < 0) {
    if (val->region_owner < 0) return true; /* a scalar parameter */
    if (val->region_owner == w->body_region_owner && val->index == 0) return true; /* the loop's index */
    if (val->region_owner == w->body_region_owner)
      return refuse(w, "off (B depends on a value the loop carries%s)", "", 0);
    return refuse(w, "off (B depends on the index of another loop%s)", "", 0);
  }
  const tl_op *o = tl_op_at(f, val->def);
  switch ((tl_opcode)o->opc) {
  case TL_OP_program_id:
    if (o->axis == 0)
      return refuse(w, "off (B depends on program_id(0), the rows of C: each row of tiles computes its own%s)", "", 0);
    if (o->axis != 1) return refuse(w, "off (B depends on program_id(%s%lld): only program_id(1) may name its tile)", "", o->axis);
    return true;
  case TL_OP_num_programs:
    /* the pre-kernel's grid differs from the kernel's (axis 0: the k-steps) */
    return refuse(w, "off (B depends on num_programs(%s%lld): the pre-kernel's grid is not the kernel's)", "", o->axis);
  case TL_OP_dot: case TL_OP_reduce: case TL_OP_scan: case TL_OP_sort: case TL_OP_argreduce: case TL_OP_atomic:
  case TL_OP_rand: case TL_OP_for: case TL_OP_if: case TL_OP_store:
    return refuse(w, "off (B is computed with a %s: elementwise ops on loads only%.0lld)", tl_opinfo_table[o->opc].name, 0);
  case TL_OP_load: {
    int32_t p = param_of_value(f, o->opnd[0]);
    if (p < 0) return refuse(w, "off (B loads from a value that is not a parameter%s)", "", 0);
    const tl_param *pp = &f->params.data[p];
    if (in_index) return refuse(w, "off (B gathers by indices loaded from '%s': a data-dependent gather%.0lld)", pp->name, 0);
    if (pp->rank > 2) return refuse(w, "off (B loads '%s', a %lld-D tensor: 2-D operands only)", pp->name, pp->rank);
    if (tl_param_written(f, p)) return refuse(w, "off (B loads '%s', which the kernel writes%.0lld)", pp->name, 0);
    note_src(w->plan, pp->name);
    for (int k = 1; k < o->nopnd; k++) {
      bool gather = k <= pp->rank && tl_val(f, o->opnd[k])->type.kind != TL_KIND_SCALAR;
      if (!slice_ok(w, o->opnd[k], in_index || gather)) return false;
    }
    return true;
  }
  default:
    for (int k = 0; k < o->nopnd; k++)
      if (!slice_ok(w, o->opnd[k], in_index)) return false;
    return true;
  }
}

/* v, looking through convert_layout: its defining op, or -1. */
static int32_t def_through(tl_func *f, int32_t v) {
  for (;;) {
    int32_t d = tl_val(f, v)->def;
    if (d < 0 || tl_op_at(f, d)->opc != TL_OP_convert_layout) return d;
    v = tl_op_at(f, d)->opnd[0];
  }
}

static bool const_is(tl_func *f, int32_t v, int64_t *out) {
  int32_t d = tl_val(f, v)->def;
  if (d < 0 || tl_op_at(f, d)->opc != TL_OP_const || tl_val(f, v)->type.kind != TL_KIND_SCALAR) return false;
  *out = tl_op_at(f, d)->ival;
  return true;
}

/* n0 = program_id(1) * bn (either order). */
static bool is_column_start(tl_func *f, int32_t v, int64_t bn) {
  int32_t d = tl_val(f, v)->def;
  if (d < 0 || tl_op_at(f, d)->opc != TL_OP_mul) return false;
  for (int s = 0; s < 2; s++) {
    int32_t x = tl_op_at(f, d)->opnd[s], y = tl_op_at(f, d)->opnd[1 - s];
    int32_t xd = tl_val(f, x)->def;
    int64_t c;
    if (xd >= 0 && tl_op_at(f, xd)->opc == TL_OP_program_id && tl_op_at(f, xd)->axis == 1 && const_is(f, y, &c) && c == bn)
      return true;
  }
  return false;
}

/* Finds n0 and N among B's loads: a load whose view is B's column extent with a scalar start. */
static bool find_columns(tl_func *f, const char *seen, tl_hoist_plan *p) {
  for (int32_t i = 0; i < f->ops.len; i++) {
    const tl_op *o = &f->ops.data[i];
    if (o->flags & TL_OPF_DEAD || o->opc != TL_OP_load || !(seen[o->res[0]] & 1) || o->nopnd < 3) continue;
    int32_t pi = param_of_value(f, o->opnd[0]);
    if (pi < 0 || f->params.data[pi].rank != 2 || o->dims[1] != p->bn) continue;
    if (tl_val(f, o->opnd[2])->type.kind != TL_KIND_SCALAR || !is_column_start(f, o->opnd[2], p->bn)) continue;
    p->n0 = o->opnd[2];
    p->n_dim = f->params.data[pi].dims[1];
    return true;
  }
  return false;
}

int tl_hoist_operand_find(tl_func *f, tl_hoist_plan *plan, char *why, size_t n) {
  memset(plan, 0, sizeof *plan);
  why[0] = 0;
  int32_t dot = -1;
  int ndots = 0;
  bool atomics = false, inner_store = false;
  for (int32_t i = 0; i < f->ops.len; i++) {
    const tl_op *o = &f->ops.data[i];
    if (o->flags & TL_OPF_DEAD) continue;
    if (o->opc == TL_OP_dot) dot = i, ndots++;
    if (o->opc == TL_OP_atomic) atomics = true;
    if (o->opc == TL_OP_store && o->parent >= 0) inner_store = true;
  }
  if (ndots != 1) return 0;
  tl_op *d = tl_op_at(f, dot);
  bool bt = false;
  if (tl_loaded_param(f, d->opnd[1], &bt) >= 0) return 0; /* B is a load already */
  const tl_type *bty = &tl_val(f, d->opnd[1])->type;
#define NO(...) return snprintf(why, n, __VA_ARGS__), -1
  if (atomics) NO("off (the kernel has atomics: a form runs them once more or not at all)");
  for (int i = 0; i < f->params.len; i++)
    if (!strcmp(f->params.data[i].name, TL_HOIST_PARAM)) NO("off (a parameter is named '" TL_HOIST_PARAM "', the workspace's name)");
  if (inner_store) NO("off (the kernel stores inside a loop or branch)");
  if (bty->kind != TL_KIND_TILE || bty->rank != 2) NO("off (B is not a 2-D tile)");
  if (bty->dtype != TL_BF16 && bty->dtype != TL_F16)
    NO("off (B is %s: the workspace holds a 16-bit B)", tl_dtype_name((tl_dtype)bty->dtype));
  if (d->parent < 0 || tl_op_at(f, d->parent)->opc != TL_OP_for) NO("off (the dot is not in a loop)");
  int32_t F = d->parent;
  if (tl_op_at(f, F)->parent >= 0) NO("off (the dot's loop is nested)");
  if (d->nopnd != 3) NO("off (the dot has no accumulator)");
  plan->dot = dot, plan->for_op = F;
  plan->for_pos = -1;
  for (int i = 0; i < f->body.ops.len; i++)
    if (f->body.ops.data[i] == F) plan->for_pos = i;
  plan->bk = bty->shape[0], plan->bn = bty->shape[1];
  plan->dtype = bty->dtype;
  const tl_region *body = &tl_op_at(f, F)->regions[0];
  plan->iv = body->args.data[0];
  /* A: a 2-D view of a 2-D parameter whose columns start at the loop's index */
  int32_t la = def_through(f, d->opnd[0]);
  const tl_op *a = la >= 0 ? tl_op_at(f, la) : NULL;
  int32_t pa = a && a->opc == TL_OP_load ? param_of_value(f, a->opnd[0]) : -1;
  if (pa < 0 || a->nopnd != 3 || f->params.data[pa].rank != 2 || !a->dims[0] || !a->dims[1])
    NO("off (A is not a load of a 2-D view of a 2-D tensor)");
  if (a->opnd[2] != plan->iv) NO("off (A's columns do not start at the loop's index)");
  plan->a_load = la;
  plan->k_dim = f->params.data[pa].dims[1];
  /* the loop: for k0 in range(0, dim(P, ax), BK) */
  int64_t lo, st;
  const tl_op *fo = tl_op_at(f, F);
  if (!const_is(f, fo->opnd[0], &lo) || lo != 0 || !const_is(f, fo->opnd[2], &st) || st != plan->bk)
    NO("off (the loop does not run from 0 by the dot's K extent %lld)", (long long)plan->bk);
  plan->lo_step = fo->opnd[2];
  int32_t hd = tl_val(f, fo->opnd[1])->def;
  if (hd < 0 || tl_op_at(f, hd)->opc != TL_OP_dim) NO("off (the loop's end is not a tensor's size)");
  plan->hi_dim = hd;
  /* B's slice */
  char seen_buf[1];
  char *seen = f->values.len ? tl_alloc(&f->ctx->arena, (size_t)f->values.len) : seen_buf;
  memset(seen, 0, (size_t)f->values.len);
  walk w = {f, plan, F, seen, why, n};
  if (!slice_ok(&w, d->opnd[1], false)) return -1;
  if (!find_columns(f, seen, plan))
    NO("off (no load of B's slice has B's %lld columns at program_id(1) * %lld)", (long long)plan->bn, (long long)plan->bn);
#undef NO
  return 1;
}

/* ---- the rewrite ------------------------------------------------------------------------------- */

static int32_t insert(tl_func *f, tl_region *r, int *pos, tl_opcode opc, const int32_t *opnd, int n, const tl_type *t,
                      int nres, tl_loc loc) {
  int32_t op = tl_op_new(f, NULL, opc, opnd, n, t, nres, loc);
  tl_region_insert(f, r, (*pos)++, op);
  return nres ? tl_op_at(f, op)->res[0] : -1;
}

static int32_t binary(tl_func *f, tl_region *r, int *pos, tl_opcode opc, int32_t x, int32_t y, tl_loc loc) {
  tl_type i32 = tl_scalar_type(TL_I32);
  int32_t o[2] = {x, y};
  return insert(f, r, pos, opc, o, 2, &i32, 1, loc);
}

static int32_t add_workspace(tl_func *f, const tl_hoist_plan *h) {
  tl_param p;
  memset(&p, 0, sizeof p);
  p.name = TL_HOIST_PARAM;
  p.is_tensor = true;
  p.dtype = (tl_dtype)h->dtype;
  p.rank = 2;
  p.loc = f->loc;
  p.dims[0] = h->k_dim;
  p.dims[1] = h->n_dim;
  int32_t idx = tl_func_add_param(f, &p);
  return f->params.data[idx].value;
}

/* form: B = load hoisted[k0 : k0 + BK, n0 : n0 + BN] */
static void make_form(tl_func *f, const tl_hoist_plan *h, int32_t W) {
  tl_op *d = tl_op_at(f, h->dot);
  tl_region *r = &tl_op_at(f, h->for_op)->regions[0];
  int pos = tl_pos_in(r, h->dot);
  tl_type t = tl_val(f, d->opnd[1])->type;
  int32_t lo[3] = {W, h->iv, h->n0};
  int32_t b = insert(f, r, &pos, TL_OP_load, lo, 3, &t, 1, d->loc);
  tl_op *l = tl_op_at(f, tl_val(f, b)->def);
  l->dims[0] = (int32_t)h->bk, l->dims[1] = (int32_t)h->bn;
  tl_op_at(f, h->dot)->opnd[1] = b;
}

/* pre: store B's tile, one k-step a program along grid axis 0, nothing else stored */
static void make_pre(tl_func *f, const tl_hoist_plan *h, int32_t W) {
  tl_op *d = tl_op_at(f, h->dot);
  tl_loc loc = d->loc;
  tl_region *r = &tl_op_at(f, h->for_op)->regions[0];
  int pos = tl_pos_in(r, h->dot);
  int32_t st[4] = {W, h->iv, h->n0, d->opnd[1]};
  int32_t sop = tl_op_new(f, NULL, TL_OP_store, st, 4, NULL, 0, loc);
  tl_op_at(f, sop)->dims[0] = (int32_t)h->bk, tl_op_at(f, sop)->dims[1] = (int32_t)h->bn;
  tl_region_insert(f, r, pos, sop);
  d = tl_op_at(f, h->dot);
  tl_replace_uses(f, d->res[0], d->opnd[2]);
  tl_op_erase(f, r, pos + 1);
  /* the kernel's own stores (the epilogue) go */
  for (int i = f->body.ops.len - 1; i >= 0; i--)
    if (tl_op_at(f, f->body.ops.data[i])->opc == TL_OP_store) tl_op_erase(f, &f->body, i);
  /* the loop runs k-step program_id(0): [pid0 BK, min(K, pid0 BK + BK)) */
  int fpos = tl_pos_in(&f->body, h->for_op);
  tl_type i32 = tl_scalar_type(TL_I32);
  int32_t pid = insert(f, &f->body, &fpos, TL_OP_program_id, NULL, 0, &i32, 1, loc);
  tl_op_at(f, tl_val(f, pid)->def)->axis = 0;
  tl_op *fo = tl_op_at(f, h->for_op);
  int32_t step = fo->opnd[2], hi = fo->opnd[1];
  int32_t klo = binary(f, &f->body, &fpos, TL_OP_mul, pid, step, loc);
  int32_t khi = binary(f, &f->body, &fpos, TL_OP_min, hi, binary(f, &f->body, &fpos, TL_OP_add, klo, step, loc), loc);
  fo = tl_op_at(f, h->for_op);
  fo->opnd[0] = klo, fo->opnd[1] = khi;
  /* grid axis 0: cdiv(K, BK) k-steps */
  tl_region *gr = &f->grid;
  int gpos = gr->ops.len - 1;
  const tl_op *hd = tl_op_at(f, h->hi_dim);
  int32_t dimo[1] = {hd->opnd[0]};
  int32_t axis = hd->axis;
  int32_t kd = insert(f, gr, &gpos, TL_OP_dim, dimo, 1, &i32, 1, loc);
  tl_op_at(f, tl_val(f, kd)->def)->axis = axis;
  int32_t c = insert(f, gr, &gpos, TL_OP_const, NULL, 0, &i32, 1, loc);
  tl_op_at(f, tl_val(f, c)->def)->ival = h->bk;
  int32_t c1 = insert(f, gr, &gpos, TL_OP_const, NULL, 0, &i32, 1, loc);
  tl_op_at(f, tl_val(f, c1)->def)->ival = 1;
  int32_t steps = binary(f, gr, &gpos, TL_OP_div, binary(f, gr, &gpos, TL_OP_sub, binary(f, gr, &gpos, TL_OP_add, kd, c, loc), c1, loc), c, loc);
  tl_op_at(f, gr->ops.data[gr->ops.len - 1])->opnd[0] = steps;
}

static bool run_hoist_operand(tl_func *f, const tl_pass_opts *o) {
  if (!o->hoist_operand_role || !o->hoist_operand_kernel || strcmp(o->hoist_operand_kernel, f->name)) return true;
  tl_hoist_plan h;
  char why[300];
  int found = tl_hoist_operand_find(f, &h, why, sizeof why);
  if (found <= 0) {
    tl_error(f->ctx, f->loc, "kernel '%s': no materialize-once form: %s", f->name,
             found == 0 ? "no single dot whose B operand is computed in the loop" : why);
    return false;
  }
  int32_t W = add_workspace(f, &h);
  if (o->hoist_operand_role == 1) make_form(f, &h, W);
  else make_pre(f, &h, W);
  if (!tl_pass_dce.run(f, o)) return false;
  if (o->explain && o->explain_out)
    tl_sbuf_printf(o->explain_out,
                   o->hoist_operand_role == 1
                       ? "hoist_operand: kernel '%s': B read from " TL_HOIST_PARAM
                         ": %s [%s, %s] by a plain load (the materialize-once form)\n"
                       : "hoist_operand: kernel '%s': B's tiles stored into " TL_HOIST_PARAM
                         ": %s [%s, %s], one k-step a program along grid axis 0 (the materialize-once pre-kernel)\n",
                   f->name, tl_dtype_name((tl_dtype)h.dtype), h.k_dim.is_const ? "const" : f->syms.data[h.k_dim.sym].name,
                   h.n_dim.is_const ? "const" : f->syms.data[h.n_dim.sym].name);
  return true;
}

const tl_pass tl_pass_hoist_operand = {
    "hoist_operand",
    "requires verified IR; only with the hoist-operand option, on the kernel it names: " TL_HOIST_PARAM
    " [K, N] appended; form: the dot's computed B a load of it; pre: B's tiles stored into it (lib/hoist_operand.h)",
    run_hoist_operand,
};
