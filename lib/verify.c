/* verify.c: the tile IR verifier.  Checks structure (counts, region shape,
 * terminators, parent links, each op linked once) and structured dominance
 * (an operand is a parameter, or defined earlier in the same region or an
 * enclosing one, or an argument of an enclosing region), then the type rule
 * of every op.  Violations are errors "verifier: ..." at the op's location. */
#include "ir.h"

#include <stdio.h>
#include <string.h>

typedef struct verifier {
  tl_func *f;
  tl_ctx *c;
  uint8_t *visible; /* per value: in scope at the current point */
  uint8_t *linked;  /* per op: already seen in some region */
  bool ok;
} verifier;

TL_PRINTF(3, 4) static void err(verifier *v, const tl_op *o, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tl_loc loc = o && o->loc.line > 0 ? o->loc : v->f->loc;
  const char *name = o && o->opc < TL_NUM_OPS ? tl_opinfo_table[o->opc].name : NULL;
  if (name) tl_error(v->c, loc, "verifier: '%s': %s", name, msg);
  else tl_error(v->c, loc, "verifier: %s", msg);
  v->ok = false;
}

static const tl_type *vtype(verifier *v, int32_t id) { return &v->f->values.data[id].type; }

static const char *tstr(const tl_type *t, char *buf) { return tl_type_str(t, buf, 64); }

static bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

static bool is_scalar_of(const tl_type *t, tl_dtype dt) { return t->kind == TL_KIND_SCALAR && t->dtype == dt; }

static bool same_shape(const tl_type *a, const tl_type *b) {
  if (a->kind != b->kind) return false;
  if (a->kind != TL_KIND_TILE) return true;
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

/* A value's own type: tiles have power-of-two dims within the size limit. */
static void check_value_type(verifier *v, const tl_op *o, const tl_type *t) {
  char b[64];
  if (t->kind == TL_KIND_NONE || t->kind > TL_KIND_TENSOR) {
    err(v, o, "value without a type");
    return;
  }
  if (t->dtype == TL_VOID || t->dtype >= TL_NUM_DTYPES) err(v, o, "value of type %s has no element type", tstr(t, b));
  if (t->rank > TL_MAX_RANK) {
    err(v, o, "rank %d exceeds %d", t->rank, TL_MAX_RANK);
    return;
  }
  if (t->kind != TL_KIND_TILE) return;
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) {
    if (!is_pow2(t->shape[i])) {
      err(v, o, "tile dimension %d of %s is not a power of two", (int)t->shape[i], tstr(t, b));
      return;
    }
    n *= t->shape[i];
  }
  if (n > TL_MAX_TILE_ELEMS) err(v, o, "tile %s has %lld elements, more than %d", tstr(t, b), (long long)n, TL_MAX_TILE_ELEMS);
}

static bool is_float_only(int opc) {
  switch (opc) {
  case TL_OP_exp: case TL_OP_exp2: case TL_OP_log: case TL_OP_log2: case TL_OP_sqrt: case TL_OP_rsqrt:
  case TL_OP_sin: case TL_OP_cos: case TL_OP_tanh: case TL_OP_sigmoid: case TL_OP_floor: case TL_OP_ceil:
  case TL_OP_fma:
    return true;
  default: return false;
  }
}

static bool is_dot_dtype(int dt) { return tl_dot_kstep((tl_dtype)dt) != 0; }
static bool is_fp8(int dt) { return dt == TL_F8E4M3 || dt == TL_F8E5M2; }

/* load/store: tensor, one index per dim, view lengths; returns the view type
 * (scalar when every dim is indexed) through *view. */
