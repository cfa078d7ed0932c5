/* lower_builtins.c: the builtin calls (load, store, the atomics, elementwise math, where, fma, cast,
 * bitcast, zeros / full / iota, dot, trans, the reductions, scans and sort, reshape, permute, cat,
 * rand, program_id, cdiv), checked and lowered to their ops for lower.c's walk.
 * requires: the kernel's names bound, views lowered by lower_views.c; keeps: lower.c's rules
 * (operands of one type through explicit conversions and broadcasts, constants folded where
 * they fold); reports: argument counts and keywords, types, shapes, axes, and an unknown
 * function (with the spelling here of what Triton calls by that name). */
#include "lower_internal.h"

#include <math.h>
#include <string.h>
static bool nargs_ok(lower *L, fe_expr *e, int lo, int hi) {
  if (e->nargs < lo || e->nargs > hi) {
    if (lo == hi)
      tl_error(L->ctx, e->loc, "%s() takes %d argument%s, found %d", e->name, lo, lo == 1 ? "" : "s", e->nargs);
    else
      tl_error(L->ctx, e->loc, "%s() takes %d to %d arguments, found %d", e->name, lo, hi, e->nargs);
    return false;
  }
  return true;
}

static fval eval_load(lower *L, fe_expr *e) {
  if (!nargs_ok(L, e, 1, 1)) return fv_err();
  fe_expr *other_e = NULL;
  for (int i = 0; i < e->nkw; i++) {
    if (strcmp(e->kwnames[i], "other") != 0) {
      tl_error(L->ctx, e->kwlocs[i], "load() has no argument named '%s' (only 'other')", e->kwnames[i]);
      if (!strcmp(e->kwnames[i], "mask"))
        tl_note(L->ctx, e->kwlocs[i], "elements outside the tensor are masked already (they read as 'other', 0 "
                                      "by default); for another mask, where(mask, load(...), v)");
      return fv_err();
    }
    other_e = e->kwargs[i];
  }
  view v;
  if (!lw_lower_view(L, e->args[0], "load", &v)) return fv_err();
  int32_t ops[TL_MAX_RANK + 2];
  int n = 0;
  ops[n++] = v.tensor;
  for (int d = 0; d < v.rank; d++) ops[n++] = v.start[d];
  if (other_e) {
    fval o = lw_eval(L, other_e);
    if (o.cls == V_ERR) return o;
    if (o.cls != V_SCALAR) {
      tl_error(L->ctx, other_e->loc, "'other' must be a scalar, not %s",
               o.cls == V_TILE ? lw_tystr(L, &o) : lw_operand_kind_error(&o));
      return fv_err();
    }
    if (is_flt(dt_of(&o)) && !is_flt(v.dtype)) {
      tl_error(L->ctx, other_e->loc, "'other' is %s but '%s' holds %s", lw_tystr(L, &o), v.name, tl_dtype_name(v.dtype));
      return fv_err();
    }
    o = lw_convert(L, o, v.dtype, other_e->loc);
    ops[n++] = lw_mat(L, &o, other_e->loc);
  }
  int32_t op;
  tl_type rt = v.trank ? tl_tile_type(v.dtype, v.trank, v.tshape) : tl_scalar_type(v.dtype);
  int32_t res = lw_emit(L, TL_OP_load, ops, n, rt, e->loc, &op);
  for (int d = 0; d < v.rank; d++) tl_op_at(L->f, op)->dims[d] = v.dims[d];
  return fv_value(L->f, res);
}

/* store(view, x) and atomic_*(view, x) (opc TL_OP_atomic, kind TL_ATOMIC_*):
 * the same view and value rules.  atomic_fetch_add(view, x) is the one with a
 * value: a scalar view of an i32 tensor, the old element (docs/language.md 7). */
static fval eval_store_like(lower *L, fe_expr *e, tl_opcode opc, int kind) {
  if (!nargs_ok(L, e, 2, 2)) return fv_err();
  view v;
  bool ok = lw_lower_view(L, e->args[0], e->name, &v);
  fval x = lw_eval(L, e->args[1]);
  if (!ok || x.cls == V_ERR) return fv_err();
  tl_loc xl = e->args[1]->loc;
  bool fetch = opc == TL_OP_atomic && kind == TL_ATOMIC_FETCH_ADD;
  if (fetch && (v.trank != 0 || v.dtype != TL_I32)) {
    tl_error(L->ctx, e->loc, "atomic_fetch_add() takes one element of an i32 tensor (every view entry an index); "
             "'%s' is a tensor of %s%s", v.name, tl_dtype_name(v.dtype), v.trank ? " viewed as a tile" : "");
    return fv_err();
  }
  if (fetch && (x.cls != V_SCALAR || is_flt(dt_of(&x)))) {
    tl_error(L->ctx, xl, "atomic_fetch_add() adds an integer scalar, not %s", x.cls == V_SCALAR ? lw_tystr(L, &x) : "a tile");
    return fv_err();
  }
  if (opc == TL_OP_atomic) {
    bool add = kind == TL_ATOMIC_ADD;
    bool dt_ok = v.dtype == TL_F32 || v.dtype == TL_I32 || (add && (v.dtype == TL_F16 || v.dtype == TL_BF16));
    if (!dt_ok) {
      tl_error(L->ctx, e->loc, "%s() on '%s', a tensor of %s: atomics take f32 or i32 tensors%s", e->name, v.name,
               tl_dtype_name(v.dtype), add ? " (and f16 or bf16 for atomic_add)" : "");
      return fv_err();
    }
  }
  if (!is_val(&x)) {
    tl_error(L->ctx, xl, "the value stored is %s", lw_operand_kind_error(&x));
    return fv_err();
  }
  if (x.cls == V_TILE && dt_of(&x) != v.dtype) {
    tl_error(L->ctx, xl, "storing %s into '%s', a tensor of %s; use cast<%s>()", lw_tystr(L, &x), v.name,
             tl_dtype_name(v.dtype), tl_dtype_name(v.dtype));
    return fv_err();
  }
  if (x.cls == V_SCALAR && is_flt(dt_of(&x)) && !is_flt(v.dtype)) {
    tl_error(L->ctx, xl, "storing %s into '%s', a tensor of %s", lw_tystr(L, &x), v.name, tl_dtype_name(v.dtype));
    return fv_err();
  }
  int rank;
  int32_t shape[TL_MAX_RANK];
  if (!lw_bcast(x.cls == V_TILE ? x.ty.rank : 0, x.ty.shape, v.trank, v.tshape, &rank, shape) || rank != v.trank ||
      memcmp(shape, v.tshape, sizeof(int32_t) * (size_t)rank) != 0) {
    char sx[64], sv[64];
    lw_shape_str(x.cls == V_TILE ? x.ty.rank : 0, x.ty.shape, sx, sizeof sx);
    lw_shape_str(v.trank, v.tshape, sv, sizeof sv);
    tl_error(L->ctx, xl, "the value stored has shape %s, the view has shape %s", sx, sv);
    return fv_err();
  }
  x = lw_to_shape(L, lw_convert(L, x, v.dtype, xl), v.trank, v.tshape, xl);
  int32_t ops[TL_MAX_RANK + 2];
  int n = 0;
  ops[n++] = v.tensor;
  for (int d = 0; d < v.rank; d++) ops[n++] = v.start[d];
  ops[n++] = lw_mat(L, &x, xl);
  tl_type rt = tl_scalar_type(TL_I32);
  int32_t op = tl_op_new(L->f, L->r, opc, ops, n, fetch ? &rt : NULL, fetch ? 1 : 0, e->loc);
  for (int d = 0; d < v.rank; d++) tl_op_at(L->f, op)->dims[d] = v.dims[d];
  tl_op_at(L->f, op)->kind = kind;
  return fetch ? fv_value(L->f, tl_op_at(L->f, op)->res[0]) : fv_void();
}

