/* convert_hoist: requires layouts (layout_assign); keeps semantics; breaks nothing.  In a for body, a
 * group of elementwise values made from loop invariants and small in-loop loads, which the body
 * converts to one layout every step, is computed in that layout instead: its loop-invariant
 * operands are converted once, before the loop, and the conversions in the loop disappear.
 *
 * Why: layout_assign decides forward, operand first.  `ck = cj * cn - sj * sn` (cj, sj rows loaded
 * before the loop, cn, sn one row a step) takes the loop-invariant cj's layout, the f32 load's; its
 * user `ka * ck` (ka a bf16 load: another layout) then converts ck through shared memory, with a
 * barrier, every step (bench/variants/attn_rope_angle.tile: 4 conversions, 9 barriers a step against
 * the example's 1).  Here the group {ck, sk, cj * cn, ...} is found from one such conversion, grown
 * along operands and users while every member can take the layout (elementwise ops, broadcasts,
 * expand_dims, constants, loads of at most 4 KiB), every user outside the group being a conversion
 * or in the group; no member feeds a dot, a reduction, a store or a nested region.  A conversion in
 * the loop of a loop invariant itself (layout_assign puts it in front of its user) moves before the
 * loop as it is.  Both only where the invariant is read nowhere else in its own layout, so it dies
 * at its conversion: the pass changes layouts only (no op is added in the loop), and the loop's
 * registers and arithmetic stay as they were.
 * TILEC_CONVERT_HOIST=0: off (measuring). */
#include <string.h>

#include "code_env.h"
#include "layout.h"
#include "ir.h"

enum { CH_MAX_GROUP = 64, CH_MAX_LOAD_BYTES = 4096 };

typedef struct ch_hoisted { /* a loop invariant converted before the loop */
  int32_t v, layout, copy;
} ch_hoisted;

typedef struct ch_state {
  tl_func *f;
  int32_t L;     /* the for op */
  int32_t *want; /* per value: the layout its group gives it, -1 none */
  int32_t cap;   /* entries of want */
  int32_t group[CH_MAX_GROUP];
  int n;
  int removed; /* conversions in the loop that the group makes identities */
  uint8_t *tried; /* per op: a conversion whose group did not close (not tried again) */
  int32_t ntried;
  TL_VEC(ch_hoisted) hoisted;
  tl_sbuf *ex; /* --explain's text, or NULL */
  const char *why;     /* why the last group did not close */
  const char *whys[4]; /* the distinct reasons of this loop's kept conversions, for --explain */
  int nwhys;
} ch_state;

static void note_why(ch_state *st, const char *why) {
  for (int i = 0; i < st->nwhys; i++)
    if (st->whys[i] == why) return;
  if (st->nwhys < 4) st->whys[st->nwhys++] = why;
}

static bool is_tile(tl_func *f, int32_t v) { return tl_val(f, v)->type.kind == TL_KIND_TILE; }
static int32_t layout_of(tl_func *f, int32_t v) { return tl_val(f, v)->type.layout; }

/* The layout operand k of op d needs when d's result takes layout W (lib/layout.h). */
static int32_t operand_layout(tl_func *f, const tl_op *d, int k, int32_t W) {
  if (d->opc != TL_OP_broadcast && d->opc != TL_OP_expand_dims) return W;
  tl_layout l = tl_layout_for_operand(tl_layout_at(f, W), d, tl_val(f, d->opnd[k])->type.shape);
  return tl_layout_intern(f, &l);
}

/* Operand k of group member d follows d's layout: not a load's tensor, and nothing through a conversion
 * (which converts from whatever its source has). */
static bool takes_layout(const tl_op *d, int k) {
  return d->opc != TL_OP_convert_layout && !(d->opc == TL_OP_load && k == 0);
}

/* Value v joins the group in layout W (true), or cannot (false).  A value from outside the loop is
 * a leaf (converted before the loop where it differs); one that already has W needs nothing. */
static bool join(ch_state *st, int32_t v, int32_t W) {
  tl_func *f = st->f;
  if (!is_tile(f, v) || tl_defined_outside(f, v, st->L)) return true;
  tl_value *x = tl_val(f, v);
  if (x->def < 0) return st->why = "a value made from a carried value", false;
  if (tl_op_at(f, x->def)->parent != st->L) return st->why = "a value made in a nested region", false;
  if (st->want[v] >= 0) return st->want[v] == W || (st->why = "a value needed in two layouts", false);
  if (layout_of(f, v) == W) return true;
  if (st->n == CH_MAX_GROUP) return st->why = "a group of more than 64 values", false;
  st->want[v] = W;
  st->group[st->n++] = v;
  return true;
}