static bool check_view(verifier *v, const tl_op *o, int extra_max, int *extra, tl_type *view) {
  char b[64];
  if (o->nopnd < 1 || vtype(v, o->opnd[0])->kind != TL_KIND_TENSOR) {
    err(v, o, "first operand must be a tensor");
    return false;
  }
  const tl_type *tt = vtype(v, o->opnd[0]);
  int rank = tt->rank;
  *extra = o->nopnd - 1 - rank;
  if (*extra < (o->opc == TL_OP_load ? 0 : 1) || *extra > extra_max) {
    err(v, o, "needs one index per dimension of %s (%d), got %d operands", tstr(tt, b), rank, o->nopnd);
    return false;
  }
  int32_t shape[TL_MAX_RANK];
  int kept = 0, gathers[TL_MAX_RANK], ngather = 0;
  bool ok = true;
  for (int i = 0; i < TL_MAX_RANK; i++) {
    if (i >= rank) {
      if (o->dims[i]) {
        err(v, o, "view length given for dimension %d of a rank-%d tensor", i, rank);
        ok = false;
      }
      continue;
    }
    const tl_type *it = vtype(v, o->opnd[1 + i]);
    if (it->kind == TL_KIND_TILE && o->dims[i] > 0) {
      gathers[ngather++] = i; /* checked against the view's shape below */
    } else if (!is_scalar_of(it, TL_I32) && !is_scalar_of(it, TL_I64)) {
      err(v, o, "index %d must be an i32 or i64 scalar, not %s (a gather index is an i32 tile of the view's shape)", i,
          tstr(it, b));
      ok = false;
    }
    if (o->dims[i] < 0) {
      err(v, o, "negative view length");
      ok = false;
    } else if (o->dims[i] > 0) {
      shape[kept++] = o->dims[i];
    }
  }
  *view = kept ? tl_tile_type((tl_dtype)tt->dtype, kept, shape) : tl_scalar_type((tl_dtype)tt->dtype);
  for (int g = 0; g < ngather; g++) {
    const tl_type *it = vtype(v, o->opnd[1 + gathers[g]]);
    tl_type want = *view;
    want.dtype = TL_I32;
    if (!tl_type_eq(it, &want)) {
      char b2[64];
      err(v, o, "gather index %d is %s; it must be %s (the view's shape)", gathers[g], tstr(it, b), tstr(&want, b2));
      ok = false;
    }
  }
  return ok;
}

static void check_yield(verifier *v, const tl_op *owner, const tl_region *r, const int32_t *want, int n) {
  char b1[64], b2[64];
  if (r->ops.len == 0 || v->f->ops.data[r->ops.data[r->ops.len - 1]].opc != TL_OP_yield) {
    err(v, owner, "region must end in 'yield'");
    return;
  }
  const tl_op *y = &v->f->ops.data[r->ops.data[r->ops.len - 1]];
  if (y->nopnd != n) {
    err(v, y, "yields %d values, %d expected", y->nopnd, n);
    return;
  }
  for (int i = 0; i < n; i++) {
    const tl_type *got = vtype(v, y->opnd[i]), *exp = vtype(v, want[i]);
    if (!tl_type_eq(got, exp)) err(v, y, "value %d has type %s, %s expected", i, tstr(got, b1), tstr(exp, b2));
  }
}

