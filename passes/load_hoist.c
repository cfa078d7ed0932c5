/* load_hoist: requires verified IR; keeps semantics (no load crosses a
 * store, a for/if or another load); moves each global load of the kernel body (function
 * level, not inside loops) up to just after the ops that define its
 * operands, and the pure scalar ops those need with it, so its latency
 * overlaps the work before it.  Breaks nothing.  docs/scheduling.md.
 *
 * Why: a program that loads a row, reduces it (shared memory + barriers)
 * and only then loads the weights (rmsnorm, layernorm) waits for two
 * memory latencies in a row; codegen emits ops in program order and LLVM
 * does not move our loads across a barrier. */
#include "ir.h"

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

/* index math: a pure op with one scalar result and no region */
static bool movable_scalar(tl_func *f, int32_t op) {
  tl_op *d = tl_op_at(f, op);
  return d->nres == 1 && d->nregions == 0 && (tl_opinfo_table[d->opc].flags & TL_PURE) &&
         tl_val(f, d->res[0])->type.kind == TL_KIND_SCALAR;
}

/* The position op can go after: the floor, the defs of its operands that
 * cannot move, and (through movable_scalar defs) theirs. */
static int anchor_of(tl_func *f, const tl_region *r, const int32_t *pos_of, int32_t op, int floor, int depth) {
  tl_op *o = tl_op_at(f, op);
  int a = floor;
  for (int k = 0; k < o->nopnd; k++) {
    int p = def_pos(f, r, pos_of, o->opnd[k]);
    if (p <= floor) continue;
    int32_t d = r->ops.data[p];
    int da = depth < 32 && movable_scalar(f, d) ? anchor_of(f, r, pos_of, d, floor, depth + 1) : p;
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
    if (depth >= 32 || !movable_scalar(f, d)) continue; /* (cannot happen past the anchor) */
    take[p] = true;
    mark_deps(f, r, pos_of, d, anchor, take, depth + 1);
  }
}

static bool run_load_hoist(tl_func *f, const tl_pass_opts *opts) {
  (void)opts;
  tl_region *r = &f->body;
  int n = r->ops.len;
  int32_t *pos_of = tl_alloc(&f->ctx->arena, sizeof(int32_t) * (size_t)(f->ops.len + 1));
  bool *take = tl_alloc(&f->ctx->arena, (size_t)n + 1);
  int32_t *order = tl_alloc(&f->ctx->arena, sizeof(int32_t) * (size_t)(n + 1));
  for (int j = 0; j < n; j++) pos_of[r->ops.data[j]] = j;
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
    for (int j = anchor + 1; j < i; j++)
      if (!take[j] && !movable_scalar(f, r->ops.data[j])) passes_work = true;
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
    }
    floor = i;
  }
  return true;
}

const tl_pass tl_pass_load_hoist = {
    "load_hoist",
    "requires verified IR; keeps semantics (no load crosses a store, region or other load); moves kernel-body loads up past tile work",
    run_load_hoist,
};