static bool member_op_ok(tl_func *f, const tl_op *d) {
  if (d->nres != 1) return false;
  if (tl_opinfo_table[d->opc].flags & TL_EW) return true;
  switch (d->opc) {
  case TL_OP_broadcast:
  case TL_OP_expand_dims:
  case TL_OP_const:
  case TL_OP_iota:
  case TL_OP_splat:
  case TL_OP_convert_layout: /* stays a conversion, to the group's layout (or none) */
    return true;
  case TL_OP_load: { /* small tables' rows: another layout reads them as well */
    const tl_type *t = &tl_val(f, d->res[0])->type;
    int64_t n = tl_dtype_bytes((tl_dtype)t->dtype);
    for (int i = 0; i < t->rank; i++) n *= t->shape[i];
    return n <= CH_MAX_LOAD_BYTES;
  }
  default:
    return false;
  }
}

/* Every use of group member v (in layout W) inside the loop: a conversion (to W: one fewer in the
 * loop), a member (elementwise, expand_dims), or a broadcast that reads W as it is. */
static bool users_ok(ch_state *st, tl_region *r, int32_t v, int32_t W) {
  tl_func *f = st->f;
  for (int i = 0; i < r->ops.len; i++) {
    tl_op *u = tl_op_at(f, r->ops.data[i]);
    if (u->flags & TL_OPF_DEAD) continue;
    for (int g = 0; g < u->nregions; g++)
      if (!users_ok(st, &u->regions[g], v, W)) return false;
    for (int k = 0; k < u->nopnd; k++) {
      if (u->opnd[k] != v) continue;
      if (u->parent != st->L) return st->why = "a value read in a nested region", false;
      if (u->opc == TL_OP_convert_layout) {
        if (layout_of(f, u->res[0]) == W) st->removed++;
        continue;
      }
      if (u->nres == 1 && is_tile(f, u->res[0]) && (tl_opinfo_table[u->opc].flags & TL_EW)) {
        if (!join(st, u->res[0], W)) return false;
        continue;
      }
      if (u->opc == TL_OP_expand_dims) {
        tl_layout e = tl_layout_expand(tl_layout_at(f, W), u->axis);
        if (!join(st, u->res[0], tl_layout_intern(f, &e))) return false;
        continue;
      }
      if (u->opc == TL_OP_broadcast) { /* a member (its layout the group's) or not */
        int32_t rl = st->want[u->res[0]] >= 0 ? st->want[u->res[0]] : layout_of(f, u->res[0]);
        if (operand_layout(f, u, k, rl) == W) continue;
      }
      st->why = "a value read by a dot, a reduction, a store, a yield or a trans";
      return false;
    }
  }
  return true;
}

/* Grow the group from v (in layout W) over operands and users; true when it closes. */
static bool grow(ch_state *st, int32_t v, int32_t W) {
  tl_func *f = st->f;
  if (!join(st, v, W)) return false;
  for (int i = 0; i < st->n; i++) {
    int32_t m = st->group[i], w = st->want[m];
    tl_op *d = tl_op_at(f, tl_val(f, m)->def);
    if (!member_op_ok(f, d)) {
      st->why = d->opc == TL_OP_load ? "a value made from a load over 4 KiB"
                                     : "a value made by an op that keeps its layout (a dot, a reduction, a trans...)";
      return false;
    }
    for (int k = 0; k < d->nopnd; k++)
      if (takes_layout(d, k) && !join(st, d->opnd[k], operand_layout(f, d, k, w))) return false;
    if (!users_ok(st, &tl_op_at(f, st->L)->regions[0], m, w)) return false;
  }
  return true;
}

