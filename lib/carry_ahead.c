/* carry_ahead.c: tl_ahead_chain_of and tl_issue_ahead (contract: carry_ahead.h). */
#include "carry_ahead.h"

#include <string.h>

#include "load_order.h"

/* v is computable one iteration ahead: defined outside the loop, the induction variable, or
 * index math of the body on such values (collected into c, each once, after its operands). */
static bool ahead_ok(tl_func *f, int32_t loop, int32_t iv, int32_t v, tl_ahead_chain *c, int depth) {
  if (v == iv || tl_defined_outside(f, v, loop)) return true;
  int32_t d = tl_val(f, v)->def;
  if (d < 0 || depth > TL_AHEAD_CHAIN_MAX || tl_op_at(f, d)->parent != loop || !tl_is_index_math(f, d)) return false;
  for (int i = 0; i < c->n; i++)
    if (c->op[i] == d) return true;
  tl_op *o = tl_op_at(f, d);
  for (int k = 0; k < o->nopnd; k++)
    if (!ahead_ok(f, loop, iv, o->opnd[k], c, depth + 1)) return false;
  if (c->n == TL_AHEAD_CHAIN_MAX) return false;
  c->op[c->n++] = d;
  return true;
}

bool tl_ahead_chain_of(tl_func *f, int32_t L, int32_t ld, tl_ahead_chain *c, bool *uses_iv) {
  int32_t iv = tl_op_at(f, L)->regions[0].args.data[0];
  tl_op *o = tl_op_at(f, ld);
  c->n = 0;
  *uses_iv = false;
  for (int k = 0; k < o->nopnd; k++)
    if (!ahead_ok(f, L, iv, o->opnd[k], c, 0)) return false;
  for (int k = 0; k < o->nopnd; k++) *uses_iv |= o->opnd[k] == iv;
  for (int i = 0; i < c->n; i++)
    for (int k = 0; k < tl_op_at(f, c->op[i])->nopnd; k++) *uses_iv |= tl_op_at(f, c->op[i])->opnd[k] == iv;
  return true;
}

/* A copy of op src_id on its operands remapped through from/to, inserted into r at *pos;
 * returns the copy's op id. */
static int32_t copy_op(tl_func *f, int32_t src_id, const int32_t *from, const int32_t *to, int nmap, tl_region *r,
                       int *pos) {
  const tl_op *src = tl_op_at(f, src_id);
  int32_t opnd[16];
  if (src->nopnd > 16) return -1;
  for (int k = 0; k < src->nopnd; k++) {
    opnd[k] = src->opnd[k];
    for (int m = 0; m < nmap; m++)
      if (from[m] == opnd[k]) opnd[k] = to[m];
  }
  tl_type t = tl_val(f, src->res[0])->type;
  int32_t nid = tl_op_clone(f, src, opnd, &t);
  tl_region_insert(f, r, (*pos)++, nid);
  return nid;
}

/* The load's chain and the load itself copied into r at *pos with the induction variable
 * replaced by `at`; returns the load copy's op id. */
static int32_t copy_load(tl_func *f, const tl_ahead_chain *c, int32_t load, int32_t iv, int32_t at, tl_region *r,
                         int *pos) {
  int32_t from[TL_AHEAD_CHAIN_MAX + 1], to[TL_AHEAD_CHAIN_MAX + 1];
  int n = 0;
  from[n] = iv, to[n++] = at;
  for (int i = 0; i < c->n; i++) {
    int32_t nop = copy_op(f, c->op[i], from, to, n, r, pos);
    from[n] = tl_op_at(f, c->op[i])->res[0], to[n++] = tl_op_at(f, nop)->res[0];
  }
  return copy_op(f, load, from, to, n, r, pos);
}

/* Appends one carried value (init, region argument, result) to loop L and the operand of its
 * yield; returns the region argument. */
static int32_t add_carried(tl_func *f, int32_t L, int32_t init, int32_t next, tl_type t) {
  int32_t res = tl_value_new(f, t, L, tl_op_at(f, L)->nres);
  tl_op *o = tl_op_at(f, L);
  int32_t *nr = tl_alloc(&f->ctx->arena, sizeof *nr * (size_t)(o->nres + 1));
  if (o->nres) memcpy(nr, o->res, sizeof *nr * (size_t)o->nres);
  nr[o->nres] = res;
  o->res = nr, o->nres++;
  tl_op_append_opnd(f, L, init);
  int32_t arg = tl_region_add_arg(f, &tl_op_at(f, L)->regions[0], L, t);
  tl_region *body = &tl_op_at(f, L)->regions[0];
  tl_op_append_opnd(f, body->ops.data[body->ops.len - 1], next);
  return arg;
}

int32_t tl_issue_ahead(tl_func *f, int32_t L, int32_t ld, const tl_ahead_chain *c, int pos) {
  tl_region *outer = tl_region_of(f, L);
  if (!outer) return -1;
  int32_t iv = tl_op_at(f, L)->regions[0].args.data[0];
  tl_type lt = tl_val(f, tl_op_at(f, ld)->res[0])->type;
  /* the first: before the loop, at the loop's lo */
  int opos = tl_pos_in(outer, L);
  int32_t lo = tl_op_at(f, L)->opnd[0], step = tl_op_at(f, L)->opnd[2];
  int32_t first = copy_load(f, c, ld, iv, lo, outer, &opos);
  /* the next: at pos in the body, at iv + step */
  tl_region *body = &tl_op_at(f, L)->regions[0];
  int32_t ad[2] = {iv, step};
  tl_type i32 = tl_scalar_type(TL_I32);
  int32_t addop = tl_op_new(f, NULL, TL_OP_add, ad, 2, &i32, 1, tl_op_at(f, ld)->loc);
  tl_region_insert(f, body, pos++, addop);
  int32_t next = copy_load(f, c, ld, iv, tl_op_at(f, addop)->res[0], body, &pos);
  int32_t arg = add_carried(f, L, tl_op_at(f, first)->res[0], tl_op_at(f, next)->res[0], lt);
  body = &tl_op_at(f, L)->regions[0];
  tl_replace_uses(f, tl_op_at(f, ld)->res[0], arg);
  tl_op_erase(f, body, tl_pos_in(body, ld));
  return next;
}
