/* axisinfo: requires verified tile IR; keeps everything (an analysis); computes
 * per value and per dimension divisibility / contiguity / constancy (the
 * facts of lib/axisinfo.h), iterating loops to a fixed point, and the launch
 * specialization key of actual arguments. */
#include <string.h>

#include "axisinfo.h"

/* ---- lattice helpers --------------------------------------------------------- */

int64_t tl_axis_pow2_divisor(int64_t x) {
  if (x == 0) return TL_AXIS_DIV_MAX;
  uint64_t u = (uint64_t)x;
  uint64_t low = u & (~u + 1); /* lowest set bit */
  return low >= (uint64_t)TL_AXIS_DIV_MAX ? TL_AXIS_DIV_MAX : (int64_t)low;
}

/* The facts are powers of two, so their gcd is their minimum; gcd keeps the
 * code right for any run length that might appear. */
static int64_t gcd64(int64_t a, int64_t b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a ? a : 1;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static int64_t sat_mul(int64_t a, int64_t b) {
  if (a >= TL_AXIS_DIV_MAX / b) return TL_AXIS_DIV_MAX;
  return a * b;
}

static int nd(const tl_axis_info *i) { return i->rank ? i->rank : 1; }

int64_t tl_axis_elem_div(const tl_axis_info *i) {
  if (i->is_const) return tl_axis_pow2_divisor(i->value);
  int64_t best = 1;
  for (int d = 0; d < nd(i); d++)
    if (i->contig[d] == 1) best = max64(best, i->div[d]);
  return best;
}

/* A power of two dividing v's element at every index along d that is a
 * multiple of `step` (the start of each run of length `step`).  Inside a
 * contiguous run [x, x+C) that offset is a multiple of gcd(step, C), and
 * exactly 0 when C divides step. */
static int64_t div_at_runs(const tl_axis_info *v, int d, int64_t step) {
  int64_t c = v->contig[d];
  if (step % c == 0) return v->div[d];
  return gcd64(v->div[d], gcd64(step, c));
}

static tl_axis_info make_unknown(const tl_type *t) {
  tl_axis_info i;
  memset(&i, 0, sizeof i);
  i.rank = t->kind == TL_KIND_TILE ? (int8_t)t->rank : 0;
  for (int d = 0; d < TL_MAX_RANK; d++) i.div[d] = i.contig[d] = i.constancy[d] = 1;
  return i;
}

/* Every element equal to `value`, over type t. */
static tl_axis_info make_const(const tl_type *t, int64_t value) {
  tl_axis_info i = make_unknown(t);
  i.is_const = true;
  i.value = value;
  for (int d = 0; d < nd(&i); d++) {
    i.div[d] = tl_axis_pow2_divisor(value);
    i.constancy[d] = i.rank ? t->shape[d] : 1;
  }
  return i;
}

/* Every element of a tile of type t made from a uniform value `s`. */
static tl_axis_info make_uniform(const tl_type *t, const tl_axis_info *s) {
  if (s->is_const) return make_const(t, s->value);
  tl_axis_info i = make_unknown(t);
  int64_t e = tl_axis_elem_div(s);
  for (int d = 0; d < nd(&i); d++) {
    i.div[d] = e;
    i.constancy[d] = i.rank ? t->shape[d] : 1;
  }
  return i;
}

/* Runs never exceed the dimension; facts of non-integer values keep only
 * constancy. */
static void clamp_to_type(tl_axis_info *i, const tl_type *t) {
  for (int d = 0; d < nd(i); d++) {
    int64_t n = i->rank ? t->shape[d] : 1;
    if (i->contig[d] > n) i->contig[d] = n;
    if (i->constancy[d] > n) i->constancy[d] = n;
    if (i->contig[d] < 1) i->contig[d] = 1;
    if (i->constancy[d] < 1) i->constancy[d] = 1;
    if (i->div[d] < 1) i->div[d] = 1;
    if (n == 1) i->contig[d] = i->constancy[d] = 1;
  }
  bool is_int = tl_dtype_is_int((tl_dtype)t->dtype) && t->dtype != TL_I1;
  if (!is_int) {
    for (int d = 0; d < nd(i); d++) i->div[d] = i->contig[d] = 1;
    if (t->dtype != TL_I1) i->is_const = false;
  }
}

/* Facts true of a value that is either a or b (loop merges, if results). */
static tl_axis_info meet(const tl_axis_info *a, const tl_axis_info *b) {
  tl_axis_info r = *a;
  for (int d = 0; d < nd(a); d++) {
    int64_t c = gcd64(a->contig[d], b->contig[d]);
    r.contig[d] = c;
    r.div[d] = gcd64(div_at_runs(a, d, c), div_at_runs(b, d, c));
    r.constancy[d] = gcd64(a->constancy[d], b->constancy[d]);
  }
  r.is_const = a->is_const && b->is_const && a->value == b->value;
  r.value = r.is_const ? a->value : 0;
  return r;
}

static bool info_eq(const tl_axis_info *a, const tl_axis_info *b) {
  if (a->rank != b->rank || a->is_const != b->is_const || (a->is_const && a->value != b->value)) return false;
  for (int d = 0; d < nd(a); d++)
    if (a->div[d] != b->div[d] || a->contig[d] != b->contig[d] || a->constancy[d] != b->constancy[d]) return false;
  return true;
}

/* Wrap v to the width of dtype t (two's complement; u8 and i1 unsigned). */
static int64_t wrap_to(tl_dtype t, int64_t v) {
  uint64_t u = (uint64_t)v;
  switch (t) {
  case TL_I1: return (int64_t)(u & 1);
  case TL_U8: return (int64_t)(u & 0xff);
  case TL_I8: return (int64_t)(int8_t)(uint8_t)u;
  case TL_I16: return (int64_t)(int16_t)(uint16_t)u;
  case TL_I32: return (int64_t)(int32_t)(uint32_t)u;
  default: return v;
  }
}

/* ---- the analysis ------------------------------------------------------------ */

typedef struct ax {
  tl_func *f;
  tl_axis_info *info;
  const tl_axis_assume *assume;
} ax;

static const tl_type *vtype(ax *A, int32_t v) { return &tl_val(A->f, v)->type; }

/* An operand seen at the result's shape: a scalar operand of a tile op acts
 * as its splat. */
static tl_axis_info operand_at(ax *A, int32_t v, const tl_type *rt) {
  const tl_axis_info *i = &A->info[v];
  if (rt->kind == TL_KIND_TILE && i->rank == 0) return make_uniform(rt, i);
  return *i;
}

static bool fold_binary(tl_opcode opc, tl_dtype t, int64_t a, int64_t b, int64_t *out) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (opc) {
  case TL_OP_add: *out = (int64_t)(ua + ub); break;
  case TL_OP_sub: *out = (int64_t)(ua - ub); break;
  case TL_OP_mul: *out = (int64_t)(ua * ub); break;
  case TL_OP_and: *out = a & b; break;
  case TL_OP_or: *out = a | b; break;
  case TL_OP_xor: *out = a ^ b; break;
  case TL_OP_min: *out = a < b ? a : b; break;
  case TL_OP_max: *out = a > b ? a : b; break;
  case TL_OP_shl:
    if (b < 0 || b >= 63) return false;
    *out = (int64_t)(ua << b);
    break;
  case TL_OP_div:
  case TL_OP_rem:
    if (b == 0 || (b == -1 && a == INT64_MIN)) return false;
    *out = opc == TL_OP_div ? a / b : a % b;
    break;
  default: return false;
  }
  *out = wrap_to(t, *out);
  return true;
}

