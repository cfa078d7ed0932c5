/* dot_acc_fold: requires verified IR (after canonicalize); keeps semantics up to the order of a float sum, and
 * verification; breaks nothing.  Folds `acc + dot(a, b)` -- `acc += dot(a, b)`, the spelling of PyTorch and Triton
 * users, whose dot has the zero accumulator -- into `dot(a, b, acc)`, so the loop carries its accumulator through the
 * dot and route_pipeline finds the main loop (the add left it "not accumulating": `simple`, one stage, mma.sync and
 * spills; a cliff hunt, thirty-ninth session).  Triton folds the same pattern.  Only where the dot's result has no
 * other use, both have one type (the accumulator's: f32, or i32 for 8-bit integers), and `acc` is defined before the
 * dot (a loop-carried value, or an op before it in its region).  The sum's order changes as it does between two
 * tilings of one dot: f32 rounding, not the result's meaning; integers are exact. */
#include <string.h>

#include "ir.h"

/* position of op in region r, -1 when not there */
static int pos_in(const tl_region *r, int32_t op) {
  for (int i = 0; i < r->ops.len; i++)
    if (r->ops.data[i] == op) return i;
  return -1;
}

static void walk(tl_func *f, tl_region *r, int32_t *uses, int32_t *repl) {
  for (int i = 0; i < r->ops.len; i++) {
    int32_t id = r->ops.data[i];
    tl_op *o = tl_op_at(f, id);
    if (o->flags & TL_OPF_DEAD) continue;
    for (int k = 0; k < o->nopnd; k++)
      while (o->opnd[k] >= 0 && repl[o->opnd[k]] >= 0) o->opnd[k] = repl[o->opnd[k]];
    for (int k = 0; k < o->nregions; k++) walk(f, &tl_op_at(f, id)->regions[k], uses, repl);
    o = tl_op_at(f, id);
    if (o->opc != TL_OP_add || o->nopnd != 2 || o->nres != 1) continue;
    for (int side = 0; side < 2; side++) {
      int32_t dv = o->opnd[side], acc = o->opnd[1 - side], D = tl_val(f, dv)->def;
      if (D < 0) continue;
      tl_op *d = tl_op_at(f, D);
      if (d->opc != TL_OP_dot || (d->flags & TL_OPF_DEAD) || d->nopnd != 3 || uses[dv] != 1 ||
          !tl_is_zero_const(f, d->opnd[2]))
        continue;
      const tl_type *rt = &tl_val(f, o->res[0])->type;
      if (!tl_type_eq(&tl_val(f, dv)->type, rt) || !tl_type_eq(&tl_val(f, acc)->type, rt)) continue;
      int dpos = pos_in(r, D);
      int32_t adef = tl_val(f, acc)->def;
      int apos = adef >= 0 ? pos_in(r, adef) : -1;
      if (dpos < 0 || (apos >= 0 && apos > dpos)) continue; /* (acc made after the dot: it cannot read it) */
      uses[d->opnd[2]]--;
      d->opnd[2] = acc;
      repl[o->res[0]] = dv;
      tl_op_mark_dead(f, id);
      break;
    }
  }
  int n = 0; /* (the folded adds leave the region) */
  for (int i = 0; i < r->ops.len; i++)
    if (!(tl_op_at(f, r->ops.data[i])->flags & TL_OPF_DEAD)) r->ops.data[n++] = r->ops.data[i];
  r->ops.len = n;
}

static bool run_dot_acc_fold(tl_func *f, const tl_pass_opts *opts) {
  (void)opts;
  int32_t *uses = tl_count_uses(f);
  if (!uses) return true;
  int32_t *repl = tl_alloc(&f->ctx->arena, sizeof(int32_t) * (size_t)(f->values.len + 1));
  for (int i = 0; i <= f->values.len; i++) repl[i] = -1;
  walk(f, &f->body, uses, repl);
  return true;
}

const tl_pass tl_pass_dot_acc_fold = {
    "dot_acc_fold",
    "requires verified IR; keeps semantics (a float sum's order aside); folds acc + dot(a, b) into dot(a, b, acc)",
    run_dot_acc_fold,
};
