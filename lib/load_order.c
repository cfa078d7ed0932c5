/* load_order.c: tl_hoist_loads and tl_depends_on_program_id (contract: load_order.h). */
#include <string.h>

#include "load_order.h"

static bool is_barrier(const tl_op *o) {
  /* stores, atomics, and regions (a loop or branch may store) end the hoisting */
  return o->opc == TL_OP_store || o->opc == TL_OP_atomic || o->nregions > 0 || (tl_opinfo_table[o->opc].flags & TL_TERM);
}

/* position in r of the op defining v, or -1 when defined outside r */
static int def_pos(tl_func *f, const tl_region *r, const int32_t *pos_of, int32_t v) {
  int32_t d = tl_val(f, v)->def;
  if (d < 0 || tl_op_at(f, d)->parent != r->owner) return -1;
  return pos_of[d];
}

bool tl_is_index_math(tl_func *f, int32_t op) {
  tl_op *d = tl_op_at(f, op);
  return d->nres == 1 && d->nregions == 0 && (tl_opinfo_table[d->opc].flags & TL_PURE) &&
         tl_val(f, d->res[0])->type.kind == TL_KIND_SCALAR;
}

/* The position op can go after: the floor, the defs of its operands that
 * cannot move, and (through index-math defs) theirs. */
static int anchor_of(tl_func *f, const tl_region *r, const int32_t *pos_of, int32_t op, int floor, int depth) {
  tl_op *o = tl_op_at(f, op);
  int a = floor;
  for (int k = 0; k < o->nopnd; k++) {
    int p = def_pos(f, r, pos_of, o->opnd[k]);
    if (p <= floor) continue;
    int32_t d = r->ops.data[p];
    int da = depth < 32 && tl_is_index_math(f, d) ? anchor_of(f, r, pos_of, d, floor, depth + 1) : p;
    if (da > a) a = da;
  }
  return a;
}

static void mark_deps(tl_func *f, const tl_region *r, const int32_t *pos_of, int32_t op, int anchor, bool *take,
                      int depth) {
  tl_op *o = tl_op_at(f, op);
  for (int k = 0; k < o->nopnd; k++) {
    int p = def_pos(f, r, pos_of, o->opnd[k]);
    if (p <= anchor || take[p]) continue;
    int32_t d = r->ops.data[p];
    if (depth >= 32 || !tl_is_index_math(f, d)) continue; /* (cannot happen past the anchor) */
    take[p] = true;
    mark_deps(f, r, pos_of, d, anchor, take, depth + 1);
  }
}

int tl_hoist_loads(tl_func *f, tl_load_pick pick, void *ctx) {
  tl_region *r = &f->body;
  int n = r->ops.len;
  int32_t *pos_of = tl_alloc(&f->ctx->arena, sizeof(int32_t) * (size_t)(f->ops.len + 1));
  bool *take = tl_alloc(&f->ctx->arena, (size_t)n + 1);
  int32_t *order = tl_alloc(&f->ctx->arena, sizeof(int32_t) * (size_t)(n + 1));
  for (int j = 0; j < n; j++) pos_of[r->ops.data[j]] = j;
  int moved = 0;
  int floor = -1; /* the last store, region or load before i: loads keep their order */
  for (int i = 0; i < n; i++) {
    int32_t op = r->ops.data[i];
    tl_op *o = tl_op_at(f, op);
    if (o->opc != TL_OP_load) {
      if (is_barrier(o)) floor = i;
      continue;
    }
    /* what can move lies in (floor, i]: mark_deps looks nowhere else */
    for (int j = floor + 1; j <= i; j++) take[j] = false;
    int anchor = anchor_of(f, r, pos_of, op, floor, 0);
    take[i] = true;
    mark_deps(f, r, pos_of, op, anchor, take, 0);
    /* worth it only when the load passes tile work (a reduction, math) */
    bool passes_work = false;
    if (pick && !pick(f, op, ctx)) anchor = i; /* not asked for: stays, and is the next floor */
    for (int j = anchor + 1; j < i; j++)
      if (!take[j] && !tl_is_index_math(f, r->ops.data[j])) passes_work = true;
    if (passes_work) {
      /* [0..anchor] stays; then the taken ops in order, the others in order */
      int m = anchor + 1;
      for (int j = anchor + 1; j <= i; j++)
        if (take[j]) order[m++] = r->ops.data[j];
      for (int j = anchor + 1; j <= i; j++)
        if (!take[j]) order[m++] = r->ops.data[j];
      for (int j = anchor + 1; j <= i; j++) {
        r->ops.data[j] = order[j];
        pos_of[order[j]] = j;
      }
      i = pos_of[op]; /* continue after the load's new place */
      moved++;
    }
    floor = i;
  }
  return moved;
}


static bool pid_dep(tl_func *f, int32_t v, int8_t *memo, int depth) {
  if (memo[v]) return memo[v] > 0;
  tl_value *val = tl_val(f, v);
  bool dep = false;
  if (val->def >= 0 && depth < 64) {
    tl_op *d = tl_op_at(f, val->def);
    dep = d->opc == TL_OP_program_id;
    for (int k = 0; k < d->nopnd && !dep; k++) dep = pid_dep(f, d->opnd[k], memo, depth + 1);
  }
  memo[v] = dep ? 1 : -1;
  return dep;
}

bool tl_depends_on_program_id(tl_func *f, int32_t v) {
  int8_t *memo = tl_alloc(&f->ctx->arena, (size_t)f->values.len + 1);
  memset(memo, 0, (size_t)f->values.len + 1);
  return pid_dep(f, v, memo, 0);
}