static bool is_const_value(const tl_axis_info *i, int64_t v) { return i->is_const && i->value == v; }

/* Runs of equal elements of floor(a / m), m a power of two: an aligned block
 * of L = min(m, contig, div) elements of one contiguous run of a holds
 * values t .. t + L - 1 with L | t, inside one multiple of m. */
static int64_t quotient_constancy(const tl_axis_info *a, int d, int64_t m) {
  int64_t L = m < a->contig[d] ? m : a->contig[d];
  if (a->contig[d] > 1 && a->div[d] < L) L = a->div[d];
  return L;
}

/* Is every element of v >= 0, by its expression (iota, program ids, tensor
 * sizes, non-negative constants, and add / mul / div / shr / rem / min / max of such, `x & c`
 * with c >= 0, and their splats, broadcasts and expand_dims)?  A few levels. */
static bool nonneg_value(tl_func *f, int32_t v, int depth) {
  int32_t def = tl_val(f, v)->def;
  if (def < 0 || depth == 0) return false;
  tl_op *o = tl_op_at(f, def);
  switch (o->opc) {
  case TL_OP_iota: case TL_OP_program_id: case TL_OP_dim: return true;
  case TL_OP_const: return tl_dtype_is_int((tl_dtype)tl_val(f, v)->type.dtype) && o->ival >= 0;
  case TL_OP_splat: case TL_OP_broadcast: case TL_OP_expand_dims: case TL_OP_convert_layout:
    return nonneg_value(f, o->opnd[0], depth - 1);
  case TL_OP_and: return nonneg_value(f, o->opnd[0], depth - 1) || nonneg_value(f, o->opnd[1], depth - 1);
  case TL_OP_add: case TL_OP_mul: case TL_OP_div: case TL_OP_shr: case TL_OP_rem: case TL_OP_min: case TL_OP_max:
    return nonneg_value(f, o->opnd[0], depth - 1) && nonneg_value(f, o->opnd[1], depth - 1);
  default: return false;
  }
}