/* A tile (or scalar) argument; tensors and void are errors. */
static fval value_arg(lower *L, fe_expr *call, int i) {
  fval v = lw_eval(L, call->args[i]);
  if (v.cls == V_ERR || is_val(&v)) return v;
  tl_error(L->ctx, call->args[i]->loc, "argument %d of %s() is %s", i + 1, call->name, lw_operand_kind_error(&v));
  return fv_err();
}

static fval tile_arg(lower *L, fe_expr *call, int i, int rank) {
  fval v = value_arg(L, call, i);
  if (v.cls == V_ERR) return v;
  if (v.cls != V_TILE || (rank && v.ty.rank != rank)) {
    if (rank)
      tl_error(L->ctx, call->args[i]->loc, "argument %d of %s() must be a %d-D tile, not %s", i + 1, call->name, rank,
               lw_tystr(L, &v));
    else
      tl_error(L->ctx, call->args[i]->loc, "argument %d of %s() must be a tile, not %s", i + 1, call->name,
               lw_tystr(L, &v));
    return fv_err();
  }
  return v;
}

static fval eval_math(lower *L, fe_expr *e, tl_opcode opc) {
  if (!nargs_ok(L, e, 1, 1)) return fv_err();
  fval a = value_arg(L, e, 0);
  if (a.cls == V_ERR) return a;
  /* abs of a constant folds and keeps the literal's weak typing, so that
   * abs(3) combines with an integer tile like 3 does (integers stay integers). */
  if (opc == TL_OP_abs && a.is_const && dt_of(&a) != TL_I1 && dt_of(&a) != TL_U8) {
    if (is_flt(dt_of(&a))) a.f = fabs(a.f);
    else if (a.i < 0 && a.i != INT64_MIN) a.i = -a.i;
    return a;
  }
  if (a.weak) a = lw_convert(L, a, TL_F32, e->loc);
  tl_dtype d = dt_of(&a);
  if (opc == TL_OP_abs ? d == TL_I1 || d == TL_U8 : !is_flt(d)) {
    tl_error(L->ctx, e->args[0]->loc, "%s() needs a %s operand, not %s; use cast<f32>()", e->name,
             opc == TL_OP_abs ? "signed" : "float", lw_tystr(L, &a));
    return fv_err();
  }
  int32_t x = lw_mat(L, &a, e->loc);
  a.weak = false;
  return fv_value(L->f, lw_emit(L, opc, &x, 1, a.ty, e->loc, NULL));
}

/* The broadcast shape of three values (a scalar has rank 0), or false. */
static bool bcast3(const fval *x, const fval *y, const fval *z, int *rank, int32_t *shape) {
  int r1;
  int32_t s1[TL_MAX_RANK];
  return lw_bcast(x->cls == V_TILE ? x->ty.rank : 0, x->ty.shape, y->cls == V_TILE ? y->ty.rank : 0, y->ty.shape, &r1, s1) &&
         lw_bcast(r1, s1, z->cls == V_TILE ? z->ty.rank : 0, z->ty.shape, rank, shape);
}

/* fma(a, b, c): a * b + c with one rounding (f32; a bf16 / f16 result is that f32 rounded
 * once more), on floats, the three broadcast as where()'s are. */
static fval eval_fma(lower *L, fe_expr *e) {
  if (!nargs_ok(L, e, 3, 3)) return fv_err();
  fval a = value_arg(L, e, 0), b = value_arg(L, e, 1), c = value_arg(L, e, 2);
  if (a.cls == V_ERR || b.cls == V_ERR || c.cls == V_ERR) return fv_err();
  bool weak;
  tl_dtype d = lw_unify(L, "fma()", &a, &b, e->loc, &weak);
  if (d == TL_VOID) return fv_err();
  fval ab = a.cls == V_TILE ? a : b; /* a * b's type (a tile's, when one is), for lw_unify() with c */
  ab.ty.dtype = d;
  ab.weak = weak;
  d = lw_unify(L, "fma()", &ab, &c, e->loc, &weak);
  if (d == TL_VOID) return fv_err();
  if (weak) d = TL_F32;
  if (!is_flt(d)) {
    tl_error(L->ctx, e->loc, "fma() needs float operands, not %s; use cast<f32>()", tl_dtype_name(d));
    return fv_err();
  }
  int r2;
  int32_t s2[TL_MAX_RANK];
  if (!bcast3(&a, &b, &c, &r2, s2)) {
    tl_error(L->ctx, e->loc, "the shapes of the fma() arguments do not broadcast: %s, %s and %s", lw_tystr(L, &a),
             lw_tystr(L, &b), lw_tystr(L, &c));
    return fv_err();
  }
  a = lw_to_shape(L, lw_convert(L, a, d, e->loc), r2, s2, e->loc);
  b = lw_to_shape(L, lw_convert(L, b, d, e->loc), r2, s2, e->loc);
  c = lw_to_shape(L, lw_convert(L, c, d, e->loc), r2, s2, e->loc);
  int32_t ops[3] = {lw_mat(L, &a, e->loc), lw_mat(L, &b, e->loc), lw_mat(L, &c, e->loc)};
  return fv_value(L->f, lw_emit(L, TL_OP_fma, ops, 3, r2 ? tl_tile_type(d, r2, s2) : tl_scalar_type(d), e->loc, NULL));
}

