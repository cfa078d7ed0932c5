/* dce: requires verified IR; keeps semantics and verification; removes pure
 * and memory-reading ops whose results are unused (transitively), `for`/`if`
 * ops whose results are unused and whose regions hold no store, and loop-
 * carried values of a `for` that nothing outside their own update needs. */
#include <string.h>

#include "ir.h"

typedef struct dce {
  tl_func *f;
  int32_t *uses;
  bool changed;
} dce;

static bool has_store(tl_func *f, int32_t op) {
  tl_op *o = tl_op_at(f, op);
  if (o->opc == TL_OP_store || o->opc == TL_OP_atomic) return true;
  for (int r = 0; r < o->nregions; r++)
    for (int i = 0; i < o->regions[r].ops.len; i++)
      if (has_store(f, o->regions[r].ops.data[i])) return true;
  return false;
}

/* Forget the operand uses of op and everything nested in it. */
static void drop_uses(dce *d, int32_t op) {
  tl_op *o = tl_op_at(d->f, op);
  for (int i = 0; i < o->nopnd; i++) d->uses[o->opnd[i]]--;
  for (int r = 0; r < o->nregions; r++)
    for (int i = 0; i < o->regions[r].ops.len; i++) drop_uses(d, o->regions[r].ops.data[i]);
}

static bool removable(dce *d, int32_t op) {
  tl_op *o = tl_op_at(d->f, op);
  int flags = tl_opinfo_table[o->opc].flags;
  for (int i = 0; i < o->nres; i++)
    if (d->uses[o->res[i]]) return false;
  if (flags & TL_TERM) return false;
  if (flags & (TL_PURE | TL_READ)) return true;
  if (o->opc == TL_OP_for || o->opc == TL_OP_if) return !has_store(d->f, op);
  return false;
}

static bool feeds_only_yield(tl_func *f, tl_region *r, int32_t v, int32_t yv, const int32_t *uses);

/* Loop-carried slot k of `for` op is dead when its result is unused and the
 * region argument only feeds a chain of pure ops that ends in yield slot k.
 * Then the slot is cut out: init, argument, result and yield operand. */
static void drop_dead_carried(dce *d, int32_t op) {
  tl_func *f = d->f;
  tl_op *o = tl_op_at(f, op);
  if (o->opc != TL_OP_for || o->nregions != 1) return;
  tl_region *r = &o->regions[0];
  if (r->ops.len == 0) return;
  tl_op *y = tl_op_at(f, r->ops.data[r->ops.len - 1]);
  if (y->opc != TL_OP_yield) return;
  for (int k = o->nres - 1; k >= 0; k--) {
    o = tl_op_at(f, op);
    y = tl_op_at(f, r->ops.data[r->ops.len - 1]);
    int32_t res = o->res[k], arg = r->args.data[1 + k], yv = y->opnd[k];
    if (d->uses[res]) continue;
    /* dead when: the argument passes through unchanged and nothing else
     * reads it; or nothing reads it and the yielded value feeds only the
     * yield; or it feeds only a single-use chain of pure ops ending in yv */
    bool dead = false;
    if (yv == arg) dead = d->uses[arg] == 1;
    else if (d->uses[yv] == 1) dead = d->uses[arg] == 0 || feeds_only_yield(f, r, arg, yv, d->uses);
    if (!dead) continue;
    /* cut slot k */
    d->uses[o->opnd[3 + k]]--;
    d->uses[yv]--;
    for (int i = 3 + k; i + 1 < o->nopnd; i++) o->opnd[i] = o->opnd[i + 1];
    o->nopnd--;
    for (int i = k; i + 1 < o->nres; i++) {
      o->res[i] = o->res[i + 1];
      tl_val(f, o->res[i])->index = i;
    }
    o->nres--;
    for (int i = 1 + k; i + 1 < r->args.len; i++) {
      r->args.data[i] = r->args.data[i + 1];
      tl_val(f, r->args.data[i])->index = i;
    }
    r->args.len--;
    for (int i = k; i + 1 < y->nopnd; i++) y->opnd[i] = y->opnd[i + 1];
    y->nopnd--;
    tl_val(f, arg)->region_owner = -2; /* detached */
    tl_val(f, res)->def = -2;
    d->changed = true;
  }
}

/* From v, every value has exactly one use (in the whole function), by a pure
 * op directly in r, until yv, whose one use is the yield. */
static bool feeds_only_yield(tl_func *f, tl_region *r, int32_t v, int32_t yv, const int32_t *uses) {
  int32_t cur = v;
  for (int steps = 0; steps < r->ops.len + 1; steps++) {
    if (uses[cur] != 1) return false;
    int32_t user = -1, nuse = 0;
    for (int i = 0; i < r->ops.len; i++) {
      tl_op *o = tl_op_at(f, r->ops.data[i]);
      for (int k = 0; k < o->nopnd; k++)
        if (o->opnd[k] == cur) {
          user = r->ops.data[i];
          nuse++;
        }
    }
    if (nuse != 1) return false;
    tl_op *u = tl_op_at(f, user);
    if (u->opc == TL_OP_yield) return cur == yv;
    if (!(tl_opinfo_table[u->opc].flags & TL_PURE) || u->nres != 1) return false;
    cur = u->res[0];
  }
  return false;
}

static void sweep(dce *d, tl_region *r) {
  for (int i = r->ops.len - 1; i >= 0; i--) {
    int32_t op = r->ops.data[i];
    tl_op *o = tl_op_at(d->f, op);
    for (int k = 0; k < o->nregions; k++) sweep(d, &tl_op_at(d->f, op)->regions[k]);
    if (removable(d, op)) {
      drop_uses(d, op);
      tl_op_erase(d->f, r, i);
      d->changed = true;
      continue;
    }
    drop_dead_carried(d, op);
  }
}

static bool run_dce(tl_func *f, const tl_pass_opts *o) {
  (void)o;
  dce d = {f, NULL, true};
  for (int round = 0; d.changed && round < 64; round++) {
    d.changed = false;
    d.uses = tl_count_uses(f);
    sweep(&d, &f->grid);
    sweep(&d, &f->body);
  }
  return true;
}

const tl_pass tl_pass_dce = {
    "dce",
    "requires verified IR; keeps semantics; removes unused pure/read ops, store-free unused for/if, dead loop-carried values",
    run_dce,
};