static tl_axis_info transfer_binary(ax *A, tl_op *o, const tl_type *rt) {
  tl_axis_info a = operand_at(A, o->opnd[0], rt), b = operand_at(A, o->opnd[1], rt);
  tl_axis_info r = make_unknown(rt);
  int64_t folded;
  if (a.is_const && b.is_const && fold_binary((tl_opcode)o->opc, (tl_dtype)rt->dtype, a.value, b.value, &folded))
    return make_const(rt, folded);
  int64_t ea = tl_axis_elem_div(&a), eb = tl_axis_elem_div(&b);
  for (int d = 0; d < nd(&r); d++) {
    r.constancy[d] = gcd64(a.constancy[d], b.constancy[d]);
    int64_t c = 1, dv = 1;
    switch (o->opc) {
    case TL_OP_add:
    case TL_OP_sub:
      /* a run of a plus a value b holds constant over it stays a run */
      c = gcd64(a.contig[d], b.constancy[d]);
      if (o->opc == TL_OP_add) c = max64(c, gcd64(a.constancy[d], b.contig[d]));
      dv = gcd64(div_at_runs(&a, d, c), div_at_runs(&b, d, c));
      break;
    case TL_OP_mul:
      if (is_const_value(&b, 1)) c = a.contig[d], dv = a.div[d];
      else if (is_const_value(&a, 1)) c = b.contig[d], dv = b.div[d];
      else dv = sat_mul(ea, eb);
      break;
    case TL_OP_shl:
      dv = b.is_const && b.value >= 0 && b.value < 62 ? sat_mul(ea, (int64_t)1 << b.value) : ea;
      break;
    case TL_OP_shr:
      if (b.is_const && b.value >= 0 && b.value < 62) {
        dv = ea >> b.value > 0 ? ea >> b.value : 1;
        r.constancy[d] = max64(r.constancy[d], quotient_constancy(&a, d, (int64_t)1 << b.value));
      }
      break;
    case TL_OP_div:
      /* an exact quotient by a power of two keeps the rest of the factor */
      if (b.is_const && b.value != 0) {
        int64_t m = b.value < 0 ? -b.value : b.value;
        if (tl_axis_pow2_divisor(m) == m && ea % m == 0) dv = ea / m;
        /* truncation is the floor where a >= 0 (iota / 8: runs of 8 equal rows) */
        if (tl_axis_pow2_divisor(m) == m && nonneg_value(A->f, o->opnd[0], 8))
          r.constancy[d] = max64(r.constancy[d], quotient_constancy(&a, d, m));
      }
      break;
    case TL_OP_rem:
      if (b.is_const && b.value != 0) {
        int64_t m = b.value < 0 ? -b.value : b.value;
        if (tl_axis_pow2_divisor(m) == m && ea % m == 0) return make_const(rt, 0);
        dv = gcd64(ea, tl_axis_pow2_divisor(m));
      }
      break;
    case TL_OP_min:
    case TL_OP_max:
    case TL_OP_or:
    case TL_OP_xor: dv = gcd64(ea, eb); break;
    case TL_OP_and: dv = max64(ea, eb); break;
    default: break; /* cmp: i1 */
    }
    r.contig[d] = c;
    r.div[d] = dv;
  }
  return r;
}

