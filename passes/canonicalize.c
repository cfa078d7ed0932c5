/* canonicalize: requires verified IR; keeps semantics and verification;
 * folds ops whose operands are scalar or splat (tile) constants, applies
 * identities (x+0, x-0, x*1, x/1, int x*0, select of a constant condition,
 * cast to the same type), inlines `if` on a constant condition and removes
 * `for` loops with a constant trip count of 0.  Dead constants it leaves
 * behind are DCE's job; merging equal ops is CSE's.
 *
 * Folding semantics match the interpreter: integers wrap to their width
 * (C semantics otherwise; no folding of x/0, x%0, MIN/-1 or shifts out of
 * range); float arithmetic is folded for f32 only (computed in f64 and
 * rounded once, which is exact IEEE binary32 for + - * / sqrt); casts,
 * comparisons, select, neg, abs fold for every float type through fpconv. */
#include <math.h>
#include <string.h>

#include "fpconv.h"
#include "ir.h"

typedef struct canon {
  tl_func *f;
  int32_t *repl; /* value -> replacement, -1 = itself; only for values that existed */
  int32_t nrepl;
} canon;

typedef struct cval {
  int64_t i;
  double d;
} cval;

enum { FOLD_NONE, FOLD_VALUE, FOLD_CONST };
typedef struct fold_result {
  int how;
  int32_t value; /* FOLD_VALUE */
  cval c;        /* FOLD_CONST: the value of the result type */
} fold_result;

static int32_t resolve(canon *c, int32_t v) {
  for (int guard = 0; v >= 0 && v < c->nrepl && c->repl[v] >= 0 && guard < 1 << 20; guard++) v = c->repl[v];
  return v;
}

/* The const op defining v, or -1. */
static int32_t const_op(canon *c, int32_t v) {
  int32_t d = c->f->values.data[v].def;
  if (d < 0) return -1;
  tl_op *o = tl_op_at(c->f, d);
  return (o->opc == TL_OP_const && !(o->flags & TL_OPF_DEAD)) ? d : -1;
}

static bool get_const(canon *c, int32_t v, cval *out) {
  int32_t op = const_op(c, v);
  if (op < 0) return false;
  tl_op *o = tl_op_at(c->f, op);
  tl_dtype dt = (tl_dtype)c->f->values.data[v].type.dtype;
  if (tl_dtype_is_float(dt)) {
    out->d = tl_round_to_dtype(o->fval, dt);
    if (isnan(o->fval)) out->d = o->fval; /* keep the NaN as written */
    out->i = 0;
  } else {
    out->i = tl_int_to_int(o->ival, dt);
    out->d = (double)out->i;
  }
  return true;
}

static int64_t int_min_of(tl_dtype dt) {
  switch (dt) {
  case TL_I8: return INT8_MIN;
  case TL_I16: return INT16_MIN;
  case TL_I32: return INT32_MIN;
  case TL_I64: return INT64_MIN;
  default: return 0;
  }
}

static int64_t wrap(uint64_t x, tl_dtype dt) { return tl_int_to_int((int64_t)x, dt); }

static bool fold_int_binary(int opc, int kind, tl_dtype dt, int64_t a, int64_t b, int64_t *r) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  int bits = dt == TL_I1 ? 1 : tl_dtype_bits(dt);
  switch (opc) {
  case TL_OP_add: *r = wrap(ua + ub, dt); return true;
  case TL_OP_sub: *r = wrap(ua - ub, dt); return true;
  case TL_OP_mul: *r = wrap(ua * ub, dt); return true;
  case TL_OP_div:
  case TL_OP_rem:
    if (b == 0 || (b == -1 && tl_dtype_is_signed(dt) && a == int_min_of(dt))) return false;
    *r = wrap((uint64_t)(opc == TL_OP_div ? a / b : a % b), dt);
    return true;
  case TL_OP_min: *r = a < b ? a : b; return true;
  case TL_OP_max: *r = a > b ? a : b; return true;
  case TL_OP_and: *r = wrap(ua & ub, dt); return true;
  case TL_OP_or: *r = wrap(ua | ub, dt); return true;
  case TL_OP_xor: *r = wrap(ua ^ ub, dt); return true;
  case TL_OP_shl:
    if (b < 0 || b >= bits) return false;
    *r = wrap(ua << b, dt);
    return true;
  case TL_OP_shr:
    if (b < 0 || b >= bits) return false;
    /* values are kept sign-extended (signed) or zero-extended (u8, i1) */
    *r = tl_dtype_is_signed(dt) ? (a < 0 ? ~(~a >> b) : a >> b) : (int64_t)(ua >> b);
    return true;
  case TL_OP_cmp:
    switch (kind) {
    case TL_CMP_EQ: *r = a == b; return true;
    case TL_CMP_NE: *r = a != b; return true;
    case TL_CMP_LT: *r = a < b; return true;
    case TL_CMP_LE: *r = a <= b; return true;
    case TL_CMP_GT: *r = a > b; return true;
    case TL_CMP_GE: *r = a >= b; return true;
    default: return false;
    }
  default: return false;
  }
}