static bool eval_shape(lower *L, fe_expr *e, int *rank, int32_t *shape) {
  if (!e->has_shape) {
    tl_error(L->ctx, e->loc, "%s<%s> needs a shape, such as %s<%s>[BM, BN]", e->name, tl_dtype_name(e->targ), e->name,
             tl_dtype_name(e->targ));
    return false;
  }
  if (e->nshape > TL_MAX_RANK) {
    tl_error(L->ctx, e->shape[TL_MAX_RANK]->loc, "tile rank %d exceeds the limit of %d", e->nshape, TL_MAX_RANK);
    return false;
  }
  for (int i = 0; i < e->nshape; i++) {
    int64_t v;
    L->in_extent++;
    bool ok = lw_const_int(L, e->shape[i], "a tile dimension", &v);
    L->in_extent--;
    if (!ok) return false;
    if (!lw_tile_extent_ok(L, e->shape[i]->loc, "tile dimension", v)) return false;
    shape[i] = (int32_t)v;
  }
  *rank = e->nshape;
  return lw_check_tile_shape(L, e->loc, *rank, shape);
}

static fval eval_reduce(lower *L, fe_expr *e, int kind) {
  if (!nargs_ok(L, e, 2, 2)) {
    if (e->nargs == 1)
      tl_note(L->ctx, e->loc, "the axis is not optional: %s(x, 0) for a 1-D tile; Triton's axis=None (every element) "
                              "is one axis at a time, %s(%s(x, 1), 0) for a 2-D tile", e->name, e->name, e->name);
    return fv_err();
  }
  fval t = tile_arg(L, e, 0, 0);
  int64_t axis;
  if (!lw_const_int(L, e->args[1], "the reduction axis", &axis) || t.cls == V_ERR) return fv_err();
  if (axis < 0) axis += t.ty.rank;
  if (axis < 0 || axis >= t.ty.rank) {
    tl_error(L->ctx, e->args[1]->loc, "reduction axis is out of range for %s", lw_tystr(L, &t));
    return fv_err();
  }
  if (dt_of(&t) == TL_I1) {
    tl_error(L->ctx, e->args[0]->loc, "%s() of i1 values; use cast<i32>() first", e->name);
    return fv_err();
  }
  int32_t shape[TL_MAX_RANK];
  int r = 0;
  for (int i = 0; i < t.ty.rank; i++)
    if (i != axis) shape[r++] = t.ty.shape[i];
  tl_type rt = r ? tl_tile_type(dt_of(&t), r, shape) : tl_scalar_type(dt_of(&t));
  int32_t op, x = lw_mat(L, &t, e->loc);
  int32_t res = lw_emit(L, TL_OP_reduce, &x, 1, rt, e->loc, &op);
  tl_op_at(L->f, op)->kind = kind;
  tl_op_at(L->f, op)->axis = (int32_t)axis;
  return fv_value(L->f, res);
}

/* The tile argument 0 and the constant axis argument 1 of a scan, argreduce or sort (a negative
 * axis counts from the end); false after a diagnostic.  Booleans and 8-bit floats are refused. */
static bool tile_and_axis(lower *L, fe_expr *e, fval *t, int64_t *axis) {
  *t = tile_arg(L, e, 0, 0);
  if (!lw_const_int(L, e->args[1], "the axis", axis) || t->cls == V_ERR) return false;
  if (*axis < 0) *axis += t->ty.rank;
  if (*axis < 0 || *axis >= t->ty.rank) {
    tl_error(L->ctx, e->args[1]->loc, "axis is out of range for %s", lw_tystr(L, t));
    return false;
  }
  tl_dtype d = dt_of(t);
  if (d == TL_I1 || d == TL_F8E4M3 || d == TL_F8E5M2) {
    tl_error(L->ctx, e->args[0]->loc, "%s() of %s values; cast<%s>() first", e->name, tl_dtype_name(d),
             d == TL_I1 ? "i32" : "f32");
    return false;
  }
  return true;
}

/* cumsum / cummax (scan, same type) and argmax / argmin (argreduce, i32,
 * the axis removed) over a constant axis of a tile. */
static fval eval_scan(lower *L, fe_expr *e, tl_opcode opc, int kind) {
  if (!nargs_ok(L, e, 2, 2)) return fv_err();
  fval t;
  int64_t axis;
  if (!tile_and_axis(L, e, &t, &axis)) return fv_err();
  tl_type rt = t.ty;
  if (opc == TL_OP_argreduce) {
    int32_t shape[TL_MAX_RANK];
    int r = 0;
    for (int i = 0; i < t.ty.rank; i++)
      if (i != axis) shape[r++] = t.ty.shape[i];
    rt = r ? tl_tile_type(TL_I32, r, shape) : tl_scalar_type(TL_I32);
  }
  int32_t op, x = lw_mat(L, &t, e->loc);
  int32_t res = lw_emit(L, opc, &x, 1, rt, e->loc, &op);
  tl_op_at(L->f, op)->kind = kind;
  tl_op_at(L->f, op)->axis = (int32_t)axis;
  return fv_value(L->f, res);
}

/* sort(t, axis, descending = false): along a constant axis, in the order of
 * lib/sortkey.h (NaN after +inf, -0.0 before +0.0). */
static fval eval_sort(lower *L, fe_expr *e) {
  if (!nargs_ok(L, e, 2, 2)) return fv_err();
  bool desc = false;
  for (int i = 0; i < e->nkw; i++) {
    int64_t v;
    if (strcmp(e->kwnames[i], "descending") != 0) {
      tl_error(L->ctx, e->kwlocs[i], "sort() has no argument named '%s' (only 'axis' and 'descending')", e->kwnames[i]);
      return fv_err();
    }
    fval d = lw_eval(L, e->kwargs[i]);
    if (d.cls == V_ERR) return d;
    if (d.cls != V_SCALAR || !d.is_const || !is_int(dt_of(&d))) {
      tl_error(L->ctx, e->kwargs[i]->loc, "'descending' must be a constant (true or false)");
      return fv_err();
    }
    v = d.i;
    desc = v != 0;
  }
  fval t;
  int64_t axis;
  if (!tile_and_axis(L, e, &t, &axis)) return fv_err();
  int32_t op, x = lw_mat(L, &t, e->loc);
  int32_t res = lw_emit(L, TL_OP_sort, &x, 1, t.ty, e->loc, &op);
  tl_op_at(L->f, op)->kind = desc;
  tl_op_at(L->f, op)->axis = (int32_t)axis;
  return fv_value(L->f, res);
}