static int32_t tensor_param_index(ax *A, int32_t v) {
  tl_value *tv = tl_val(A->f, v);
  if (tv->def != -1 || tv->region_owner != -1) return -1;
  return tv->index;
}

static tl_axis_info transfer_dim(ax *A, tl_op *o, const tl_type *rt) {
  int32_t p = tensor_param_index(A, o->opnd[0]);
  tl_axis_info r = make_unknown(rt);
  if (p < 0 || p >= A->f->params.len || o->axis < 0 || o->axis >= A->f->params.data[p].rank) return r;
  const tl_dimspec *ds = &A->f->params.data[p].dims[o->axis];
  if (ds->is_const) return make_const(rt, ds->value);
  if (A->assume && A->assume->sym_div && ds->sym >= 0 && A->assume->sym_div[ds->sym] > 1)
    r.div[0] = tl_axis_pow2_divisor(A->assume->sym_div[ds->sym]);
  return r;
}

static void analyze_region(ax *A, tl_region *r);

static tl_axis_info *yield_operand_info(ax *A, tl_region *r, int k) {
  if (r->ops.len == 0) return NULL;
  tl_op *y = tl_op_at(A->f, r->ops.data[r->ops.len - 1]);
  if (y->opc != TL_OP_yield || k >= y->nopnd) return NULL;
  return &A->info[y->opnd[k]];
}

enum { MAX_LOOP_ROUNDS = 32 };

static void analyze_for(ax *A, int32_t op) {
  tl_func *f = A->f;
  tl_op *o = tl_op_at(f, op);
  tl_region *body = &o->regions[0];
  int ncarried = o->nres;
  /* the induction variable: lo + k * step */
  int32_t iv = body->args.data[0];
  tl_axis_info ivi = make_unknown(vtype(A, iv));
  ivi.div[0] = gcd64(tl_axis_elem_div(&A->info[o->opnd[0]]), tl_axis_elem_div(&A->info[o->opnd[2]]));
  A->info[iv] = ivi;
  for (int k = 0; k < ncarried; k++) A->info[body->args.data[1 + k]] = A->info[o->opnd[3 + k]];
  bool stable = false;
  for (int round = 0; round < MAX_LOOP_ROUNDS && !stable; round++) {
    analyze_region(A, body);
    stable = true;
    for (int k = 0; k < ncarried; k++) {
      int32_t arg = body->args.data[1 + k];
      tl_axis_info *y = yield_operand_info(A, body, k);
      tl_axis_info m = y ? meet(&A->info[arg], y) : make_unknown(vtype(A, arg));
      if (!info_eq(&m, &A->info[arg])) stable = false;
      A->info[arg] = m;
    }
  }
  if (!stable) { /* give up on the carried values: nothing known is always true */
    for (int k = 0; k < ncarried; k++) {
      int32_t arg = body->args.data[1 + k];
      A->info[arg] = make_unknown(vtype(A, arg));
    }
    analyze_region(A, body);
  }
  o = tl_op_at(f, op);
  for (int k = 0; k < ncarried; k++) {
    tl_axis_info *y = yield_operand_info(A, body, k);
    tl_axis_info *arg = &A->info[body->args.data[1 + k]];
    A->info[o->res[k]] = y ? meet(arg, y) : *arg;
  }
}