/* Float binary ops: cmp for every float type, arithmetic for f32 only. */
static bool fold_float_binary(int opc, int kind, tl_dtype dt, double a, double b, cval *r) {
  if (opc == TL_OP_cmp) {
    bool v;
    switch (kind) {
    case TL_CMP_EQ: v = a == b; break;
    case TL_CMP_NE: v = a != b; break;
    case TL_CMP_LT: v = a < b; break;
    case TL_CMP_LE: v = a <= b; break;
    case TL_CMP_GT: v = a > b; break;
    case TL_CMP_GE: v = a >= b; break;
    default: return false;
    }
    r->i = v;
    r->d = v;
    return true;
  }
  if (dt != TL_F32) return false;
  double x;
  switch (opc) {
  case TL_OP_add: x = a + b; break;
  case TL_OP_sub: x = a - b; break;
  case TL_OP_mul: x = a * b; break;
  case TL_OP_div:
    if (b == 0) return false;
    x = a / b;
    break;
  case TL_OP_rem:
    if (b == 0) return false;
    x = fmod(a, b); /* exact */
    break;
  case TL_OP_min: x = (isnan(a) || isnan(b)) ? NAN : (a < b || (a == b && signbit(a))) ? a : b; break;
  case TL_OP_max: x = (isnan(a) || isnan(b)) ? NAN : (a > b || (a == b && !signbit(a))) ? a : b; break;
  default: return false;
  }
  r->d = tl_f64_to_f32(x);
  r->i = 0;
  return true;
}

static bool fold_unary(int opc, tl_dtype dt, tl_dtype src, cval a, cval *r) {
  if (opc == TL_OP_bitcast) return false; /* not folded */
  if (opc == TL_OP_cast) {
    if (tl_dtype_is_float(src)) {
      if (tl_dtype_is_float(dt)) r->d = tl_round_to_dtype(a.d, dt), r->i = 0;
      else r->i = tl_float_to_int(a.d, dt), r->d = (double)r->i;
    } else {
      if (tl_dtype_is_float(dt)) r->d = tl_int_to_float(a.i, dt), r->i = 0;
      else r->i = dt == TL_I1 ? a.i != 0 : tl_int_to_int(a.i, dt), r->d = (double)r->i;
    }
    return true;
  }
  if (tl_dtype_is_float(dt)) {
    double x;
    switch (opc) {
    case TL_OP_neg: x = -a.d; break;
    case TL_OP_abs: x = fabs(a.d); break;
    case TL_OP_sqrt: if (dt != TL_F32) return false; x = sqrt(a.d); break;
    case TL_OP_floor: if (dt != TL_F32) return false; x = floor(a.d); break;
    case TL_OP_ceil: if (dt != TL_F32) return false; x = ceil(a.d); break;
    default: return false;
    }
    r->d = tl_round_to_dtype(x, dt);
    r->i = 0;
    return true;
  }
  switch (opc) {
  case TL_OP_neg: r->i = wrap(0 - (uint64_t)a.i, dt); break;
  case TL_OP_abs: r->i = wrap(a.i < 0 ? 0 - (uint64_t)a.i : (uint64_t)a.i, dt); break;
  case TL_OP_not: r->i = dt == TL_I1 ? !a.i : wrap(~(uint64_t)a.i, dt); break;
  default: return false;
  }
  r->d = (double)r->i;
  return true;
}

static bool is_int_const(canon *c, int32_t v, int64_t want) {
  cval k;
  tl_dtype dt = (tl_dtype)c->f->values.data[v].type.dtype;
  return !tl_dtype_is_float(dt) && get_const(c, v, &k) && k.i == want;
}

/* exact bit pattern of a float constant: +0.0 vs -0.0 matters */
static bool is_float_const(canon *c, int32_t v, double want) {
  cval k;
  tl_dtype dt = (tl_dtype)c->f->values.data[v].type.dtype;
  return tl_dtype_is_float(dt) && get_const(c, v, &k) && k.d == want && signbit(k.d) == signbit(want);
}