/* Loop invariant v in layout W: one conversion before the loop, shared by the groups. */
static int32_t hoisted(ch_state *st, int32_t v, int32_t W) {
  tl_func *f = st->f;
  for (int i = 0; i < st->hoisted.len; i++)
    if (st->hoisted.data[i].v == v && st->hoisted.data[i].layout == W) return st->hoisted.data[i].copy;
  tl_region *r = tl_region_of(f, st->L);
  int pos = r ? tl_pos_in(r, st->L) : -1;
  if (pos < 0) TL_INTERNAL(f->ctx, "convert_hoist: loop op %d in no region", st->L);
  tl_type t = tl_val(f, v)->type;
  t.layout = W;
  int32_t c = tl_op_new(f, NULL, TL_OP_convert_layout, &v, 1, &t, 1, tl_op_at(f, st->L)->loc);
  tl_region_insert(f, r, pos, c);
  ch_hoisted h = {v, W, tl_op_result(f, c, 0)};
  tl_vec_push(&f->ctx->arena, &st->hoisted, h);
  return h.copy;
}

static void rewrite(ch_state *st) {
  tl_func *f = st->f;
  for (int i = 0; i < st->n; i++) {
    int32_t m = st->group[i], w = st->want[m];
    tl_val(f, m)->type.layout = w;
    int32_t d = tl_val(f, m)->def;
    int nopnd = tl_op_at(f, d)->nopnd;
    for (int k = 0; k < nopnd; k++) {
      int32_t a = tl_op_at(f, d)->opnd[k];
      if (!takes_layout(tl_op_at(f, d), k)) continue;
      int32_t ow = operand_layout(f, tl_op_at(f, d), k, w);
      if (is_tile(f, a) && tl_defined_outside(f, a, st->L) && layout_of(f, a) != ow) {
        int32_t c = hoisted(st, a, ow);
        tl_op_at(f, d)->opnd[k] = c;
      }
    }
  }
  /* conversions that became identities */
  tl_region *body = &tl_op_at(f, st->L)->regions[0];
  for (int i = body->ops.len - 1; i >= 0; i--) {
    tl_op *c = tl_op_at(f, body->ops.data[i]);
    if (c->opc != TL_OP_convert_layout || c->flags & TL_OPF_DEAD) continue;
    if (layout_of(f, c->opnd[0]) != layout_of(f, c->res[0])) continue;
    tl_replace_uses(f, c->res[0], c->opnd[0]);
    tl_op_erase(f, body, i);
  }
}

/* Every use of v in the function is a conversion to layout W at the top of loop L's body, or (with
 * members) an operand of a group member: after the rewrite nothing reads v but its conversion before
 * the loop, so the conversion adds no value live through the loop. */
static bool only_converted_in_loop(ch_state *st, int32_t v, int32_t W) {
  tl_func *f = st->f;
  for (int i = 0; i < f->ops.len; i++) {
    tl_op *u = tl_op_at(f, i);
    if (u->flags & TL_OPF_DEAD) continue;
    for (int k = 0; k < u->nopnd; k++) {
      if (u->opnd[k] != v) continue;
      if (u->opc == TL_OP_convert_layout && u->parent == st->L && layout_of(f, u->res[0]) == W) continue;
      if (u->nres == 1 && u->parent == st->L && st->want[u->res[0]] >= 0 && takes_layout(u, k) &&
          operand_layout(f, u, k, st->want[u->res[0]]) == W)
        continue;
      return false;
    }
  }
  return true;
}

/* The group's loop invariants that need a conversion before the loop die there (only_converted_in_loop). */
static bool leaves_die(ch_state *st) {
  tl_func *f = st->f;
  for (int i = 0; i < st->n; i++) {
    int32_t m = st->group[i];
    tl_op *d = tl_op_at(f, tl_val(f, m)->def);
    for (int k = 0; k < d->nopnd; k++) {
      int32_t a = d->opnd[k];
      if (!takes_layout(d, k) || !is_tile(f, a) || !tl_defined_outside(f, a, st->L)) continue;
      int32_t ow = operand_layout(f, d, k, st->want[m]);
      if (layout_of(f, a) != ow && !only_converted_in_loop(st, a, ow))
        return st->why = "a value made from a loop invariant the loop also reads in its own layout", false;
    }
  }
  return true;
}

