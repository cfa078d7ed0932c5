/* lower_views.c: a view of a tensor parameter, T[i, a : a + C, :] or a gather T[idx, :] (the
 * first argument of load(), store() and the atomics), for lower.c's walk.
 * requires: the kernel's names bound; keeps: a view's starts are i32 values of the current region
 * (a gather's indices a tile of the view's shape), its lengths compile-time constants (a range's
 * hi - lo proved constant by an affine form), which tile constant names a range's length is noted
 * (tl_param.view_const); reports: the index count, None, a non-constant range length, ':' over a
 * dimension known only at run time, a length that is not a power of two or exceeds the limit. */
#include "lower_internal.h"

#include <stdio.h>
#include <string.h>
/* Affine form c + sum coef * atom, atoms being subexpressions compared by
 * structure; used to prove that hi - lo of a range is a constant. */
typedef struct affine {
  int64_t c;
  int n;
  const fe_expr *atom[8];
  int64_t coef[8];
} affine;

static bool ast_equal(const fe_expr *a, const fe_expr *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case EX_INT: case EX_BOOL: return a->ival == b->ival;
  case EX_FLOAT: return a->fval == b->fval;
  case EX_NAME: return !strcmp(a->name, b->name);
  case EX_UNARY: return a->op == b->op && ast_equal(a->a, b->a);
  case EX_BINARY: return a->op == b->op && ast_equal(a->a, b->a) && ast_equal(a->b, b->b);
  case EX_TERNARY: return ast_equal(a->a, b->a) && ast_equal(a->b, b->b) && ast_equal(a->c, b->c);
  case EX_CALL:
    if (strcmp(a->name, b->name) || a->nargs != b->nargs || a->nkw || b->nkw || a->has_shape || b->has_shape ||
        a->has_targ != b->has_targ || a->targ != b->targ)
      return false;
    for (int i = 0; i < a->nargs; i++)
      if (!ast_equal(a->args[i], b->args[i])) return false;
    return strcmp(a->name, "load") != 0; /* two loads may differ */
  default: return false;
  }
}

/* A compile-time integer of e without emitting code (names of constants,
 * literals, + - * / % and unary minus). */
static bool peek_const(lower *L, const fe_expr *e, int64_t *v) {
  switch (e->kind) {
  case EX_INT: *v = e->ival; return true;
  case EX_NAME: {
    int i = lw_lookup(L, e->name);
    if (i < 0) return false;
    const fval *b = &L->env.data[i].v;
    if (L->env.data[i].kind == B_SYM || !b->is_const || b->cls != V_SCALAR || !is_int(dt_of(b))) return false;
    *v = b->i;
    return true;
  }
  case EX_UNARY: {
    int64_t a;
    if (e->op != TK_MINUS || !peek_const(L, e->a, &a) || a == INT64_MIN) return false;
    *v = -a;
    return true;
  }
  case EX_BINARY: {
    int64_t a, b;
    if (!peek_const(L, e->a, &a) || !peek_const(L, e->b, &b)) return false;
    switch (e->op) {
    case TK_PLUS: return !__builtin_add_overflow(a, b, v);
    case TK_MINUS: return !__builtin_sub_overflow(a, b, v);
    case TK_STAR: return !__builtin_mul_overflow(a, b, v);
    case TK_SLASH: if (b == 0 || (a == INT64_MIN && b == -1)) return false; *v = a / b; return true;
    case TK_PERCENT: if (b == 0 || (a == INT64_MIN && b == -1)) return false; *v = a % b; return true;
    default: return false;
    }
  }
  default: return false;
  }
}

static bool affine_add_atom(affine *A, const fe_expr *e, int64_t scale) {
  for (int i = 0; i < A->n; i++)
    if (ast_equal(A->atom[i], e)) return !__builtin_add_overflow(A->coef[i], scale, &A->coef[i]);
  if (A->n == 8) return false;
  A->atom[A->n] = e;
  A->coef[A->n++] = scale;
  return true;
}