static fold_result fold(canon *c, int32_t id) {
  tl_func *f = c->f;
  tl_op *o = tl_op_at(f, id);
  fold_result fr = {FOLD_NONE, -1, {0, 0}};
  if (o->nres != 1) return fr;
  const tl_type *rt = &f->values.data[o->res[0]].type;
  tl_dtype dt = (tl_dtype)rt->dtype;
  cval a, b;
  int n = o->nopnd;
  int flags = tl_opinfo_table[o->opc].flags;

  /* shape ops of a splat constant: the same value in the new shape */
  switch (o->opc) {
  case TL_OP_splat: case TL_OP_broadcast: case TL_OP_expand_dims: case TL_OP_reshape: case TL_OP_trans:
    if (get_const(c, o->opnd[0], &a)) fr.how = FOLD_CONST, fr.c = a;
    return fr;
  case TL_OP_reduce:
    if ((o->kind == TL_RED_MAX || o->kind == TL_RED_MIN) && get_const(c, o->opnd[0], &a)) fr.how = FOLD_CONST, fr.c = a;
    return fr;
  case TL_OP_select:
    if (get_const(c, o->opnd[0], &a)) fr.how = FOLD_VALUE, fr.value = a.i ? o->opnd[1] : o->opnd[2];
    else if (o->opnd[1] == o->opnd[2]) fr.how = FOLD_VALUE, fr.value = o->opnd[1];
    return fr;
  case TL_OP_cast: {
    const tl_type *st = &f->values.data[o->opnd[0]].type;
    if (tl_type_eq(st, rt) && st->layout == rt->layout) {
      fr.how = FOLD_VALUE, fr.value = o->opnd[0];
      return fr;
    }
    if (get_const(c, o->opnd[0], &a) && fold_unary(o->opc, dt, (tl_dtype)st->dtype, a, &fr.c)) fr.how = FOLD_CONST;
    return fr;
  }
  default: break;
  }
  if (!(flags & TL_EW)) return fr;
  tl_dtype odt = (tl_dtype)f->values.data[o->opnd[0]].type.dtype; /* operand dtype (cmp: not i1) */
  if (n == 1) {
    if (get_const(c, o->opnd[0], &a) && fold_unary(o->opc, dt, odt, a, &fr.c)) fr.how = FOLD_CONST;
    return fr;
  }
  if (n != 2) return fr;
  int32_t x = o->opnd[0], y = o->opnd[1];
  bool ka = get_const(c, x, &a), kb = get_const(c, y, &b);
  if (ka && kb) {
    if (tl_dtype_is_float(odt)) {
      if (fold_float_binary(o->opc, o->kind, odt, a.d, b.d, &fr.c)) fr.how = FOLD_CONST;
    } else {
      int64_t r;
      if (fold_int_binary(o->opc, o->kind, odt, a.i, b.i, &r)) {
        fr.how = FOLD_CONST;
        fr.c.i = r;
        fr.c.d = (double)r;
      }
    }
    return fr;
  }
  /* identities; x's type is the result's (elementwise, same dtype) */
  bool fl = tl_dtype_is_float(dt);
  int32_t keep = -1;
  switch (o->opc) {
  case TL_OP_add:
    if (fl ? is_float_const(c, y, -0.0) : is_int_const(c, y, 0)) keep = x;
    else if (fl ? is_float_const(c, x, -0.0) : is_int_const(c, x, 0)) keep = y;
    break;
  case TL_OP_sub:
    if (fl ? is_float_const(c, y, 0.0) : is_int_const(c, y, 0)) keep = x;
    break;
  case TL_OP_mul:
    if (fl ? is_float_const(c, y, 1.0) : is_int_const(c, y, 1)) keep = x;
    else if (fl ? is_float_const(c, x, 1.0) : is_int_const(c, x, 1)) keep = y;
    else if (!fl && is_int_const(c, y, 0)) keep = y;
    else if (!fl && is_int_const(c, x, 0)) keep = x;
    break;
  case TL_OP_div:
    if (fl ? is_float_const(c, y, 1.0) : is_int_const(c, y, 1)) keep = x;
    break;
  default: break;
  }
  if (keep >= 0 && tl_type_eq(&f->values.data[keep].type, rt) && f->values.data[keep].type.layout == rt->layout) fr.how = FOLD_VALUE, fr.value = keep;
  return fr;
}

typedef TL_VEC(int32_t) id_vec;

