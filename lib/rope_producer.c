/* rope_producer.c: requires verified tile IR (any point of the pipeline: convert_layout is looked
 * through); changes nothing; recognizes the rotate-half RoPE of the keys feeding two chained score
 * dots (rope_producer.h). */
#include "rope_producer.h"

#include <stdio.h>
#include <string.h>

#include "code_env.h"

/* v with convert_layout looked through. */
static int32_t through_cvt(tl_func *f, int32_t v) {
  for (;;) {
    int32_t d = tl_val(f, v)->def;
    if (d < 0 || tl_op_at(f, d)->opc != TL_OP_convert_layout) return v;
    v = tl_op_at(f, d)->opnd[0];
  }
}

/* The op defining v (convert_layout looked through) when its opcode is opc, else -1. */
static int32_t def_of(tl_func *f, int32_t v, tl_opcode opc) {
  int32_t d = tl_val(f, through_cvt(f, v))->def;
  return d >= 0 && tl_op_at(f, d)->opc == opc ? d : -1;
}

static bool const_int(tl_func *f, int32_t v, int64_t *c) {
  int32_t d = def_of(f, v, TL_OP_const);
  if (d < 0 || tl_val(f, v)->type.kind != TL_KIND_SCALAR || !tl_dtype_is_int((tl_dtype)tl_val(f, v)->type.dtype))
    return false;
  *c = tl_op_at(f, d)->ival;
  return true;
}

/* A leaf of the rotation: a load of a parameter (a 2-D tile, no `other`), maybe cast to f32. */
typedef struct leaf {
  int32_t load, param, cast; /* cast: the cast op, or -1 */
} leaf;

static bool leaf_of(tl_func *f, int32_t v, leaf *l) {
  l->cast = def_of(f, v, TL_OP_cast);
  if (l->cast >= 0) v = tl_op_at(f, l->cast)->opnd[0];
  l->load = def_of(f, v, TL_OP_load);
  if (l->load < 0) return false;
  tl_op *o = tl_op_at(f, l->load);
  tl_value *t = tl_val(f, o->opnd[0]);
  l->param = t->def < 0 && t->region_owner < 0 ? t->index : -1;
  if (l->param < 0 || tl_val(f, o->res[0])->type.rank != 2) return false;
  return o->nopnd == 1 + f->params.data[l->param].rank; /* (no `other`) */
}

/* The constant last dimension of parameter p, or -1. */
static int64_t last_dim(tl_func *f, int32_t p) {
  const tl_param *pa = &f->params.data[p];
  return pa->rank >= 2 && pa->dims[pa->rank - 1].is_const ? pa->dims[pa->rank - 1].value : -1;
}

/* mul(a, b) with one leaf a key half (a parameter whose last dim is 2 * half) and the other a
 * table row (last dim half): *k, *t. */
static bool product(tl_func *f, int32_t v, int64_t half, leaf *k, leaf *t) {
  int32_t m = def_of(f, v, TL_OP_mul);
  if (m < 0) return false;
  leaf a, b;
  if (!leaf_of(f, tl_op_at(f, m)->opnd[0], &a) || !leaf_of(f, tl_op_at(f, m)->opnd[1], &b)) return false;
  if (last_dim(f, a.param) == half && last_dim(f, b.param) == 2 * half) {
    leaf x = a;
    a = b, b = x;
  }
  if (last_dim(f, a.param) != 2 * half || last_dim(f, b.param) != half) return false;
  *k = a, *t = b;
  return true;
}

static bool same_leaf(tl_func *f, const leaf *a, const leaf *b) {
  if (a->load == b->load) return true;
  tl_op *x = tl_op_at(f, a->load), *y = tl_op_at(f, b->load);
  if (a->param != b->param || x->nopnd != y->nopnd) return false;
  for (int k = 1; k < x->nopnd; k++)
    if (through_cvt(f, x->opnd[k]) != through_cvt(f, y->opnd[k])) return false;
  return !memcmp(x->dims, y->dims, sizeof x->dims);
}

/* The rotation feeding score dot D's B: trans(cast<16-bit>(sub|add of two products)). */
typedef struct half_rot {
  bool sub;      /* x1 c - x2 s (the first half) */
  leaf k1, t1, k2, t2; /* the products' leaves, in operand order */
  int32_t trans, cast, comb;
} half_rot;