static bool affine_of(lower *L, const fe_expr *e, int64_t scale, affine *A) {
  int64_t k, t;
  if (peek_const(L, e, &k)) return !__builtin_mul_overflow(k, scale, &t) && !__builtin_add_overflow(A->c, t, &A->c);
  if (e->kind == EX_UNARY && e->op == TK_MINUS) return scale != INT64_MIN && affine_of(L, e->a, -scale, A);
  if (e->kind == EX_BINARY && (e->op == TK_PLUS || e->op == TK_MINUS))
    return affine_of(L, e->a, scale, A) && scale != INT64_MIN &&
           affine_of(L, e->b, e->op == TK_PLUS ? scale : -scale, A);
  if (e->kind == EX_BINARY && e->op == TK_STAR) {
    if (peek_const(L, e->a, &k)) return !__builtin_mul_overflow(k, scale, &t) && affine_of(L, e->b, t, A);
    if (peek_const(L, e->b, &k)) return !__builtin_mul_overflow(k, scale, &t) && affine_of(L, e->a, t, A);
  }
  return affine_add_atom(A, e, scale);
}

/* e names a value bound to an error (an undefined name, reported where it was first met). */
static bool names_an_error(lower *L, const fe_expr *e) {
  if (!e) return false;
  if (e->kind == EX_NAME) {
    int b = lw_lookup(L, e->name);
    /* (only a value binding holds an fval: a shape symbol's, a constant's or a tensor's v is zero, V_ERR) */
    return b >= 0 && L->env.data[b].kind == B_VALUE && L->env.data[b].v.cls == V_ERR;
  }
  if (names_an_error(L, e->a) || names_an_error(L, e->b) || names_an_error(L, e->c)) return true;
  for (int i = 0; i < e->nargs; i++)
    if (names_an_error(L, e->args[i])) return true;
  return false;
}

/* Range view d of tensor parameter `param` of length len, its end `hi`: note which tile constant
 * names the length (tl_param.view_const: `x : x + C` or `x : C + x` with C a tile constant of
 * value len; any other view of that dimension makes it -1). */
static void note_view_const(lower *L, int param, int d, const fe_expr *hi, int64_t len) {
  int16_t found = 0;
  if (hi->kind == EX_BINARY && hi->op == TK_PLUS) {
    const fe_expr *side[2] = {hi->a, hi->b};
    for (int s = 0; s < 2 && !found; s++) {
      if (side[s]->kind != EX_NAME) continue;
      int b = lw_lookup(L, side[s]->name);
      if (b < 0 || L->env.data[b].kind != B_CONST) continue;
      for (int i = 0; i < L->f->consts.len && i < INT16_MAX - 1; i++)
        if (!strcmp(L->f->consts.data[i].name, side[s]->name) && L->f->consts.data[i].value == len)
          found = (int16_t)(i + 1);
    }
  }
  int16_t *vc = &L->f->params.data[param].view_const[d];
  if (*vc == 0) *vc = found ? found : -1;
  else if (*vc != found) *vc = -1;
}