static void set_repl(canon *c, int32_t from, int32_t to) {
  if (from >= 0 && from < c->nrepl) c->repl[from] = to;
}

static void walk(canon *c, tl_region *r) {
  tl_func *f = c->f;
  tl_arena *a = &f->ctx->arena;
  id_vec out = {0};
  int n = r->ops.len;
  int32_t *orig = tl_alloc(a, sizeof(int32_t) * (size_t)(n + 1));
  if (n) memcpy(orig, r->ops.data, sizeof(int32_t) * (size_t)n);
  for (int i = 0; i < n; i++) {
    int32_t id = orig[i];
    tl_op *o = tl_op_at(f, id);
    for (int k = 0; k < o->nopnd; k++) o->opnd[k] = resolve(c, o->opnd[k]);
    for (int k = 0; k < o->nregions; k++) walk(c, &tl_op_at(f, id)->regions[k]);
    o = tl_op_at(f, id);

    if (o->opc == TL_OP_if && o->nregions == 2) {
      cval cond;
      if (get_const(c, o->opnd[0], &cond)) {
        tl_region *taken = &o->regions[cond.i ? 0 : 1];
        int len = taken->ops.len;
        int32_t yield = len ? taken->ops.data[len - 1] : -1;
        for (int k = 0; k < len - 1; k++) {
          int32_t moved = taken->ops.data[k];
          tl_op_at(f, moved)->parent = r->owner;
          tl_vec_push(a, &out, moved);
        }
        o = tl_op_at(f, id);
        if (yield >= 0 && tl_op_at(f, yield)->opc == TL_OP_yield && tl_op_at(f, yield)->nopnd == o->nres)
          for (int k = 0; k < o->nres; k++) set_repl(c, o->res[k], resolve(c, tl_op_at(f, yield)->opnd[k]));
        taken->ops.len = 0;
        if (yield >= 0) tl_op_mark_dead(f, yield);
        tl_op_mark_dead(f, id);
        continue;
      }
    }
    if (o->opc == TL_OP_for && o->nopnd >= 3) {
      cval lo, hi, step;
      if (get_const(c, o->opnd[0], &lo) && get_const(c, o->opnd[1], &hi) && get_const(c, o->opnd[2], &step) &&
          step.i > 0 && lo.i >= hi.i && o->nres == o->nopnd - 3) {
        for (int k = 0; k < o->nres; k++) set_repl(c, o->res[k], o->opnd[3 + k]);
        tl_op_mark_dead(f, id);
        continue;
      }
    }
    if (o->opc != TL_OP_const) {
      fold_result fr = fold(c, id);
      if (fr.how == FOLD_VALUE) {
        set_repl(c, tl_op_at(f, id)->res[0], resolve(c, fr.value));
        tl_op_mark_dead(f, id);
        continue;
      }
      if (fr.how == FOLD_CONST) {
        tl_type rt = f->values.data[tl_op_at(f, id)->res[0]].type;
        tl_loc loc = tl_op_at(f, id)->loc;
        int32_t nop = tl_op_new(f, NULL, TL_OP_const, NULL, 0, &rt, 1, loc);
        tl_op *no = tl_op_at(f, nop);
        no->parent = r->owner;
        no->ival = fr.c.i;
        no->fval = fr.c.d;
        if (tl_dtype_is_float((tl_dtype)rt.dtype)) no->ival = 0;
        f->values.data[no->res[0]].name = f->values.data[tl_op_at(f, id)->res[0]].name;
        set_repl(c, tl_op_at(f, id)->res[0], no->res[0]);
        tl_op_mark_dead(f, id);
        tl_vec_push(a, &out, nop);
        continue;
      }
    }
    tl_vec_push(a, &out, id);
  }
  r->ops.len = 0;
  for (int i = 0; i < out.len; i++) tl_vec_push(a, &r->ops, out.data[i]);
}

static bool run_canonicalize(tl_func *f, const tl_pass_opts *o) {
  (void)o;
  canon c = {f, NULL, f->values.len};
  c.repl = tl_alloc(&f->ctx->arena, sizeof(int32_t) * (size_t)(c.nrepl + 1));
  for (int i = 0; i <= c.nrepl; i++) c.repl[i] = -1;
  walk(&c, &f->grid);
  walk(&c, &f->body);
  return true;
}

const tl_pass tl_pass_canonicalize = {
    "canonicalize",
    "requires verified IR; keeps semantics; folds constants, applies identities, inlines constant ifs, drops zero-trip fors",
    run_canonicalize,
};