static void analyze_if(ax *A, int32_t op) {
  tl_op *o = tl_op_at(A->f, op);
  analyze_region(A, &o->regions[0]);
  analyze_region(A, &o->regions[1]);
  const tl_axis_info *c = &A->info[o->opnd[0]];
  for (int k = 0; k < o->nres; k++) {
    tl_axis_info *t = yield_operand_info(A, &o->regions[0], k), *e = yield_operand_info(A, &o->regions[1], k);
    tl_axis_info r = make_unknown(vtype(A, o->res[k]));
    if (c->is_const && (c->value ? t : e)) r = *(c->value ? t : e);
    else if (t && e) r = meet(t, e);
    A->info[o->res[k]] = r;
  }
}

static tl_axis_info transfer(ax *A, tl_op *o) {
  const tl_type *rt = vtype(A, o->res[0]);
  tl_axis_info r = make_unknown(rt);
  switch (o->opc) {
  case TL_OP_const:
    if (tl_dtype_is_int((tl_dtype)rt->dtype)) r = make_const(rt, o->ival);
    else for (int d = 0; d < nd(&r); d++) r.constancy[d] = r.rank ? rt->shape[d] : 1;
    break;
  case TL_OP_dim: r = transfer_dim(A, o, rt); break;
  case TL_OP_iota:
    r.contig[0] = rt->shape[0];
    r.div[0] = TL_AXIS_DIV_MAX;
    break;
  case TL_OP_add: case TL_OP_sub: case TL_OP_mul: case TL_OP_div: case TL_OP_rem:
  case TL_OP_min: case TL_OP_max: case TL_OP_and: case TL_OP_or: case TL_OP_xor:
  case TL_OP_shl: case TL_OP_shr: case TL_OP_cmp:
    r = transfer_binary(A, o, rt);
    break;
  case TL_OP_select: {
    tl_axis_info c = operand_at(A, o->opnd[0], rt), a = operand_at(A, o->opnd[1], rt),
                 b = operand_at(A, o->opnd[2], rt);
    if (c.is_const) return c.value ? a : b;
    for (int d = 0; d < nd(&r); d++) {
      int64_t run = gcd64(c.constancy[d], gcd64(a.contig[d], b.contig[d]));
      r.contig[d] = run;
      r.div[d] = gcd64(div_at_runs(&a, d, run), div_at_runs(&b, d, run));
      r.constancy[d] = gcd64(c.constancy[d], gcd64(a.constancy[d], b.constancy[d]));
    }
    break;
  }
  case TL_OP_neg: case TL_OP_abs: case TL_OP_not: {
    tl_axis_info a = A->info[o->opnd[0]];
    if (a.is_const && o->opc != TL_OP_not) {
      int64_t v = o->opc == TL_OP_neg || a.value < 0 ? (int64_t)(0 - (uint64_t)a.value) : a.value;
      return make_const(rt, wrap_to((tl_dtype)rt->dtype, v));
    }
    int64_t e = o->opc == TL_OP_not ? 1 : tl_axis_elem_div(&a);
    for (int d = 0; d < nd(&r); d++) r.div[d] = e, r.constancy[d] = a.constancy[d];
    break;
  }
  case TL_OP_cast: {
    tl_axis_info a = A->info[o->opnd[0]];
    const tl_type *st = vtype(A, o->opnd[0]);
    bool int_to_int = tl_dtype_is_int((tl_dtype)st->dtype) && tl_dtype_is_int((tl_dtype)rt->dtype);
    if (int_to_int) {
      r = a;
      if (a.is_const) r.value = wrap_to((tl_dtype)rt->dtype, a.value);
      r.rank = make_unknown(rt).rank;
    } else {
      for (int d = 0; d < nd(&r); d++) r.constancy[d] = a.constancy[d];
    }
    break;
  }
  case TL_OP_splat: r = make_uniform(rt, &A->info[o->opnd[0]]); break;
  case TL_OP_broadcast: {
    tl_axis_info a = A->info[o->opnd[0]];
    const tl_type *st = vtype(A, o->opnd[0]);
    r = a;
    r.rank = (int8_t)rt->rank;
    for (int d = 0; d < rt->rank; d++)
      if (st->shape[d] == 1 && rt->shape[d] != 1) {
        r.contig[d] = 1;
        r.constancy[d] = rt->shape[d];
      }
    break;
  }
  case TL_OP_expand_dims: {
    tl_axis_info a = A->info[o->opnd[0]];
    int ax_ = o->axis, srank = a.rank;
    r.is_const = a.is_const;
    r.value = a.value;
    for (int d = 0, s = 0; d < nd(&r); d++) {
      if (d == ax_) {
        r.div[d] = tl_axis_elem_div(&a);
      } else if (srank > 0) {
        r.div[d] = a.div[s];
        r.contig[d] = a.contig[s];
        r.constancy[d] = a.constancy[s];
        s++;
      } else {
        r.div[d] = tl_axis_elem_div(&a);
      }
    }
    break;
  }
  case TL_OP_trans: {
    tl_axis_info a = A->info[o->opnd[0]];
    r = a;
    r.div[0] = a.div[1], r.div[1] = a.div[0];
    r.contig[0] = a.contig[1], r.contig[1] = a.contig[0];
    r.constancy[0] = a.constancy[1], r.constancy[1] = a.constancy[0];
    break;
  }
  case TL_OP_reshape: {
    tl_axis_info a = A->info[o->opnd[0]];
    if (tl_type_eq(vtype(A, o->opnd[0]), rt)) return a;
    if (a.is_const) return make_const(rt, a.value);
    int64_t e = tl_axis_elem_div(&a);
    for (int d = 0; d < nd(&r); d++) r.div[d] = e;
    break;
  }
  case TL_OP_reduce: {
    /* sums, maxima and minima of multiples of e are multiples of e; slices
     * that were equal reduce to equal values */
    tl_axis_info a = A->info[o->opnd[0]];
    int64_t e = tl_axis_elem_div(&a);
    for (int d = 0, s = 0; d < nd(&r); d++, s++) {
      if (s == o->axis) s++;
      r.div[d] = e;
      if (r.rank) r.constancy[d] = a.constancy[s];
    }
    break;
  }
  case TL_OP_convert_layout: r = A->info[o->opnd[0]]; break;
  default: break; /* program_id, num_programs, load, dot: nothing known */
  }
  clamp_to_type(&r, rt);
  return r;
}