/* The constant integers of list argument i of call e (at most TL_MAX_RANK). */
static bool const_list(lower *L, fe_expr *e, int i, const char *what, int64_t *out, int *n) {
  fe_expr *l = e->args[i];
  if (l->kind == EX_ERROR) return false;
  if (l->kind != EX_LIST || l->nargs < 1 || l->nargs > TL_MAX_RANK) {
    tl_error(L->ctx, l->loc, "%s() needs %s as a list of 1 to %d constants, such as [2, 64]", e->name, what, TL_MAX_RANK);
    return false;
  }
  for (int k = 0; k < l->nargs; k++)
    if (!lw_const_int(L, l->args[k], what, &out[k])) return false;
  *n = l->nargs;
  return true;
}

/* reshape(t, [s0, ...]): the same elements in row-major order. */
static fval eval_reshape(lower *L, fe_expr *e) {
  if (!nargs_ok(L, e, 2, 2)) return fv_err();
  fval t = tile_arg(L, e, 0, 0);
  int64_t v[TL_MAX_RANK];
  int n;
  if (t.cls == V_ERR || !const_list(L, e, 1, "the new shape", v, &n)) return fv_err();
  int32_t shape[TL_MAX_RANK];
  for (int k = 0; k < n; k++) {
    if (!lw_tile_extent_ok(L, e->args[1]->args[k]->loc, "tile dimension", v[k])) return fv_err();
    shape[k] = (int32_t)v[k];
  }
  if (!lw_check_tile_shape(L, e->loc, n, shape)) return fv_err();
  tl_type rt = tl_tile_type(dt_of(&t), n, shape);
  if (tl_type_numel(&rt) != tl_type_numel(&t.ty)) {
    tl_error(L->ctx, e->loc, "reshape() of %s to %lld elements: the element count must stay %lld", lw_tystr(L, &t),
             (long long)tl_type_numel(&rt), (long long)tl_type_numel(&t.ty));
    return fv_err();
  }
  if (t.is_const) { t.ty = rt; return t; }
  int32_t x = lw_mat(L, &t, e->loc);
  return fv_value(L->f, lw_emit(L, TL_OP_reshape, &x, 1, rt, e->loc, NULL));
}

/* permute(t, [p0, ...]): result dim d is t's dim p[d]. */
static fval eval_permute(lower *L, fe_expr *e) {
  if (!nargs_ok(L, e, 2, 2)) return fv_err();
  fval t = tile_arg(L, e, 0, 0);
  int64_t v[TL_MAX_RANK];
  int n;
  if (t.cls == V_ERR || !const_list(L, e, 1, "the order of the dimensions", v, &n)) return fv_err();
  bool seen[TL_MAX_RANK] = {false}, ok = n == t.ty.rank, id = true;
  for (int k = 0; ok && k < n; k++) {
    ok = v[k] >= 0 && v[k] < n && !seen[v[k]];
    if (ok) seen[v[k]] = true;
    id = id && v[k] == k;
  }
  if (!ok) {
    tl_error(L->ctx, e->args[1]->loc, "permute() of %s needs a permutation of 0..%d", lw_tystr(L, &t), t.ty.rank - 1);
    return fv_err();
  }
  if (id) return t;
  int32_t shape[TL_MAX_RANK];
  for (int k = 0; k < n; k++) shape[k] = t.ty.shape[v[k]];
  tl_type rt = tl_tile_type(dt_of(&t), n, shape);
  if (t.is_const) { t.ty = rt; return t; }
  int32_t op, x = lw_mat(L, &t, e->loc);
  if (n == 2) return fv_value(L->f, lw_emit(L, TL_OP_trans, &x, 1, rt, e->loc, NULL));
  int32_t res = lw_emit(L, TL_OP_permute, &x, 1, rt, e->loc, &op);
  for (int k = 0; k < n; k++) tl_op_at(L->f, op)->dims[k] = (int32_t)v[k];
  return fv_value(L->f, res);
}

/* cat(a, b, axis): a and b of one element type and shape but along axis. */
static fval eval_cat(lower *L, fe_expr *e) {
  if (!nargs_ok(L, e, 3, 3)) return fv_err();
  fval a = tile_arg(L, e, 0, 0), b = tile_arg(L, e, 1, 0);
  int64_t axis;
  if (!lw_const_int(L, e->args[2], "the axis", &axis) || a.cls == V_ERR || b.cls == V_ERR) return fv_err();
  if (axis < 0) axis += a.ty.rank;
  if (axis < 0 || axis >= a.ty.rank) {
    tl_error(L->ctx, e->args[2]->loc, "axis is out of range for %s", lw_tystr(L, &a));
    return fv_err();
  }
  bool same = a.ty.rank == b.ty.rank && dt_of(&a) == dt_of(&b);
  for (int d = 0; same && d < a.ty.rank; d++) same = d == axis || a.ty.shape[d] == b.ty.shape[d];
  if (!same) {
    tl_error(L->ctx, e->loc, "cat() of %s and %s: the element types and every dimension but axis %lld must agree",
             lw_tystr(L, &a), lw_tystr(L, &b), (long long)axis);
    return fv_err();
  }
  int32_t shape[TL_MAX_RANK];
  memcpy(shape, a.ty.shape, sizeof shape);
  shape[axis] = a.ty.shape[axis] + b.ty.shape[axis];
  if (!lw_check_tile_shape(L, e->loc, a.ty.rank, shape)) return fv_err();
  int32_t ops[2] = {lw_mat(L, &a, e->loc), lw_mat(L, &b, e->loc)}, op;
  int32_t res = lw_emit(L, TL_OP_cat, ops, 2, tl_tile_type(dt_of(&a), a.ty.rank, shape), e->loc, &op);
  tl_op_at(L->f, op)->axis = (int32_t)axis;
  return fv_value(L->f, res);
}