/* One group in loop L, from one of its conversions; true when it was rewritten. */
static bool hoist_one(ch_state *st) {
  tl_func *f = st->f;
  if (st->cap < f->values.len) {
    st->cap = 2 * f->values.len + 64;
    st->want = tl_alloc(&f->ctx->arena, sizeof(int32_t) * (size_t)st->cap);
    for (int i = 0; i < st->cap; i++) st->want[i] = -1;
  }
  tl_region *body = &tl_op_at(f, st->L)->regions[0];
  for (int i = 0; i < body->ops.len; i++) {
    tl_op *c = tl_op_at(f, body->ops.data[i]);
    if (c->opc != TL_OP_convert_layout || c->flags & TL_OPF_DEAD) continue;
    int32_t src = c->opnd[0];
    if (tl_defined_outside(f, src, st->L)) {
      /* a loop invariant's conversion (fix_region put it in front of its user): once, before the loop,
       * where the invariant itself then dies there (else both would live through the loop) */
      if (!only_converted_in_loop(st, src, layout_of(f, c->res[0]))) {
        note_why(st, "a loop invariant the loop also reads in its own layout");
        continue;
      }
      tl_replace_uses(f, c->res[0], hoisted(st, src, layout_of(f, c->res[0])));
      tl_op_erase(f, &tl_op_at(f, st->L)->regions[0], i);
      return true;
    }
    if (body->ops.data[i] < st->ntried && st->tried[body->ops.data[i]]) continue;
    st->n = 0, st->removed = 0, st->why = NULL;
    bool ok = grow(st, src, layout_of(f, c->res[0])) && st->removed > 0 && leaves_die(st);
    if (!ok) note_why(st, st->why ? st->why : "a value whose group makes no conversion an identity");
    if (ok) rewrite(st);
    for (int g = 0; g < st->n; g++) st->want[st->group[g]] = -1;
    if (ok) return true;
    if (body->ops.data[i] < st->ntried) st->tried[body->ops.data[i]] = 1;
  }
  return false;
}

/* The layout conversions at the top of loop L's body. */
static int loop_conversions(tl_func *f, int32_t L) {
  tl_region *body = &tl_op_at(f, L)->regions[0];
  int n = 0;
  for (int i = 0; i < body->ops.len; i++) {
    tl_op *c = tl_op_at(f, body->ops.data[i]);
    n += c->opc == TL_OP_convert_layout && !(c->flags & TL_OPF_DEAD);
  }
  return n;
}

static void hoist_region(ch_state *st, tl_region *r) {
  tl_func *f = st->f;
  for (int i = 0; i < r->ops.len; i++) {
    int32_t id = r->ops.data[i];
    if (tl_op_at(f, id)->flags & TL_OPF_DEAD) continue;
    for (int g = 0; g < tl_op_at(f, id)->nregions; g++) hoist_region(st, &tl_op_at(f, id)->regions[g]);
    if (tl_op_at(f, id)->opc != TL_OP_for) continue;
    int before = st->ex ? loop_conversions(f, id) : 0;
    st->L = id;
    st->hoisted.len = 0;
    st->nwhys = 0;
    st->ntried = f->ops.len;
    st->tried = tl_alloc(&f->ctx->arena, (size_t)st->ntried + 1);
    memset(st->tried, 0, (size_t)st->ntried + 1);
    for (int round = 0; round < 16; round++) /* one group (or one invariant's conversion) a round */
      if (!hoist_one(st)) break;
    if (st->ex && before > 0) {
      int after = loop_conversions(f, id);
      tl_loc loc = tl_op_at(f, id)->loc;
      tl_sbuf_printf(st->ex,
                     "convert_hoist: kernel '%s': loop at %d:%d: %d of %d layout conversion%s a step gone, %d before "
                     "the loop instead",
                     f->name, loc.line, loc.col, before - after, before, before == 1 ? "" : "s", st->hoisted.len);
      for (int w = 0; after && w < st->nwhys; w++)
        tl_sbuf_printf(st->ex, "%s %s", w ? ";" : "; kept for", st->whys[w]);
      tl_sbuf_puts(st->ex, "\n");
    }
    /* (a hoisted conversion went in front of the loop: step over it) */
    i = tl_pos_in(r, id);
  }
}

static bool convert_hoist_run(tl_func *f, const tl_pass_opts *opts) {
  if (!f->layouts || tl_code_env_off("TILEC_CONVERT_HOIST")) return true;
  ch_state st = {.f = f, .ex = opts && opts->explain && opts->explain_out ? opts->explain_out : NULL};
  hoist_region(&st, &f->body);
  return true;
}

const tl_pass tl_pass_convert_hoist = {
    "convert_hoist",
    "requires layouts; a loop's conversions of values made from loop invariants move before the loop; keeps semantics",
    convert_hoist_run,
};