static void analyze_region(ax *A, tl_region *r) {
  for (int i = 0; i < r->ops.len; i++) {
    int32_t op = r->ops.data[i];
    tl_op *o = tl_op_at(A->f, op);
    if (o->flags & TL_OPF_DEAD) continue;
    if (o->opc == TL_OP_for) analyze_for(A, op);
    else if (o->opc == TL_OP_if) analyze_if(A, op);
    else if (o->nres == 1) A->info[o->res[0]] = transfer(A, o);
    else
      for (int k = 0; k < o->nres; k++) A->info[o->res[k]] = make_unknown(vtype(A, o->res[k]));
  }
}

tl_axis_analysis *tl_axis_analyze(tl_func *f, const tl_axis_assume *assume) {
  tl_arena *arena = &f->ctx->arena;
  tl_axis_analysis *res = tl_alloc(arena, sizeof *res);
  res->f = f;
  res->nvalues = f->values.len;
  res->info = tl_alloc(arena, sizeof(tl_axis_info) * (size_t)(f->values.len ? f->values.len : 1));
  for (int v = 0; v < f->values.len; v++) res->info[v] = make_unknown(&tl_val(f, v)->type);
  ax A = {f, res->info, assume};
  for (int p = 0; p < f->params.len; p++) {
    const tl_param *pp = &f->params.data[p];
    if (pp->is_tensor || !assume || !assume->param_div || assume->param_div[p] <= 1) continue;
    res->info[pp->value].div[0] = tl_axis_pow2_divisor(assume->param_div[p]);
  }
  analyze_region(&A, &f->grid);
  analyze_region(&A, &f->body);
  return res;
}

tl_axis_info tl_axis_get(const tl_axis_analysis *A, int32_t v) {
  if (v >= 0 && v < A->nvalues) return A->info[v];
  return make_unknown(&tl_val(A->f, v)->type);
}