static fval eval_dot(lower *L, fe_expr *e) {
  if (!nargs_ok(L, e, 2, 3)) return fv_err();
  bool tf32 = false;
  for (int i = 0; i < e->nkw; i++) {
    if (strcmp(e->kwnames[i], "precision") != 0) {
      tl_error(L->ctx, e->kwlocs[i], "dot() has no argument named '%s' (only 'precision')", e->kwnames[i]);
      if (!strcmp(e->kwnames[i], "acc") || !strcmp(e->kwnames[i], "out_dtype") || !strcmp(e->kwnames[i], "input_precision"))
        tl_note(L->ctx, e->kwlocs[i], "%s",
                e->kwnames[i][0] == 'a' ? "the accumulator is dot's third argument: acc = dot(a, b, acc)"
                : e->kwnames[i][0] == 'o' ? "dot's result is f32 for float operands (i32 for 8-bit integers): cast<T>(...) it"
                                          : "Triton's input_precision = \"tf32\" is precision = \"tf32\" here");
      return fv_err();
    }
    fe_expr *v = e->kwargs[i];
    if (v->kind != EX_STRING || strcmp(v->name, "tf32") != 0) {
      tl_error(L->ctx, v->loc, "dot() precision must be \"tf32\" (the only one there is)");
      return fv_err();
    }
    tf32 = true;
  }
  fval a = tile_arg(L, e, 0, 2), b = tile_arg(L, e, 1, 2);
  fval acc = e->nargs == 3 ? tile_arg(L, e, 2, 2) : fv_void();
  if (a.cls == V_ERR || b.cls == V_ERR || acc.cls == V_ERR) return fv_err();
  tl_dtype da = dt_of(&a), db = dt_of(&b);
  bool fp8a = tl_dtype_is_fp8(da), fp8b = tl_dtype_is_fp8(db);
  if (da == TL_F32 && db == TL_F32 && !tf32) {
    tl_error(L->ctx, e->loc, "dot() of f32 tiles needs precision = \"tf32\" (tensor cores read f32 operands as tf32, "
             "10 mantissa bits); or cast<bf16>() the operands");
    return fv_err();
  }
  if (tf32 && (da != TL_F32 || db != TL_F32)) {
    tl_error(L->ctx, e->loc, "dot() precision = \"tf32\" takes f32 operands, found %s and %s", lw_tystr(L, &a), lw_tystr(L, &b));
    return fv_err();
  }
  bool ok = (da == db && (da == TL_F16 || da == TL_BF16 || da == TL_F32 || da == TL_I8)) || (fp8a && fp8b);
  if (!ok) {
    tl_error(L->ctx, e->loc, "dot() operands must be of one type (f16, bf16, i8, or f32 with precision = \"tf32\"; "
             "f8e4m3 and f8e5m2 may be mixed), found %s and %s", lw_tystr(L, &a), lw_tystr(L, &b));
    return fv_err();
  }
  int32_t M = a.ty.shape[0], K = a.ty.shape[1], N = b.ty.shape[1];
  if (b.ty.shape[0] != K) {
    tl_error(L->ctx, e->loc, "dot() of [%d, %d] and [%d, %d]: the inner dimensions differ", M, K, b.ty.shape[0], N);
    if (N == K) /* b loaded [N, K], as nn.Linear's weight or attention's K */
      tl_note(L->ctx, e->args[1]->loc, "dot(a, trans(b)) multiplies by b transposed (b [N, K] gives a [K, N] operand)");
    return fv_err();
  }
  int32_t shape[2] = {M, N};
  tl_dtype accdt = tl_dot_acc_dtype(da);
  tl_type rt = tl_tile_type(accdt, 2, shape);
  if (!lw_check_tile_shape(L, e->loc, 2, shape)) return fv_err();
  if (acc.cls == V_VOID) {
    acc = accdt == TL_I32 ? fv_int(TL_I32, 0, false) : fv_float(TL_F32, 0.0, false);
    acc.cls = V_TILE;
    acc.ty = rt;
  } else if (!tl_type_eq(&acc.ty, &rt)) {
    tl_error(L->ctx, e->args[2]->loc, "dot() accumulator must be tile<%dx%dx%s>, not %s", M, N, tl_dtype_name(accdt),
             lw_tystr(L, &acc));
    return fv_err();
  }
  int32_t ops[3] = {lw_mat(L, &a, e->loc), lw_mat(L, &b, e->loc), lw_mat(L, &acc, e->loc)}, op;
  int32_t res = lw_emit(L, TL_OP_dot, ops, 3, rt, e->loc, &op);
  tl_op_at(L->f, op)->kind = tf32 ? TL_DOT_TF32 : TL_DOT_EXACT;
  return fv_value(L->f, res);
}

/* rand / randn / randint(seed, offsets): Philox-4x32-10 of counter
 * (offset, 0, 0, 0) and key (seed low, seed high 32 bits) (lib/philox.h). */
static fval eval_rand(lower *L, fe_expr *e, int kind) {
  if (!nargs_ok(L, e, 2, 2)) return fv_err();
  fval seed = value_arg(L, e, 0), off = value_arg(L, e, 1);
  if (seed.cls == V_ERR || off.cls == V_ERR) return fv_err();
  if (seed.cls != V_SCALAR || !is_int(dt_of(&seed)) || dt_of(&seed) == TL_I1) {
    tl_error(L->ctx, e->args[0]->loc, "the seed of %s() must be an integer scalar, not %s", e->name, lw_tystr(L, &seed));
    return fv_err();
  }
  if (!is_int(dt_of(&off)) || dt_of(&off) == TL_I1) {
    tl_error(L->ctx, e->args[1]->loc, "the offsets of %s() must be integers, not %s", e->name, lw_tystr(L, &off));
    return fv_err();
  }
  seed = lw_convert(L, seed, TL_I64, e->loc);
  off = lw_convert(L, off, TL_I32, e->loc);
  int32_t ops[2] = {lw_mat(L, &seed, e->loc), lw_mat(L, &off, e->loc)};
  tl_type rt = tl_val(L->f, ops[1])->type;
  rt.dtype = (uint8_t)(kind == TL_RAND_INT ? TL_I32 : TL_F32);
  int32_t op;
  int32_t res = lw_emit(L, TL_OP_rand, ops, 2, rt, e->loc, &op);
  tl_op_at(L->f, op)->kind = kind;
  return fv_value(L->f, res);
}

/* What a Triton user reaches for under Triton's name (tl.NAME), and how it is written here: the note
 * on an unknown function (docs/first_use.md).  NULL for a name not in the table. */