static void check_op_types(verifier *v, const tl_op *o) {
  char b1[64], b2[64], b3[64];
  const tl_opinfo *info = &tl_opinfo_table[o->opc];
  const tl_type *r0 = o->nres > 0 ? vtype(v, o->res[0]) : NULL;
  const tl_type *a0 = o->nopnd > 0 ? vtype(v, o->opnd[0]) : NULL;

  /* tensors are only the memory operand of load/store/dim */
  for (int i = 0; i < o->nopnd; i++) {
    bool allowed = i == 0 && (o->opc == TL_OP_load || o->opc == TL_OP_store || o->opc == TL_OP_atomic ||
                              o->opc == TL_OP_dim);
    if (vtype(v, o->opnd[i])->kind == TL_KIND_TENSOR && !allowed) err(v, o, "operand %d is a tensor; load it first", i);
  }
  for (int i = 0; i < o->nres; i++) {
    if (vtype(v, o->res[i])->kind == TL_KIND_TENSOR) {
      err(v, o, "result %d is a tensor", i);
      return;
    }
    check_value_type(v, o, vtype(v, o->res[i]));
  }

  if (info->flags & TL_EW) {
    /* elementwise: same shape everywhere; same dtype unless cmp/select/cast */
    for (int i = 0; i < o->nopnd; i++) {
      const tl_type *t = vtype(v, o->opnd[i]);
      if (!same_shape(t, r0)) {
        err(v, o, "operand %d (%s) and result (%s) differ in shape", i, tstr(t, b1), tstr(r0, b2));
        return;
      }
    }
    if (o->opc == TL_OP_cmp) {
      if (r0->dtype != TL_I1) err(v, o, "result must be i1, not %s", tstr(r0, b1));
      if (!tl_type_eq(a0, vtype(v, o->opnd[1]))) err(v, o, "operands differ: %s vs %s", tstr(a0, b1), tstr(vtype(v, o->opnd[1]), b2));
      if ((unsigned)o->kind > TL_CMP_GE) err(v, o, "bad predicate %d", o->kind);
      return;
    }
    if (o->opc == TL_OP_select) {
      if (a0->dtype != TL_I1) err(v, o, "condition must be i1, not %s", tstr(a0, b1));
      for (int i = 1; i < 3; i++)
        if (vtype(v, o->opnd[i])->dtype != r0->dtype)
          err(v, o, "operand %d (%s) and result (%s) differ in element type", i, tstr(vtype(v, o->opnd[i]), b1), tstr(r0, b2));
      return;
    }
    if (o->opc == TL_OP_cast) return;
    if (o->opc == TL_OP_bitcast) {
      if (a0->dtype == TL_I1 || r0->dtype == TL_I1 || tl_dtype_bits((tl_dtype)a0->dtype) != tl_dtype_bits((tl_dtype)r0->dtype))
        err(v, o, "bitcast from %s to %s: the widths differ", tstr(a0, b1), tstr(r0, b2));
      return;
    }
    for (int i = 0; i < o->nopnd; i++)
      if (vtype(v, o->opnd[i])->dtype != r0->dtype) {
        err(v, o, "operand %d (%s) and result (%s) differ in element type", i, tstr(vtype(v, o->opnd[i]), b1), tstr(r0, b2));
        return;
      }
    tl_dtype dt = (tl_dtype)r0->dtype;
    switch (o->opc) {
    case TL_OP_and: case TL_OP_or: case TL_OP_xor: case TL_OP_not:
      if (!tl_dtype_is_int(dt)) err(v, o, "needs integer or i1 operands, not %s", tl_dtype_name(dt));
      break;
    case TL_OP_shl: case TL_OP_shr:
      if (!tl_dtype_is_int(dt) || dt == TL_I1) err(v, o, "needs integer operands, not %s", tl_dtype_name(dt));
      break;
    default:
      if (is_float_only(o->opc) && !tl_dtype_is_float(dt)) err(v, o, "needs float operands, not %s", tl_dtype_name(dt));
      else if (dt == TL_I1 && o->opc != TL_OP_min && o->opc != TL_OP_max)
        err(v, o, "arithmetic on i1; use and/or/xor/not");
      break;
    }
    return;
  }

  switch (o->opc) {
  case TL_OP_const:
    if (r0->kind != TL_KIND_SCALAR && r0->kind != TL_KIND_TILE) err(v, o, "result must be a scalar or a tile");
    break;
  case TL_OP_dim:
    if (a0->kind != TL_KIND_TENSOR) err(v, o, "operand must be a tensor");
    else if (o->axis < 0 || o->axis >= a0->rank) err(v, o, "axis %d out of range for %s", o->axis, tstr(a0, b1));
    if (!is_scalar_of(r0, TL_I32)) err(v, o, "result must be i32");
    break;
  case TL_OP_program_id:
  case TL_OP_num_programs:
    if (o->axis < 0 || o->axis > 2) err(v, o, "axis %d out of range [0, 2]", o->axis);
    if (!is_scalar_of(r0, TL_I32)) err(v, o, "result must be i32");
    break;
  case TL_OP_iota:
    if (r0->kind != TL_KIND_TILE || r0->rank != 1 || r0->dtype != TL_I32) err(v, o, "result must be a 1-D i32 tile, not %s", tstr(r0, b1));
    break;
  case TL_OP_splat:
    if (a0->kind != TL_KIND_SCALAR) err(v, o, "operand must be a scalar, not %s", tstr(a0, b1));
    if (r0->kind != TL_KIND_TILE) err(v, o, "result must be a tile");
    if (a0->dtype != r0->dtype) err(v, o, "element types differ: %s vs %s", tstr(a0, b1), tstr(r0, b2));
    break;
  case TL_OP_broadcast:
    if (a0->kind != TL_KIND_TILE || r0->kind != TL_KIND_TILE || a0->rank != r0->rank) {
      err(v, o, "needs tiles of the same rank: %s -> %s", tstr(a0, b1), tstr(r0, b2));
      break;
    }
    if (a0->dtype != r0->dtype) err(v, o, "element types differ: %s vs %s", tstr(a0, b1), tstr(r0, b2));
    for (int i = 0; i < a0->rank; i++)
      if (a0->shape[i] != r0->shape[i] && a0->shape[i] != 1) {
        err(v, o, "dimension %d: %d cannot grow to %d", i, a0->shape[i], r0->shape[i]);
        break;
      }
    break;
  case TL_OP_expand_dims: {
    if (a0->kind != TL_KIND_TILE || r0->kind != TL_KIND_TILE) {
      err(v, o, "needs tiles: %s -> %s", tstr(a0, b1), tstr(r0, b2));
      break;
    }
    if (o->axis < 0 || o->axis > a0->rank) {
      err(v, o, "axis %d out of range [0, %d]", o->axis, a0->rank);
      break;
    }
    bool ok = r0->rank == a0->rank + 1 && r0->dtype == a0->dtype && r0->shape[o->axis] == 1;
    for (int i = 0, j = 0; ok && i < r0->rank; i++) {
      if (i == o->axis) continue;
      if (r0->shape[i] != a0->shape[j++]) ok = false;
    }
    if (!ok) err(v, o, "%s with a 1 inserted at axis %d is not %s", tstr(a0, b1), o->axis, tstr(r0, b2));
    break;
  }
  case TL_OP_reshape:
    if (a0->kind != TL_KIND_TILE || r0->kind != TL_KIND_TILE || a0->dtype != r0->dtype ||
        tl_type_numel(a0) != tl_type_numel(r0))
      err(v, o, "cannot reshape %s to %s", tstr(a0, b1), tstr(r0, b2));
    break;
  case TL_OP_trans:
    if (a0->kind != TL_KIND_TILE || a0->rank != 2 || r0->kind != TL_KIND_TILE || r0->rank != 2 ||
        a0->dtype != r0->dtype || a0->shape[0] != r0->shape[1] || a0->shape[1] != r0->shape[0])
      err(v, o, "%s transposed is not %s", tstr(a0, b1), tstr(r0, b2));
    break;
  case TL_OP_reduce: {
    if (a0->kind != TL_KIND_TILE) {
      err(v, o, "operand must be a tile");
      break;
    }
    if ((unsigned)o->kind > TL_RED_MIN) err(v, o, "bad reduction kind %d", o->kind);
    if (o->axis < 0 || o->axis >= a0->rank) {
      err(v, o, "axis %d out of range for %s", o->axis, tstr(a0, b1));
      break;
    }
    tl_type want;
    if (a0->rank == 1) {
      want = tl_scalar_type((tl_dtype)a0->dtype);
    } else {
      int32_t shape[TL_MAX_RANK];
      for (int i = 0, j = 0; i < a0->rank; i++)
        if (i != o->axis) shape[j++] = a0->shape[i];
      want = tl_tile_type((tl_dtype)a0->dtype, a0->rank - 1, shape);
    }
    if (!tl_type_eq(&want, r0)) err(v, o, "reducing %s over axis %d gives %s, not %s", tstr(a0, b1), o->axis, tstr(&want, b2), tstr(r0, b3));
    break;
  }
  case TL_OP_dot: {
    const tl_type *a = a0, *b = vtype(v, o->opnd[1]), *acc = vtype(v, o->opnd[2]);
    if (a->kind != TL_KIND_TILE || b->kind != TL_KIND_TILE || acc->kind != TL_KIND_TILE || r0->kind != TL_KIND_TILE ||
        a->rank != 2 || b->rank != 2 || acc->rank != 2 || r0->rank != 2) {
      err(v, o, "needs 2-D tiles");
      break;
    }
    if (a->shape[1] != b->shape[0])
      err(v, o, "inner dimensions differ: %s x %s", tstr(a, b1), tstr(b, b2));
    if (acc->shape[0] != a->shape[0] || acc->shape[1] != b->shape[1] || !tl_type_eq(acc, r0))
      err(v, o, "accumulator %s and result %s must be [%d x %d]", tstr(acc, b1), tstr(r0, b2), a->shape[0], b->shape[1]);
    if (!is_dot_dtype(a->dtype) || !is_dot_dtype(b->dtype)) {
      err(v, o, "operands must be f16, bf16, f8e4m3, f8e5m2, i8 or f32, not %s and %s", tstr(a, b1), tstr(b, b2));
      break;
    }
    if (a->dtype != b->dtype && !(is_fp8(a->dtype) && is_fp8(b->dtype)))
      err(v, o, "operand element types differ: %s and %s", tl_dtype_name((tl_dtype)a->dtype), tl_dtype_name((tl_dtype)b->dtype));
    tl_dtype want_acc = tl_dot_acc_dtype((tl_dtype)a->dtype);
    if (acc->dtype != want_acc || r0->dtype != want_acc)
      err(v, o, "accumulator and result must be %s for %s operands", tl_dtype_name(want_acc), tl_dtype_name((tl_dtype)a->dtype));
    if ((o->kind == TL_DOT_TF32) != (a->dtype == TL_F32))
      err(v, o, o->kind == TL_DOT_TF32 ? "tf32 precision needs f32 operands" : "f32 operands need tf32 precision");
    else if (o->kind != TL_DOT_EXACT && o->kind != TL_DOT_TF32)
      err(v, o, "unknown precision %d", (int)o->kind);
    break;
  }
  case TL_OP_load: {
    tl_type view;
    int extra = 0;
    if (!check_view(v, o, 1, &extra, &view)) break;
    if (!tl_type_eq(&view, r0)) err(v, o, "view is %s but the result is %s", tstr(&view, b1), tstr(r0, b2));
    if (extra) {
      const tl_type *other = vtype(v, o->opnd[o->nopnd - 1]);
      if (!is_scalar_of(other, (tl_dtype)view.dtype))
        err(v, o, "'other' must be a %s scalar, not %s", tl_dtype_name((tl_dtype)view.dtype), tstr(other, b1));
    }
    break;
  }
  case TL_OP_store: {
    tl_type view;
    int extra = 0;
    if (!check_view(v, o, 1, &extra, &view)) break;
    const tl_type *val = vtype(v, o->opnd[o->nopnd - 1]);
    if (!tl_type_eq(&view, val)) err(v, o, "view is %s but the stored value is %s", tstr(&view, b1), tstr(val, b2));
    break;
  }
  case TL_OP_atomic: {
    tl_type view;
    int extra = 0;
    if (!check_view(v, o, 1, &extra, &view)) break;
    const tl_type *val = vtype(v, o->opnd[o->nopnd - 1]);
    if (!tl_type_eq(&view, val)) err(v, o, "view is %s but the value is %s", tstr(&view, b1), tstr(val, b2));
    int dt = view.dtype;
    if (o->kind == TL_ATOMIC_FETCH_ADD) {
      tl_type i32 = tl_scalar_type(TL_I32);
      if (!tl_type_eq(&view, &i32)) err(v, o, "atomic fetch_add takes one i32 element, not %s", tstr(&view, b1));
      if (o->nres != 1 || !tl_type_eq(vtype(v, o->res[0]), &i32)) err(v, o, "atomic fetch_add gives one i32 scalar");
      break;
    }
    if (o->nres != 0) err(v, o, "has %d results, should have 0", o->nres);
    if ((unsigned)o->kind > TL_ATOMIC_MIN) err(v, o, "bad atomic kind %d", o->kind);
    else if (!(dt == TL_F32 || dt == TL_I32 || (o->kind == TL_ATOMIC_ADD && (dt == TL_F16 || dt == TL_BF16))))
      err(v, o, "atomic %s on %s is not supported (f32, i32; add also f16, bf16)",
          o->kind == TL_ATOMIC_ADD ? "add" : o->kind == TL_ATOMIC_MAX ? "max" : "min", tl_dtype_name((tl_dtype)dt));
    break;
  }
  case TL_OP_permute: {
    bool ok = a0->kind == TL_KIND_TILE && r0->kind == TL_KIND_TILE && a0->rank == r0->rank && a0->dtype == r0->dtype;
    bool seen[TL_MAX_RANK] = {false};
    for (int d = 0; ok && d < a0->rank; d++) {
      int p = o->dims[d];
      ok = p >= 0 && p < a0->rank && !seen[p] && r0->shape[d] == a0->shape[p];
      if (ok) seen[p] = true;
    }
    if (!ok) err(v, o, "%s permuted is not %s", tstr(a0, b1), tstr(r0, b2));
    break;
  }
  case TL_OP_slice: {
    bool ok = a0->kind == TL_KIND_TILE && r0->kind == TL_KIND_TILE && a0->rank == r0->rank && a0->dtype == r0->dtype;
    for (int d = 0; ok && d < a0->rank; d++)
      ok = o->dims[d] >= 0 && (int64_t)o->dims[d] + r0->shape[d] <= a0->shape[d];
    if (!ok) err(v, o, "slice of %s at the given starts does not fit into %s", tstr(r0, b1), tstr(a0, b2));
    break;
  }
  case TL_OP_cat: {
    const tl_type *b = vtype(v, o->opnd[1]);
    bool ok = a0->kind == TL_KIND_TILE && b->kind == TL_KIND_TILE && r0->kind == TL_KIND_TILE && a0->rank == b->rank &&
              a0->rank == r0->rank && o->axis >= 0 && o->axis < a0->rank && a0->dtype == b->dtype &&
              a0->dtype == r0->dtype;
    for (int d = 0; ok && d < a0->rank; d++)
      ok = d == o->axis ? r0->shape[d] == a0->shape[d] + b->shape[d] : a0->shape[d] == b->shape[d] && r0->shape[d] == a0->shape[d];
    if (!ok) err(v, o, "cat of %s and %s along axis %d cannot give %s", tstr(a0, b1), tstr(b, b2), o->axis, tstr(r0, b3));
    break;
  }
  case TL_OP_sort:
  case TL_OP_scan:
  case TL_OP_argreduce: {
    bool scan = o->opc != TL_OP_argreduce;
    if (a0->kind != TL_KIND_TILE || o->axis < 0 || o->axis >= a0->rank) {
      err(v, o, "needs a tile and an axis in range, not %s axis %d", tstr(a0, b1), o->axis);
      break;
    }
    if ((unsigned)o->kind > 1) err(v, o, "bad kind %d", o->kind);
    int dt = a0->dtype;
    if (dt == TL_I1 || dt == TL_F8E4M3 || dt == TL_F8E5M2) err(v, o, "not defined on %s", tl_dtype_name((tl_dtype)dt));
    tl_type want = *a0;
    want.layout = -1;
    if (!scan) {
      int32_t shape[TL_MAX_RANK];
      int r = 0;
      for (int i = 0; i < a0->rank; i++)
        if (i != o->axis) shape[r++] = a0->shape[i];
      want = r ? tl_tile_type(TL_I32, r, shape) : tl_scalar_type(TL_I32);
    }
    if (!tl_type_eq(&want, r0)) err(v, o, "over axis %d of %s gives %s, not %s", o->axis, tstr(a0, b1), tstr(&want, b2), tstr(r0, b3));
    break;
  }
  case TL_OP_rand: {
    const tl_type *off = vtype(v, o->opnd[1]);
    if (!is_scalar_of(a0, TL_I64)) err(v, o, "seed must be an i64 scalar, not %s", tstr(a0, b1));
    if (off->dtype != TL_I32 || (off->kind != TL_KIND_SCALAR && off->kind != TL_KIND_TILE))
      err(v, o, "offsets must be i32, not %s", tstr(off, b1));
    if ((unsigned)o->kind > TL_RAND_INT) err(v, o, "bad rand kind %d", o->kind);
    else if (!same_shape(off, r0) || r0->dtype != (o->kind == TL_RAND_INT ? TL_I32 : TL_F32))
      err(v, o, "result %s must have the offsets' shape and element type %s", tstr(r0, b1),
          o->kind == TL_RAND_INT ? "i32" : "f32");
    break;
  }
  case TL_OP_for: {
    if (o->nopnd < 3) {
      err(v, o, "needs lo, hi and step");
      break;
    }
    for (int i = 0; i < 3; i++)
      if (!is_scalar_of(vtype(v, o->opnd[i]), TL_I32)) err(v, o, "%s must be an i32 scalar", i == 0 ? "lo" : i == 1 ? "hi" : "step");
    int ncarried = o->nopnd - 3;
    if (o->nres != ncarried) {
      err(v, o, "%d carried values but %d results", ncarried, o->nres);
      break;
    }
    if (o->nregions != 1) {
      err(v, o, "needs exactly one region");
      break;
    }
    const tl_region *r = &o->regions[0];
    if (r->args.len != 1 + ncarried) {
      err(v, o, "region has %d arguments, %d expected (induction variable + carried)", r->args.len, 1 + ncarried);
      break;
    }
    if (!is_scalar_of(vtype(v, r->args.data[0]), TL_I32)) err(v, o, "induction variable must be i32");
    for (int i = 0; i < ncarried; i++) {
      const tl_type *init = vtype(v, o->opnd[3 + i]), *arg = vtype(v, r->args.data[1 + i]), *res = vtype(v, o->res[i]);
      if (!tl_type_eq(init, arg) || !tl_type_eq(init, res))
        err(v, o, "carried value %d: init %s, argument %s, result %s differ", i, tstr(init, b1), tstr(arg, b2), tstr(res, b3));
    }
    check_yield(v, o, r, o->res, o->nres);
    break;
  }
  case TL_OP_require:
    if (!is_scalar_of(a0, TL_I1)) err(v, o, "condition must be an i1 scalar, not %s", tstr(a0, b1));
    if (!o->req_text) err(v, o, "no condition text");
    break;
  case TL_OP_if:
    if (!is_scalar_of(a0, TL_I1)) err(v, o, "condition must be an i1 scalar, not %s", tstr(a0, b1));
    if (o->nregions != 2) {
      err(v, o, "needs a then and an else region");
      break;
    }
    for (int k = 0; k < 2; k++) {
      if (o->regions[k].args.len) err(v, o, "regions take no arguments");
      check_yield(v, o, &o->regions[k], o->res, o->nres);
    }
    break;
  case TL_OP_convert_layout:
    if (!tl_type_eq(a0, r0)) err(v, o, "changes the type: %s -> %s", tstr(a0, b1), tstr(r0, b2));
    break;
  default: break;
  }
}