static bool rotation_of(tl_func *f, int32_t D, int64_t half, half_rot *h) {
  h->trans = def_of(f, tl_op_at(f, D)->opnd[1], TL_OP_trans);
  if (h->trans < 0) return false;
  h->cast = def_of(f, tl_op_at(f, h->trans)->opnd[0], TL_OP_cast);
  if (h->cast < 0 || tl_dtype_bytes((tl_dtype)tl_val(f, tl_op_at(f, h->cast)->res[0])->type.dtype) != 2) return false;
  int32_t e = tl_op_at(f, h->cast)->opnd[0];
  h->comb = def_of(f, e, TL_OP_sub);
  h->sub = h->comb >= 0;
  if (h->comb < 0) h->comb = def_of(f, e, TL_OP_add);
  if (h->comb < 0 || tl_val(f, e)->type.dtype != TL_F32) return false;
  tl_op *c = tl_op_at(f, h->comb);
  return product(f, c->opnd[0], half, &h->k1, &h->t1) && product(f, c->opnd[1], half, &h->k2, &h->t2);
}

/* Column start of a 2-D tile load (the last index) as a constant, or -1. */
static int64_t col_start(tl_func *f, int32_t load) {
  tl_op *o = tl_op_at(f, load);
  int64_t c;
  return const_int(f, o->opnd[o->nopnd - 1], &c) ? c : -1;
}

/* The row index (the second to last) of a 2-D tile load. */
static int32_t row_index(tl_func *f, int32_t load) {
  tl_op *o = tl_op_at(f, load);
  return through_cvt(f, o->opnd[o->nopnd - 2]);
}

#define FAIL(...) return snprintf(why, n, __VA_ARGS__), false