bool lw_lower_view(lower *L, fe_expr *e, const char *fn, view *out) {
  memset(out, 0, sizeof *out);
  if (e->kind == EX_ERROR) return false;
  fe_expr *base = e->kind == EX_INDEX ? e->a : e;
  fval t = lw_eval(L, base);
  if (t.cls == V_ERR) return false;
  if (t.cls != V_TENSOR || e->kind != EX_INDEX) {
    if (t.cls == V_TENSOR)
      tl_error(L->ctx, e->loc, "%s() needs a view of tensor '%s', such as %s[i0 : i0 + B]", fn, base->name, base->name);
    else
      tl_error(L->ctx, e->loc, "the first argument of %s() must be a view of a tensor parameter", fn);
    return false;
  }
  fe_param *p = &L->k->params.data[t.param];
  out->param = t.param;
  out->tensor = t.id;
  out->rank = p->rank;
  out->dtype = p->dtype;
  out->name = p->name;
  if (e->nitems != p->rank) {
    tl_error(L->ctx, e->loc, "view of '%s' has %d indices; the tensor has rank %d", p->name, e->nitems, p->rank);
    if (e->nitems < p->rank)
      tl_note(L->ctx, e->loc, "a view takes one entry a dimension, each an index, a range a : a + C or an integer tile "
              "of rank 1 (a gather): Triton's flat offsets rows[:, None] * N + cols[None, :] are %s[r0 : r0 + BM, "
              "c0 : c0 + BN] here, the strides the tensor's", p->name);
    return false;
  }
  bool ok = true;
  for (int d = 0; d < e->nitems; d++) {
    fe_item *it = &e->items[d];
    fval start;
    switch (it->kind) {
    case IT_NEWAXIS:
      tl_error(L->ctx, it->loc, "None cannot be used in a view of a tensor");
      ok = false;
      continue;
    case IT_EXPR: {
      fval x = lw_eval(L, it->lo);
      if (x.cls == V_TILE) { /* a gather / scatter index: one tile dim, an index per row */
        if (x.ty.rank != 1 || !is_int(dt_of(&x)) || dt_of(&x) == TL_I1) {
          tl_error(L->ctx, it->lo->loc, "a tile in a view must be a rank-1 integer tile of indices (a gather), not %s",
                   lw_tystr(L, &x));
          ok = false;
          continue;
        }
        start = lw_convert(L, x, TL_I32, it->lo->loc);
        out->dims[d] = x.ty.shape[0];
        out->gather[d] = true;
        break;
      }
      start = lw_to_index(L, x, "a view index", it->lo->loc);
      out->dims[d] = 0;
      break;
    }
    case IT_ALL: {
      const tl_dimspec *ds = &L->f->params.data[t.param].dims[d];
      if (!ds->is_const) {
        tl_error(L->ctx, it->loc, "':' needs a dimension of constant size; dimension %d of '%s' ('%s') is known only at run time; write a range",
                 d, p->name, p->dims[d].name ? p->dims[d].name : "?");
        ok = false;
        continue;
      }
      char what[96];
      snprintf(what, sizeof what, "':' over dimension %d of '%s': length", d, p->name);
      if (!lw_tile_extent_ok(L, it->loc, what, ds->value)) {
        ok = false;
        continue;
      }
      start = fv_int(TL_I32, 0, false);
      out->dims[d] = (int32_t)ds->value;
      break;
    }
    case IT_RANGE: {
      affine A;
      memset(&A, 0, sizeof A);
      bool lin = affine_of(L, it->hi, 1, &A) && affine_of(L, it->lo, -1, &A);
      for (int i = 0; lin && i < A.n; i++)
        if (A.coef[i] != 0) lin = false;
      start = lw_to_index(L, lw_eval(L, it->lo), "a range start", it->lo->loc);
      if (!lin) {
        /* (a bound that names an undefined name has had its error: tiles() left out, `B` undefined) */
        if (!names_an_error(L, it->lo) && !names_an_error(L, it->hi))
          tl_error(L->ctx, it->loc, "the length of this range is not a compile-time constant; write it as a : a + C");
        ok = false;
        continue;
      }
      if (!lw_tile_extent_ok(L, it->loc, "range length", A.c)) {
        ok = false;
        continue;
      }
      note_view_const(L, t.param, d, it->hi, A.c);
      out->dims[d] = (int32_t)A.c;
      break;
    }
    }
    if (start.cls == V_ERR) {
      ok = false;
      continue;
    }
    out->start[d] = lw_mat(L, &start, it->loc);
    if (out->dims[d]) out->tshape[out->trank++] = out->dims[d];
  }
  if (!ok) return false;
  if (out->trank == 0) return true; /* every entry an index: one element, a scalar */
  if (!lw_check_tile_shape(L, e->loc, out->trank, out->tshape)) return false;
  /* A gather index of tile dim tpos becomes a tile of the view's shape (the
   * index of every element along that tensor dim): expand it around tpos and
   * broadcast; layout assignment makes that free where it can. */
  for (int d = 0, tpos = 0; d < out->rank; d++) {
    if (!out->dims[d]) continue;
    if (out->gather[d]) {
      fval x = fv_value(L->f, out->start[d]);
      for (int j = 0; j < out->trank; j++) {
        if (j == tpos) continue;
        int32_t shape[TL_MAX_RANK], r = x.ty.rank;
        for (int i = 0, s = 0; i <= r; i++) shape[i] = i == j ? 1 : x.ty.shape[s++];
        int32_t op, a = x.id;
        int32_t res = lw_emit(L, TL_OP_expand_dims, &a, 1, tl_tile_type(TL_I32, r + 1, shape), e->loc, &op);
        tl_op_at(L->f, op)->axis = j;
        x = fv_value(L->f, res);
      }
      out->start[d] = lw_to_shape(L, x, out->trank, out->tshape, e->loc).id;
    }
    tpos++;
  }
  return true;
}