static void verify_region(verifier *v, const tl_region *r, int32_t owner, int depth);

static bool check_value_id(verifier *v, const tl_op *o, int32_t id, const char *what) {
  if (id < 0 || id >= v->f->values.len) {
    err(v, o, "%s refers to value %d, which does not exist", what, (int)id);
    return false;
  }
  return true;
}

static void verify_op(verifier *v, int32_t id, int32_t owner, int depth) {
  tl_func *f = v->f;
  const tl_op *o = &f->ops.data[id];
  if (o->opc >= TL_NUM_OPS) {
    err(v, NULL, "op %d has a bad opcode %d", (int)id, o->opc);
    return;
  }
  const tl_opinfo *info = &tl_opinfo_table[o->opc];
  if (o->flags & TL_OPF_DEAD) err(v, o, "a removed op is still linked");
  if (o->parent != owner) err(v, o, "parent link is %d, should be %d", (int)o->parent, (int)owner);
  if (info->nopnd >= 0 && o->nopnd != info->nopnd) {
    err(v, o, "takes %d operands, has %d", info->nopnd, o->nopnd);
    return;
  }
  if (info->nres >= 0 && o->nres != info->nres) {
    err(v, o, "has %d results, should have %d", o->nres, info->nres);
    return;
  }
  bool ids_ok = true;
  for (int i = 0; i < o->nopnd; i++) {
    if (!check_value_id(v, o, o->opnd[i], "an operand")) {
      ids_ok = false;
      continue;
    }
    if (!v->visible[o->opnd[i]]) {
      err(v, o, "operand %d is not defined before this use (or not visible here)", i);
      ids_ok = false;
    }
  }
  for (int i = 0; i < o->nres; i++) {
    if (!check_value_id(v, o, o->res[i], "a result")) {
      ids_ok = false;
      continue;
    }
    const tl_value *val = &f->values.data[o->res[i]];
    if (val->def != id || val->index != i) {
      err(v, o, "result %d's value does not point back to this op", i);
      ids_ok = false;
    }
  }
  if (!(info->flags & TL_REGION) && o->nregions) err(v, o, "has regions but is not a region op");
  if (ids_ok) check_op_types(v, o);
  for (int k = 0; k < o->nregions; k++) {
    const tl_region *r = &o->regions[k];
    if (r->owner != id) err(v, o, "region %d's owner link is wrong", k);
    verify_region(v, r, id, depth + 1);
  }
  for (int i = 0; i < o->nres; i++)
    if (o->res[i] >= 0 && o->res[i] < f->values.len) v->visible[o->res[i]] = 1;
}