static const char *triton_hint(const char *name) {
  static const char *const hints[][2] = {
      {"arange", "Triton's tl.arange(0, N) is iota<i32>[N] here (s + iota<i32>[N] for tl.arange(s, s + N))"},
      {"sum", "Triton's tl.sum(x, axis) is reduce_sum(x, axis) here (also reduce_max, reduce_min)"},
      {"maximum", "Triton's tl.maximum(a, b) is max(a, b) here (elementwise; reduce_max(x, axis) reduces)"},
      {"minimum", "Triton's tl.minimum(a, b) is min(a, b) here (elementwise; reduce_min(x, axis) reduces)"},
      {"clamp", "Triton's tl.clamp(x, lo, hi) is min(max(x, lo), hi) here"},
      {"zeros_like", "zeros<T>[s0, ...] makes a tile of zeros (the shape is written out)"},
      {"full_like", "full<T>[s0, ...](v) makes a filled tile (the shape is written out)"},
      {"expand_dims", "t[:, None] / t[None, :] insert a dimension of size 1 here"},
      {"broadcast_to", "broadcasting is implicit here (numpy rules; t[:, None] inserts a dimension)"},
      {"view", "Triton's tl.view / tl.reshape is reshape(t, [s0, ...]) here"},
      {"transpose", "trans(t) transposes a 2-D tile here (permute(t, [...]) in general)"},
      {"matmul", "dot(a, b[, acc]) is the matrix product here"},
      {"pow", "there is no pow here: exp2(y * log2(x)) for x > 0, or x * x for a square"},
      {"erf", "there is no erf here: GELU's tanh form is 0.5 * x * (1.0 + tanh(0.7978845608 * (x + 0.044715 * x * x * x)))"},
      {"topk", "there is no topk here: sort(t, axis, descending = true) and a slice t[0 : K] of the result"},
      {"argsort", "there is no argsort here: sort 64-bit keys carrying the index in their low word "
                  "(docs/language.md 8.4, examples/topk_sample.tile)"},
      {"histogram", "a histogram is atomic_add(H[bins], 1) here"},
      {"multiple_of", "there are no alignment hints here: the compiler derives them (tilec --explain shows them)"},
      {"max_contiguous", "there are no alignment hints here: the compiler derives them (tilec --explain shows them)"},
      {"debug_barrier", "there are no barriers to write here: the compiler places them"},
      {"device_print", "there is no printing in a kernel: run it in the interpreter (tilec run --interp, tilec.interpret)"},
      {"print", "there is no printing in a kernel: store what you want to see into an output tensor, and run it in the "
                "interpreter (tilec run --interp, tilec.interpret)"},
      {"static_print", "there is no printing in a kernel: static_assert(cond, \"msg\") checks constants"},
      {"to", "x.to(T) is cast<T>(x) here"},
      {"float", "cast<f32>(x) converts here"},
      {"int", "cast<i32>(x) converts here"},
      {"mean", "a mean is reduce_sum(x, axis) / n here"},
      /* (builtins here, Triton's reductions there: the note on max(x), max(x, axis = 0)) */
      {"max", "max(a, b) is elementwise here; Triton's tl.max(x, axis) is reduce_max(x, axis) (argmax(x, axis) its index)"},
      {"min", "min(a, b) is elementwise here; Triton's tl.min(x, axis) is reduce_min(x, axis) (argmin(x, axis) its index)"},
  };
  for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
    if (!strcmp(hints[i][0], name)) return hints[i][1];
  return NULL;
}

/* `axis = A` (Triton's spelling, tl.sum(x, axis=0)) for the builtins that take an axis: the same as A
 * in the axis's place (the second argument; cat's third), when the arguments before it are given
 * and it is not given by position too (that case keeps the keyword for lw_eval_call's error); also
 * program_id / num_programs (axis = 0).  The axis's
 * position, -1 for a builtin without an axis. */
static int axis_keyword(lower *L, fe_expr *e) {
  static const char *const one[] = {"reduce_sum", "reduce_max", "reduce_min", "argmax", "argmin", "cumsum",
                                    "cummax", "sort", NULL};
  int pos = !strcmp(e->name, "cat") ? 2 : !strcmp(e->name, "program_id") || !strcmp(e->name, "num_programs") ? 0 : -1;
  for (int i = 0; one[i] && pos < 0; i++)
    if (!strcmp(e->name, one[i])) pos = 1;
  if (pos < 0 || e->nargs != pos) return pos;
  for (int k = 0; k < e->nkw; k++) {
    if (strcmp(e->kwnames[k], "axis") != 0) continue;
    fe_expr **args = tl_alloc(&L->ctx->arena, sizeof *args * (size_t)(pos + 1));
    for (int i = 0; i < pos; i++) args[i] = e->args[i];
    args[pos] = e->kwargs[k];
    e->args = args;
    e->nargs = pos + 1;
    for (int j = k + 1; j < e->nkw; j++) {
      e->kwnames[j - 1] = e->kwnames[j];
      e->kwargs[j - 1] = e->kwargs[j];
      e->kwlocs[j - 1] = e->kwlocs[j];
    }
    e->nkw--;
    return pos;
  }
  return pos;
}