static bool residue_rec(const tl_axis_analysis *A, int32_t v, int64_t m, int64_t *r, int depth) {
  tl_axis_info i = tl_axis_get(A, v);
  if (i.is_const) {
    *r = ((i.value % m) + m) % m;
    return true;
  }
  if (tl_axis_elem_div(&i) % m == 0) {
    *r = 0;
    return true;
  }
  tl_value *tv = tl_val(A->f, v);
  if (depth > 16 || tv->def < 0) return false;
  tl_op *o = tl_op_at(A->f, tv->def);
  int64_t ra, rb;
  switch (o->opc) {
  case TL_OP_add: case TL_OP_sub: case TL_OP_mul:
    if (!residue_rec(A, o->opnd[0], m, &ra, depth + 1) || !residue_rec(A, o->opnd[1], m, &rb, depth + 1))
      return false;
    /* m is a power of two: arithmetic mod m is exact in uint64 */
    {
      uint64_t um = (uint64_t)m, x = o->opc == TL_OP_add   ? (uint64_t)ra + (uint64_t)rb
                                     : o->opc == TL_OP_sub ? (uint64_t)ra - (uint64_t)rb
                                                           : (uint64_t)ra * (uint64_t)rb;
      *r = (int64_t)(x & (um - 1));
    }
    return true;
  case TL_OP_splat: case TL_OP_broadcast: case TL_OP_convert_layout: case TL_OP_expand_dims:
    return residue_rec(A, o->opnd[0], m, r, depth + 1);
  default: return false;
  }
}

bool tl_axis_residue(const tl_axis_analysis *A, int32_t v, int64_t m, int64_t *r) {
  if (m < 1 || tl_axis_pow2_divisor(m) != m) return false;
  return residue_rec(A, v, m, r, 0);
}

/* ---- access facts and the specialization key ------------------------------------ */

const tl_access_facts *tl_access_facts_get(const tl_func *f, int32_t op) {
  const tl_access_table *t = f ? (const tl_access_table *)f->access_facts : NULL;
  if (!t || op < 0 || op >= t->nops || t->by_op[op].op < 0) return NULL;
  return &t->by_op[op];
}

uint32_t tl_func_required_key(const tl_func *f) {
  const tl_access_table *t = f ? (const tl_access_table *)f->access_facts : NULL;
  return t ? t->required_key : 0;
}

static uint32_t tensor_bits(const tl_spec_arg *a) {
  int eb = a->elem_bytes;
  if (eb <= 0) return 0;
  uint32_t bits = 0;
  if (a->addr % 16 == 0) bits |= TL_SPEC_BASE16;
  if (a->rank <= 0) return bits | TL_SPEC_LAST_STRIDE1 | TL_SPEC_STRIDES16 | TL_SPEC_LASTDIM16;
  if (a->rank > TL_MAX_RANK || !a->shape) return bits;
  int64_t strides[TL_MAX_RANK];
  int last = a->rank - 1;
  for (int d = last; d >= 0; d--) {
    if (a->strides) strides[d] = a->strides[d];
    else strides[d] = d == last ? 1 : strides[d + 1] * a->shape[d + 1];
  }
  if (strides[last] == 1 || a->shape[last] <= 1) bits |= TL_SPEC_LAST_STRIDE1;
  bool others = true;
  for (int d = 0; d < last; d++)
    if (a->shape[d] > 1 && (strides[d] * eb) % 16 != 0) others = false;
  if (others) bits |= TL_SPEC_STRIDES16;
  if ((a->shape[last] * eb) % 16 == 0) bits |= TL_SPEC_LASTDIM16;
  return bits;
}

uint32_t tl_spec_key_for_args(const tl_spec_arg *args, int nargs) {
  uint32_t key = 0;
  int t = 0;
  for (int i = 0; i < nargs; i++) {
    if (!args[i].is_tensor) continue;
    if (t < TL_SPEC_MAX_TENSORS) key |= TL_SPEC_TENSOR_BITS(t, tensor_bits(&args[i]));
    t++;
  }
  return key;
}