static void verify_region(verifier *v, const tl_region *r, int32_t owner, int depth) {
  tl_func *f = v->f;
  const tl_op *owner_op = owner >= 0 ? &f->ops.data[owner] : NULL;
  if (depth > 256) {
    err(v, owner_op, "regions nested too deeply");
    return;
  }
  for (int i = 0; i < r->args.len; i++) {
    int32_t a = r->args.data[i];
    if (!check_value_id(v, owner_op, a, "a region argument")) continue;
    const tl_value *val = &f->values.data[a];
    if (val->def != -1 || val->region_owner != owner || val->index != i)
      err(v, owner_op, "region argument %d does not point back to its op", i);
    check_value_type(v, owner_op, &val->type);
    v->visible[a] = 1;
  }
  for (int i = 0; i < r->ops.len; i++) {
    int32_t id = r->ops.data[i];
    if (id < 0 || id >= f->ops.len) {
      err(v, owner_op, "region lists op %d, which does not exist", (int)id);
      continue;
    }
    if (v->linked[id]) {
      err(v, &f->ops.data[id], "op is linked in two places");
      continue;
    }
    v->linked[id] = 1;
    const tl_op *o = &f->ops.data[id];
    if (o->opc == TL_OP_yield && i != r->ops.len - 1) err(v, o, "'yield' must be the last op of its region");
    if (o->opc == TL_OP_yield && r == &f->body) err(v, o, "the body has no terminator");
    if (o->opc == TL_OP_require && r != &f->grid) err(v, o, "'require' is allowed only in the grid region");
    if (r == &f->grid && o->opc != TL_OP_yield && o->opc != TL_OP_require &&
        (!(tl_opinfo_table[o->opc < TL_NUM_OPS ? o->opc : 0].flags & TL_PURE) || o->opc == TL_OP_program_id ||
         o->opc == TL_OP_num_programs))
      err(v, o, "not allowed in the grid region (pure ops of parameters only)");
    verify_op(v, id, owner, depth);
  }
  /* leaving the region: what it defined goes out of scope */
  for (int i = 0; i < r->args.len; i++)
    if (r->args.data[i] >= 0 && r->args.data[i] < f->values.len) v->visible[r->args.data[i]] = 0;
  for (int i = 0; i < r->ops.len; i++) {
    int32_t id = r->ops.data[i];
    if (id < 0 || id >= f->ops.len) continue;
    const tl_op *o = &f->ops.data[id];
    for (int k = 0; k < o->nres; k++)
      if (o->res[k] >= 0 && o->res[k] < f->values.len) v->visible[o->res[k]] = 0;
  }
}