bool tl_rope_match_keys(tl_func *f, tl_rope_match *m, char *why, size_t n) {
  memset(m, 0, sizeof *m);
  /* the chain: a dot of a `for` whose result is only another dot's accumulator there */
  int32_t d1 = -1, d2 = -1;
  int nchain = 0;
  for (int32_t i = 0; i < f->ops.len; i++) {
    tl_op *o = tl_op_at(f, i);
    if ((o->flags & TL_OPF_DEAD) || o->opc != TL_OP_dot || o->parent < 0 || tl_op_at(f, o->parent)->opc != TL_OP_for)
      continue;
    int32_t a = tl_val(f, o->opnd[2])->def;
    if (a >= 0 && tl_op_at(f, a)->opc == TL_OP_dot && tl_op_at(f, a)->parent == o->parent) d1 = a, d2 = i, nchain++;
  }
  if (nchain != 1) FAIL("no main loop whose score is two chained dots (found %d chains)", nchain);
  m->loop = tl_op_at(f, d1)->parent;
  m->dot_first = d1;
  int32_t *uses = tl_count_uses(f);
  if (uses[tl_op_at(f, d1)->res[0]] != 1) FAIL("the first score dot's result is used beside the chain");
  /* the half head dimension: the first dot's K extent */
  const tl_type *at = &tl_val(f, tl_op_at(f, d1)->opnd[0])->type;
  int64_t half = at->shape[1];
  half_rot r1, r2;
  if (!rotation_of(f, d1, half, &r1) || !rotation_of(f, d2, half, &r2))
    FAIL("a score dot's B is not trans(cast<16-bit>(x c -+ y s)) of a key half x, y and table rows c, s");
  if (r1.sub == r2.sub) FAIL("the two score dots do not read the two rotated halves (one x1 c - x2 s, one x2 c + x1 s)");
  half_rot *lo = r1.sub ? &r1 : &r2, *hi = r1.sub ? &r2 : &r1;
  m->dot_lo = r1.sub ? d1 : d2;
  m->dot_hi = r1.sub ? d2 : d1;
  /* lo = x1 c - x2 s: k1 = x1 (column 0), t1 = c; k2 = x2 (column half), t2 = s.
   * hi = x2 c + x1 s (either order) */
  leaf x1 = lo->k1, c = lo->t1, x2 = lo->k2, s = lo->t2;
  leaf hx2 = hi->k1, hc = hi->t1, hx1 = hi->k2, hs = hi->t2;
  if (same_leaf(f, &hx2, &x1)) {
    leaf t = hx2;
    hx2 = hx1, hx1 = t;
    t = hc, hc = hs, hs = t;
  }
  if (!same_leaf(f, &hx1, &x1) || !same_leaf(f, &hx2, &x2) || !same_leaf(f, &hc, &c) || !same_leaf(f, &hs, &s))
    FAIL("the two halves' rotation does not read the same key halves and table rows (x1 c - x2 s, x2 c + x1 s)");
  if (x1.param != x2.param || c.param == s.param) FAIL("the key halves are not of one tensor, or cos and sin are");
  if (col_start(f, x1.load) != 0 || col_start(f, x2.load) != half || col_start(f, c.load) != 0 || col_start(f, s.load) != 0)
    FAIL("the key halves are not columns [0, %lld) and [%lld, %lld), or the table rows not from column 0",
         (long long)half, (long long)half, (long long)(2 * half));
  tl_op *l1 = tl_op_at(f, x1.load), *l2 = tl_op_at(f, x2.load);
  for (int k = 1; k < l1->nopnd - 1; k++)
    if (through_cvt(f, l1->opnd[k]) != through_cvt(f, l2->opnd[k])) FAIL("the key halves are loaded at different rows or heads");
  if (row_index(f, c.load) != row_index(f, x1.load) || row_index(f, s.load) != row_index(f, x1.load))
    FAIL("the table rows are not the keys' positions (their row index differs from the keys')");
  const tl_type *kt = &tl_val(f, l1->res[0])->type, *ct = &tl_val(f, tl_op_at(f, c.load)->res[0])->type;
  if (tl_dtype_bytes((tl_dtype)kt->dtype) != 2 || kt->shape[1] != half || ct->shape[0] != kt->shape[0] || ct->shape[1] != half)
    FAIL("the key halves are not 16-bit [BN, %lld] tiles, or the table rows not [BN, %lld]", (long long)half, (long long)half);
  if (x1.cast < 0 || x2.cast < 0) FAIL("the key halves are not widened to f32 before the rotation");
  if (half * 2 != 128)
    FAIL("halves of %lld 16-bit columns: the producer's in-place rotation takes halves of one 128-byte swizzle atom "
         "(64 columns, D 128)", (long long)half);
  int32_t qa = tl_op_at(f, d1)->opnd[0], qb = tl_op_at(f, d2)->opnd[0];
  if (!tl_defined_outside(f, qa, m->loop) || !tl_defined_outside(f, qb, m->loop))
    FAIL("the score dots' A (q rotated) is not defined before the loop");
  /* nothing of the rotation is used outside it (the consumers would not compute it) */
  int32_t ops[24];
  int nops = 0;
  ops[nops++] = x1.load, ops[nops++] = x2.load, ops[nops++] = x1.cast, ops[nops++] = x2.cast;
  ops[nops++] = c.load, ops[nops++] = s.load;
  if (c.cast >= 0) ops[nops++] = c.cast;
  if (s.cast >= 0) ops[nops++] = s.cast;
  for (int i = 0; i < 2; i++) {
    half_rot *h = i ? hi : lo;
    ops[nops++] = h->comb, ops[nops++] = h->cast, ops[nops++] = h->trans;
    ops[nops++] = tl_val(f, through_cvt(f, tl_op_at(f, h->comb)->opnd[0]))->def;
    ops[nops++] = tl_val(f, through_cvt(f, tl_op_at(f, h->comb)->opnd[1]))->def;
  }
  for (int32_t i = 0; i < f->ops.len; i++) {
    tl_op *u = tl_op_at(f, i);
    if (u->flags & TL_OPF_DEAD || i == d1 || i == d2) continue;
    bool in = u->opc == TL_OP_convert_layout;
    for (int j = 0; j < nops && !in; j++) in = ops[j] == i;
    if (in) continue;
    for (int k = 0; k < u->nopnd; k++)
      for (int j = 0; j < nops; j++)
        if (tl_op_at(f, ops[j])->res[0] == through_cvt(f, u->opnd[k]))
          FAIL("a value of the rotation (op at %d:%d) is used outside it, at %d:%d", tl_op_at(f, ops[j])->loc.line,
               tl_op_at(f, ops[j])->loc.col, u->loc.line, u->loc.col);
  }
  m->load_lo = x1.load, m->load_hi = x2.load;
  m->load_cos = c.load, m->load_sin = s.load;
  m->k_param = x1.param, m->cos_param = c.param, m->sin_param = s.param;
  m->bn = kt->shape[0];
  m->half = (int32_t)half;
  m->table_dtype = (tl_dtype)ct->dtype;
  m->nops = 0;
  for (int j = 0; j < nops; j++)
    if (ops[j] != x1.load && ops[j] != x2.load) m->ops[m->nops++] = ops[j];
  return true;
}

bool tl_rope_producer_on(tl_func *f, tl_rope_match *m) {
  tl_rope_match local;
  char why[300];
  if (!tl_code_env_on("TILEC_ROPE_PRODUCER") || !f->attn_fa3 || f->pipeline != TL_PIPE_CUTLASS) return false;
  return tl_rope_match_keys(f, m ? m : &local, why, sizeof why);
}

int32_t tl_rope_stream_load(tl_func *f, int32_t D, int which) {
  tl_rope_match m;
  if (which != 1 || !tl_rope_producer_on(f, &m)) return -1;
  return D == m.dot_lo ? m.load_lo : D == m.dot_hi ? m.load_hi : -1;
}