fval lw_eval_call(lower *L, fe_expr *e) {
  const char *n = e->name;
  bool typed = !strcmp(n, "cast") || !strcmp(n, "zeros") || !strcmp(n, "full") || !strcmp(n, "iota") ||
               !strcmp(n, "bitcast");
  if (typed && !e->has_targ) {
    tl_error(L->ctx, e->loc, "%s needs an element type, such as %s<f32>", n, n);
    return fv_err();
  }
  if (e->has_targ && e->targ == TL_VOID) return fv_err(); /* parse error already reported */
  int axis_pos = axis_keyword(L, e);
  for (int k = 0; k < e->nkw && axis_pos >= 0; k++) {
    if (!strcmp(e->kwnames[k], "axis"))
      tl_error(L->ctx, e->kwlocs[k], "%s(): 'axis' is given twice (argument %d is the axis)", n, axis_pos + 1);
    else if (strcmp(n, "sort") != 0)
      tl_error(L->ctx, e->kwlocs[k], "%s() has no argument named '%s' (only 'axis')", n, e->kwnames[k]);
    else
      continue;
    return fv_err();
  }
  if (e->nkw && strcmp(n, "load") != 0 && strcmp(n, "sort") != 0 && strcmp(n, "dot") != 0) {
    tl_error(L->ctx, e->kwlocs[0], "%s() takes no keyword arguments", n);
    /* (Triton's tl.max(x, axis = 0) / tl.sum(x, axis = 0): the reduction's name here) */
    const char *hint = lw_lookup(L, n) < 0 ? triton_hint(n) : NULL;
    if (hint) tl_note(L->ctx, e->loc, "%s", hint);
    return fv_err();
  }
  if (L->in_grid && (!strcmp(n, "program_id") || !strcmp(n, "num_programs") || !strcmp(n, "load") ||
                     !strcmp(n, "store") || !strcmp(n, "static_assert") || !strncmp(n, "atomic_", 7))) {
    if (L->in_require)
      tl_error(L->ctx, e->loc, "%s() cannot be used in a require() condition: the launcher evaluates it on the host, "
               "before the launch", n);
    else
      tl_error(L->ctx, e->loc, "%s() cannot be used in the grid clause", n);
    return fv_err();
  }
  if (!strcmp(n, "load")) return eval_load(L, e);
  if (!strcmp(n, "store")) return eval_store_like(L, e, TL_OP_store, 0);
  if (!strcmp(n, "atomic_add")) return eval_store_like(L, e, TL_OP_atomic, TL_ATOMIC_ADD);
  if (!strcmp(n, "atomic_max")) return eval_store_like(L, e, TL_OP_atomic, TL_ATOMIC_MAX);
  if (!strcmp(n, "atomic_min")) return eval_store_like(L, e, TL_OP_atomic, TL_ATOMIC_MIN);
  if (!strcmp(n, "atomic_fetch_add")) return eval_store_like(L, e, TL_OP_atomic, TL_ATOMIC_FETCH_ADD);
  if (!strcmp(n, "rand")) return eval_rand(L, e, TL_RAND_UNIFORM);
  if (!strcmp(n, "randn")) return eval_rand(L, e, TL_RAND_NORMAL);
  if (!strcmp(n, "randint")) return eval_rand(L, e, TL_RAND_INT);
  if (!strcmp(n, "static_assert") || !strcmp(n, "require")) {
    tl_error(L->ctx, e->loc, "%s() is a statement, not a value", n);
    return fv_err();
  }
  if (!strcmp(n, "min") || !strcmp(n, "max")) {
    if (!nargs_ok(L, e, 2, 2)) {
      if (e->nargs == 1) tl_note(L->ctx, e->loc, "%s", triton_hint(n));
      return fv_err();
    }
    fval a = value_arg(L, e, 0), b = value_arg(L, e, 1);
    return lw_binop(L, n[1] == 'i' ? BO_MIN : BO_MAX, a, b, e->loc);
  }
  static const struct { const char *name; tl_opcode opc; } math[] = {
    {"abs", TL_OP_abs}, {"exp", TL_OP_exp}, {"exp2", TL_OP_exp2}, {"log", TL_OP_log}, {"log2", TL_OP_log2},
    {"sqrt", TL_OP_sqrt}, {"rsqrt", TL_OP_rsqrt}, {"sin", TL_OP_sin}, {"cos", TL_OP_cos}, {"tanh", TL_OP_tanh},
    {"sigmoid", TL_OP_sigmoid}, {"floor", TL_OP_floor}, {"ceil", TL_OP_ceil}};
  for (size_t i = 0; i < sizeof math / sizeof math[0]; i++)
    if (!strcmp(n, math[i].name)) return eval_math(L, e, math[i].opc);
  if (!strcmp(n, "where")) {
    if (!nargs_ok(L, e, 3, 3)) return fv_err();
    fval c = value_arg(L, e, 0), a = value_arg(L, e, 1), b = value_arg(L, e, 2);
    if (c.cls == V_ERR || a.cls == V_ERR || b.cls == V_ERR) return fv_err();
    if (dt_of(&c) != TL_I1) {
      tl_error(L->ctx, e->args[0]->loc, "the condition of where() must be i1, not %s", lw_tystr(L, &c));
      return fv_err();
    }
    bool weak;
    tl_dtype d = lw_unify(L, "where()", &a, &b, e->loc, &weak);
    if (d == TL_VOID) return fv_err();
    int r2;
    int32_t s2[TL_MAX_RANK];
    if (!bcast3(&c, &a, &b, &r2, s2)) {
      tl_error(L->ctx, e->loc, "the shapes of the where() arguments do not broadcast: the condition is %s, the values %s "
               "and %s", lw_tystr(L, &c), lw_tystr(L, &a), lw_tystr(L, &b));
      return fv_err();
    }
    if (c.is_const && a.is_const && b.is_const) {
      /* the chosen operand, in the broadcast shape of all three (a constant
       * condition does not shrink the result: where(c[32,4], x[32,4], y[4])
       * is [32,4] whichever it picks) */
      fval r = lw_convert(L, c.i ? a : b, d, e->loc);
      r.weak = weak;
      return r2 ? lw_to_shape(L, r, r2, s2, e->loc) : r;
    }
    c = lw_to_shape(L, c, r2, s2, e->loc);
    a = lw_to_shape(L, lw_convert(L, a, d, e->loc), r2, s2, e->loc);
    b = lw_to_shape(L, lw_convert(L, b, d, e->loc), r2, s2, e->loc);
    int32_t ops[3] = {lw_mat(L, &c, e->loc), lw_mat(L, &a, e->loc), lw_mat(L, &b, e->loc)};
    return fv_value(L->f, lw_emit(L, TL_OP_select, ops, 3, r2 ? tl_tile_type(d, r2, s2) : tl_scalar_type(d), e->loc, NULL));
  }
  if (!strcmp(n, "fma")) return eval_fma(L, e);
  if (!strcmp(n, "cast")) {
    if (!nargs_ok(L, e, 1, 1)) return fv_err();
    fval a = value_arg(L, e, 0);
    if (a.cls == V_ERR) return a;
    return lw_convert(L, a, e->targ, e->loc);
  }
  if (!strcmp(n, "bitcast")) { /* the same bits as another type of the same width */
    if (!nargs_ok(L, e, 1, 1)) return fv_err();
    fval a = value_arg(L, e, 0);
    if (a.cls == V_ERR) return a;
    if (a.weak) a = lw_convert(L, a, is_flt(dt_of(&a)) ? TL_F32 : TL_I32, e->loc);
    tl_dtype from = dt_of(&a), to = e->targ;
    if (from == TL_I1 || to == TL_I1 || tl_dtype_bits(from) != tl_dtype_bits(to)) {
      tl_error(L->ctx, e->loc, "bitcast<%s>() of %s: the widths differ (or one is i1); use cast<T>() to convert values",
               tl_dtype_name(to), lw_tystr(L, &a));
      return fv_err();
    }
    if (from == to) return a;
    tl_type rt = a.ty;
    rt.dtype = (uint8_t)to;
    int32_t x = lw_mat(L, &a, e->loc);
    return fv_value(L->f, lw_emit(L, TL_OP_bitcast, &x, 1, rt, e->loc, NULL));
  }
  if (!strcmp(n, "zeros") || !strcmp(n, "full")) {
    bool full = n[0] == 'f';
    int rank;
    int32_t shape[TL_MAX_RANK];
    if (!eval_shape(L, e, &rank, shape)) return fv_err();
    if (!full && e->nargs) {
      tl_error(L->ctx, e->loc, "zeros<T>[...] takes no arguments");
      return fv_err();
    }
    fval v = fv_int(e->targ, 0, false);
    if (full) {
      if (!nargs_ok(L, e, 1, 1)) return fv_err();
      v = value_arg(L, e, 0);
      if (v.cls == V_ERR) return v;
      if (v.cls != V_SCALAR) {
        tl_error(L->ctx, e->args[0]->loc, "the fill value of full() must be a scalar, not %s", lw_tystr(L, &v));
        return fv_err();
      }
      v = lw_convert(L, v, e->targ, e->loc);
    }
    return lw_to_shape(L, v, rank, shape, e->loc);
  }
  if (!strcmp(n, "iota")) {
    int rank;
    int32_t shape[TL_MAX_RANK];
    if (!eval_shape(L, e, &rank, shape)) return fv_err();
    if (rank != 1) {
      tl_error(L->ctx, e->loc, "iota<T>[n] takes one dimension, found %d", rank);
      return fv_err();
    }
    if (e->nargs) {
      tl_error(L->ctx, e->loc, "iota<T>[n] takes no arguments");
      return fv_err();
    }
    if (e->targ == TL_I1) {
      tl_error(L->ctx, e->targ_loc, "iota<i1> is not allowed");
      return fv_err();
    }
    fval v = fv_value(L->f, lw_emit(L, TL_OP_iota, NULL, 0, tl_tile_type(TL_I32, 1, shape), e->loc, NULL));
    return lw_convert(L, v, e->targ, e->loc);
  }
  if (!strcmp(n, "dot")) return eval_dot(L, e);
  if (!strcmp(n, "trans")) {
    if (!nargs_ok(L, e, 1, 1)) return fv_err();
    fval t = tile_arg(L, e, 0, 2);
    if (t.cls == V_ERR) return t;
    int32_t shape[2] = {t.ty.shape[1], t.ty.shape[0]};
    int32_t x = lw_mat(L, &t, e->loc);
    return fv_value(L->f, lw_emit(L, TL_OP_trans, &x, 1, tl_tile_type(dt_of(&t), 2, shape), e->loc, NULL));
  }
  if (!strcmp(n, "reduce_sum")) return eval_reduce(L, e, TL_RED_SUM);
  if (!strcmp(n, "reduce_max")) return eval_reduce(L, e, TL_RED_MAX);
  if (!strcmp(n, "reduce_min")) return eval_reduce(L, e, TL_RED_MIN);
  if (!strcmp(n, "cat")) return eval_cat(L, e);
  if (!strcmp(n, "reshape")) return eval_reshape(L, e);
  if (!strcmp(n, "permute")) return eval_permute(L, e);
  if (!strcmp(n, "sort")) return eval_sort(L, e);
  if (!strcmp(n, "cumsum")) return eval_scan(L, e, TL_OP_scan, TL_SCAN_SUM);
  if (!strcmp(n, "cummax")) return eval_scan(L, e, TL_OP_scan, TL_SCAN_MAX);
  if (!strcmp(n, "argmax")) return eval_scan(L, e, TL_OP_argreduce, TL_ARG_MAX);
  if (!strcmp(n, "argmin")) return eval_scan(L, e, TL_OP_argreduce, TL_ARG_MIN);
  if (!strcmp(n, "program_id") || !strcmp(n, "num_programs")) {
    int64_t axis;
    if (!nargs_ok(L, e, 1, 1) || !lw_const_int(L, e->args[0], "the axis", &axis)) return fv_err();
    if (axis < 0 || axis > 2) {
      tl_error(L->ctx, e->args[0]->loc, "%s() axis must be 0, 1 or 2, not %lld", n, (long long)axis);
      return fv_err();
    }
    int32_t op;
    int32_t res = lw_emit(L, n[0] == 'p' ? TL_OP_program_id : TL_OP_num_programs, NULL, 0, tl_scalar_type(TL_I32), e->loc, &op);
    tl_op_at(L->f, op)->axis = (int32_t)axis;
    return fv_value(L->f, res);
  }
  if (!strcmp(n, "cdiv")) {
    if (!nargs_ok(L, e, 2, 2)) return fv_err();
    fval a = value_arg(L, e, 0), b = value_arg(L, e, 1);
    if (a.cls == V_ERR || b.cls == V_ERR) return fv_err();
    if (a.cls != V_SCALAR || b.cls != V_SCALAR || !is_int(dt_of(&a)) || !is_int(dt_of(&b))) {
      tl_error(L->ctx, e->loc, "cdiv() takes integer scalars");
      return fv_err();
    }
    if (b.is_const && b.i <= 0) {
      tl_error(L->ctx, e->args[1]->loc, "cdiv() divisor must be positive");
      return fv_err();
    }
    /* (a + b - 1) / b */
    fval s = lw_binop(L, BO_ADD, a, b, e->loc);
    s = lw_binop(L, BO_SUB, s, fv_int(TL_I32, 1, true), e->loc);
    return lw_binop(L, BO_DIV, s, b, e->loc);
  }
  if (lw_lookup(L, n) >= 0) {
    tl_error(L->ctx, e->loc, "'%s' is not a function", n);
  } else {
    tl_error(L->ctx, e->loc, "unknown function '%s'", n);
    const char *hint = triton_hint(n), *near = hint ? NULL : lw_did_you_mean(L, n, true);
    if (hint) tl_note(L->ctx, e->loc, "%s", hint);
    else if (near) tl_note(L->ctx, e->loc, "did you mean '%s'?", near);
  }
  return fv_err();
}