bool tl_verify_func(tl_func *f) {
  verifier v = {f, f->ctx, NULL, NULL, true};
  v.visible = tl_alloc(&f->ctx->arena, (size_t)f->values.len + 1);
  v.linked = tl_alloc(&f->ctx->arena, (size_t)f->ops.len + 1);
  char b[64];
  for (int i = 0; i < f->params.len; i++) {
    const tl_param *p = &f->params.data[i];
    int32_t val = p->value;
    if (val < 0 || val >= f->values.len) {
      err(&v, NULL, "parameter %d has no value", i);
      continue;
    }
    const tl_type *t = &f->values.data[val].type;
    bool ok = p->is_tensor ? t->kind == TL_KIND_TENSOR && t->rank == p->rank : t->kind == TL_KIND_SCALAR;
    if (!ok || t->dtype != p->dtype) err(&v, NULL, "parameter '%s' and its value (%s) disagree", p->name, tstr(t, b));
    if (p->rank < 0 || p->rank > TL_MAX_RANK) err(&v, NULL, "parameter '%s' has rank %d", p->name, p->rank);
    for (int d = 0; d < p->rank && d < TL_MAX_RANK; d++)
      if (!p->dims[d].is_const && (p->dims[d].sym < 0 || p->dims[d].sym >= f->syms.len))
        err(&v, NULL, "parameter '%s' dimension %d names no shape symbol", p->name, d);
    v.visible[val] = 1;
  }
  if (f->grid.owner != -1 || f->body.owner != -1) err(&v, NULL, "grid/body owner links are wrong");
  verify_region(&v, &f->grid, -1, 0);
  /* grid: ends in yield of 1..3 i32 scalars */
  const tl_region *g = &f->grid;
  const tl_op *gy = g->ops.len ? &f->ops.data[g->ops.data[g->ops.len - 1]] : NULL;
  if (!gy || gy->opc != TL_OP_yield) {
    err(&v, gy, "the grid region must end in 'yield' of 1 to 3 i32 scalars");
  } else {
    if (gy->nopnd < 1 || gy->nopnd > 3) err(&v, gy, "the grid has %d dimensions; 1 to 3 expected", gy->nopnd);
    for (int i = 0; i < gy->nopnd; i++)
      if (gy->opnd[i] >= 0 && gy->opnd[i] < f->values.len && !is_scalar_of(vtype(&v, gy->opnd[i]), TL_I32))
        err(&v, gy, "grid dimension %d must be an i32 scalar", i);
  }
  /* the grid's values are not visible in the body */
  verify_region(&v, &f->body, -1, 0);
  return v.ok;
}

bool tl_verify_module(tl_module *m) {
  bool ok = true;
  for (int i = 0; i < m->funcs.len; i++) ok &= tl_verify_func(m->funcs.data[i]);
  return ok;
}
