/* lower.c: checked AST -> tile IR, in one walk (sema and lowering together).
 * requires: a parsed program; keeps: every value the IR gets is well typed
 * (elementwise operands of one type: broadcasting, promotion and scalar
 * conversion are explicit splat/expand_dims/broadcast/cast ops), constants
 * are folded and materialized where they are used, shape symbols become `dim`
 * ops at the top of the region that uses them; reports: names, types, shapes,
 * non-constant view lengths and tile shapes, limits, static_assert.  An
 * expression in error evaluates to an error value that is silent from then
 * on, so one mistake gives one diagnostic.  Views of tensors are lowered in
 * lower_views.c, builtin calls in lower_builtins.c; lower_internal.h is what
 * the three share. */
#include "lower_internal.h"
#include "fpconv.h"
#include "mma_tiling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- values during checking ---------------------------------------------- */
const char *lw_tystr(lower *L, const fval *v) {
  if (v->weak) return is_flt(dt_of(v)) ? "a float literal" : "an integer literal";
  char buf[96];
  tl_type_str(&v->ty, buf, sizeof buf);
  return tl_strdup(&L->ctx->arena, buf);
}

/* Smallest and largest value of an integer dtype. */
static void int_range(tl_dtype d, int64_t *lo, int64_t *hi) {
  switch (d) {
  case TL_I1: *lo = 0; *hi = 1; break;
  case TL_I8: *lo = INT8_MIN; *hi = INT8_MAX; break;
  case TL_I16: *lo = INT16_MIN; *hi = INT16_MAX; break;
  case TL_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
  case TL_U8: *lo = 0; *hi = 255; break;
  default: *lo = INT64_MIN; *hi = INT64_MAX; break;
  }
}

/* x in d's width, two's complement (language.md 8.1: integer narrowing keeps the low bits). */
static int64_t wrap_int(int64_t x, tl_dtype d) {
  int bits = tl_dtype_bits(d);
  if (bits <= 0 || bits >= 64) return x;
  uint64_t m = ((uint64_t)1 << bits) - 1, u = (uint64_t)x & m;
  if (d != TL_U8 && (u >> (bits - 1)) & 1) u |= ~m; /* (u8 is the one unsigned type) */
  return (int64_t)u;
}

/* Whether an integer literal may take type d from the operand beside it (language.md 9 rule 1): its value in
 * d's range, or -- for arithmetic, whose result wraps anyway -- in the bits of d's width, signed or not
 * (`u8 + -1`, `x & 0xffffffff`); a comparison, min() or max() needs the range (`u8 > -1` would compare 255). */
static bool literal_fits(int64_t x, tl_dtype d, bool as_number) {
  int64_t lo, hi;
  int_range(d, &lo, &hi);
  int bits = tl_dtype_bits(d);
  if (as_number || bits >= 64) return x >= lo && x <= hi;
  return x >= -((int64_t)1 << (bits - 1)) && x <= (int64_t)(((uint64_t)1 << bits) - 1);
}

static bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/* One extent of a tile (a shape entry, a range's length, a ':' view) must be a
 * power of two within the tile limit; WHAT names it in the one wording every
 * site shares ("WHAT V is not a power of two" / "exceeds the tile limit"). */
bool lw_tile_extent_ok(lower *L, tl_loc loc, const char *what, int64_t v) {
  if (is_pow2(v) && v <= TL_MAX_TILE_ELEMS) return true;
  if (is_pow2(v))
    tl_error(L->ctx, loc, "%s %lld exceeds the tile limit of %d elements", what, (long long)v, TL_MAX_TILE_ELEMS);
  else
    tl_error(L->ctx, loc, "%s %lld is not a power of two", what, (long long)v);
  return false;
}

/* ---- environment ----------------------------------------------------------- */
int lw_lookup(lower *L, const char *name) {
  for (int i = L->env.len - 1; i >= 0; i--)
    if (!strcmp(L->env.data[i].name, name)) return i;
  return -1;
}

static void bind(lower *L, const char *name, bkind k, fval v, tl_loc loc) {
  binding b;
  memset(&b, 0, sizeof b);
  b.name = name;
  b.kind = k;
  b.v = v;
  b.loc = loc;
  b.scope = L->scope;
  tl_vec_push(&L->ctx->arena, &L->env, b);
}

static int push_scope(lower *L) { L->scope++; return L->env.len; }

/* Ends the block opened at mark (a 'for' body when in_loop, else an 'if' branch): its names go,
 * remembered for note_block_local. */
static void pop_scope(lower *L, int mark, bool in_loop) {
  for (int i = mark; i < L->env.len; i++) {
    const binding *b = &L->env.data[i];
    if ((b->kind != B_VALUE && b->kind != B_LOOPVAR) || b->v.cls == V_ERR) continue;
    block_local e = {b->name, b->kind, b->loc, in_loop};
    tl_vec_push(&L->ctx->arena, &L->ended, e);
  }
  L->env.len = mark;
  L->scope--;
}

/* After "undefined name 'x'": where x was, if a block that has ended bound it. */
static bool note_block_local(lower *L, const char *name) {
  for (int i = L->ended.len - 1; i >= 0; i--) {
    const block_local *e = &L->ended.data[i];
    if (strcmp(e->name, name)) continue;
    if (e->kind == B_LOOPVAR)
      tl_note(L->ctx, e->loc, "'%s' is this loop's variable, visible only in its body", name);
    else if (e->in_loop)
      tl_note(L->ctx, e->loc, "'%s' is first bound here, inside a 'for' body, and ends with it; bind it before the loop "
                               "to carry its last value out", name);
    else
      tl_note(L->ctx, e->loc, "'%s' is first bound here, inside an 'if' branch, and ends with it; bind it before the "
                               "'if' to carry its value out", name);
    return true;
  }
  return false;
}

static const char *builtin_names[] = {
  "load", "store", "where", "fma", "min", "max", "abs", "exp", "exp2", "log", "log2", "sqrt", "rsqrt",
  "sin", "cos", "tanh", "sigmoid", "floor", "ceil", "cast", "zeros", "full", "iota", "dot", "trans",
  "reduce_sum", "reduce_max", "reduce_min", "program_id", "num_programs", "cdiv", "static_assert",
  "require", "range", "atomic_add", "atomic_max", "atomic_min", "atomic_fetch_add", "rand", "randn", "randint", "cumsum", "cummax", "argmax", "argmin", "cat", "bitcast", "sort", "reshape", "permute", NULL};

/* Edit distance of a and b (insertions, deletions, substitutions, a swap of neighbours), capped: names
 * of up to 63 characters, more than `cap` returned as cap + 1. */
static int edit_distance(const char *a, const char *b, int cap) {
  int n = (int)strlen(a), m = (int)strlen(b);
  if (n > 63 || m > 63 || abs(n - m) > cap) return cap + 1;
  int d[64][64];
  for (int i = 0; i <= n; i++) d[i][0] = i;
  for (int j = 0; j <= m; j++) d[0][j] = j;
  for (int i = 1; i <= n; i++)
    for (int j = 1; j <= m; j++) {
      int v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v) v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[n][m] > cap ? cap + 1 : d[n][m];
}

/* The nearest of the names in scope (functions: the builtins) to a misspelt `name`, NULL when none is within a
 * third of its length (at most 2 edits); ties go to the innermost binding / the table's order. */
const char *lw_did_you_mean(lower *L, const char *name, bool function) {
  int len = (int)strlen(name), cap = len / 3 < 2 ? len / 3 : 2, best = cap + 1;
  const char *found = NULL;
  if (cap == 0) return NULL;
  if (function) {
    for (int i = 0; builtin_names[i]; i++) {
      int d = edit_distance(name, builtin_names[i], cap);
      if (d < best) best = d, found = builtin_names[i];
    }
    /* (else the longest builtin of 3 letters or more that begins the name: exponent -> exp) */
    const char *prefix = NULL;
    for (int i = 0; builtin_names[i] && !found; i++) {
      size_t k = strlen(builtin_names[i]);
      if (k >= 3 && !strncmp(name, builtin_names[i], k) && (!prefix || k > strlen(prefix))) prefix = builtin_names[i];
    }
    return found ? found : prefix;
  }
  for (int i = L->env.len - 1; i >= 0; i--) {
    const binding *b = &L->env.data[i];
    if ((b->kind == B_VALUE && b->v.cls == V_ERR) || !strcmp(b->name, name)) continue; /* (an undefined name's) */
    int d = edit_distance(name, b->name, cap);
    if (d < best) best = d, found = b->name;
  }
  return found;
}

/* Predefined in every kernel (docs/language.md "Predefined constants"): the target's compute
 * capability and, for an arch-specific target (sm_90a), the same number, else 0. */
static const char *predefined_names[] = {"ARCH", "ARCH_SPECIFIC", NULL};

bool fe_is_predefined(const char *name) {
  for (int i = 0; predefined_names[i]; i++)
    if (!strcmp(predefined_names[i], name)) return true;
  return false;
}

/* "a builtin name" / "a predefined constant": what a reserved name is, for messages. */
static const char *reserved_what(const char *name) {
  return fe_is_predefined(name)                                   ? "a predefined constant"
         : tl_dtype_from_name(name, strlen(name)) != TL_VOID ? "an element type's name"
                                                                   : "a builtin name";
}

bool fe_is_reserved(const char *name) {
  if (fe_is_predefined(name)) return true;
  for (int i = 0; builtin_names[i]; i++)
    if (!strcmp(builtin_names[i], name)) return true;
  return tl_dtype_from_name(name, strlen(name)) != TL_VOID;
}

/* ---- emitting ---------------------------------------------------------------- */
int32_t lw_emit(lower *L, tl_opcode opc, const int32_t *ops, int n, tl_type rt, tl_loc loc, int32_t *opid) {
  int32_t op = tl_op_new(L->f, L->r, opc, ops, n, &rt, 1, loc);
  if (opid) *opid = op;
  return tl_op_result(L->f, op, 0);
}

/* The IR value of v (materializing a constant in the current region). */
int32_t lw_mat(lower *L, fval *v, tl_loc loc) {
  if (v->id >= 0) return v->id;
  TL_CHECK(L->ctx, v->is_const);
  tl_type t = v->ty;
  if (is_flt(dt_of(v)))
    return tl_build_const_f(L->f, L->r, t, v->f, loc);
  return tl_build_const_i(L->f, L->r, t, v->i, loc);
}

/* Convert v to dtype d (same shape); constants fold. */
fval lw_convert(lower *L, fval v, tl_dtype d, tl_loc loc) {
  if (dt_of(&v) == d) { v.weak = false; return v; }
  fval r = v;
  r.weak = false;
  r.ty.dtype = (uint8_t)d;
  if (v.is_const) {
    bool from_f = is_flt(dt_of(&v));
    if (is_flt(d)) {
      r.f = from_f ? v.f : (double)v.i;
      r.i = 0;
    } else if (d == TL_I1) {
      r.i = from_f ? v.f != 0 : v.i != 0;
    } else {
      int64_t lo, hi;
      int_range(d, &lo, &hi);
      if (from_f) {
        double x = isnan(v.f) ? 0 : v.f;
        r.i = x <= (double)lo ? lo : x >= (double)hi ? hi : (int64_t)x;
      } else {
        r.i = wrap_int(v.i, d); /* the low bits, as cast<T>() and a store of a run-time value keep them */
      }
    }
    r.id = -1;
    return r;
  }
  int32_t a = lw_mat(L, &v, loc);
  r.id = lw_emit(L, TL_OP_cast, &a, 1, r.ty, loc, NULL);
  return r;
}

/* Broadcast v to a tile of `rank`/`shape` (v's shape must be compatible). */
fval lw_to_shape(lower *L, fval v, int rank, const int32_t *shape, tl_loc loc) {
  if (rank == 0) return v;
  tl_type want = tl_tile_type(dt_of(&v), rank, shape);
  if (v.is_const) { /* constants are splats: just retype */
    v.ty = want;
    v.cls = V_TILE;
    v.id = -1;
    return v;
  }
  if (v.cls == V_SCALAR) {
    int32_t a = lw_mat(L, &v, loc);
    return fv_value(L->f, lw_emit(L, TL_OP_splat, &a, 1, want, loc, NULL));
  }
  /* prepend size-1 dims (numpy aligns shapes on the right) */
  while (v.ty.rank < rank) {
    int32_t nshape[TL_MAX_RANK];
    nshape[0] = 1;
    for (int i = 0; i < v.ty.rank; i++) nshape[i + 1] = v.ty.shape[i];
    tl_type t = tl_tile_type(dt_of(&v), v.ty.rank + 1, nshape);
    int32_t op, a = v.id;
    int32_t res = lw_emit(L, TL_OP_expand_dims, &a, 1, t, loc, &op);
    tl_op_at(L->f, op)->axis = 0;
    v = fv_value(L->f, res);
  }
  if (!tl_type_eq(&v.ty, &want)) {
    int32_t a = v.id;
    v = fv_value(L->f, lw_emit(L, TL_OP_broadcast, &a, 1, want, loc, NULL));
  }
  return v;
}

/* numpy broadcasting of two shapes; false when incompatible. */
bool lw_bcast(int ra, const int32_t *sa, int rb, const int32_t *sb, int *rr, int32_t *sr) {
  int r = ra > rb ? ra : rb;
  for (int i = 0; i < r; i++) {
    int ia = ra - r + i, ib = rb - r + i;
    int32_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
    if (da != db && da != 1 && db != 1) return false;
    sr[i] = da == 1 ? db : da;
  }
  *rr = r;
  return true;
}

void lw_shape_str(int rank, const int32_t *s, char *buf, size_t n) {
  size_t used = (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < rank && used < n; i++) used += (size_t)snprintf(buf + used, n - used, "%s%d", i ? ", " : "", s[i]);
  if (used < n) snprintf(buf + used, n - used, "]");
}

/* Check a tile shape made by the user: rank, powers of two, element count. */
bool lw_check_tile_shape(lower *L, tl_loc loc, int rank, const int32_t *shape) {
  if (rank > TL_MAX_RANK) {
    tl_error(L->ctx, loc, "tile rank %d exceeds the limit of %d", rank, TL_MAX_RANK);
    return false;
  }
  int64_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (!is_pow2(shape[i])) {
      tl_error(L->ctx, loc, "tile dimension %d is not a power of two", (int)shape[i]);
      return false;
    }
    n *= shape[i];
    if (n > TL_MAX_TILE_ELEMS) {
      tl_error(L->ctx, loc, "tile has more than %d elements (the limit)", TL_MAX_TILE_ELEMS);
      return false;
    }
  }
  return true;
}

/* ---- type unification (docs/language.md, "Promotion") ---------------------- */
/* The element type two operands are computed in; TL_VOID after an error. */
tl_dtype lw_unify(lower *L, const char *what, const fval *a, const fval *b, tl_loc loc, bool *weak) {
  tl_dtype da = dt_of(a), db = dt_of(b);
  *weak = false;
  if (a->weak && b->weak) {
    *weak = true;
    return is_flt(da) || is_flt(db) ? TL_F32 : TL_I32;
  }
  if (a->weak || b->weak) {
    const fval *lit = a->weak ? a : b, *other = a->weak ? b : a;
    tl_dtype d = dt_of(other);
    if (is_flt(dt_of(lit)) && !is_flt(d)) {
      tl_error(L->ctx, loc, "%s: a float literal cannot be combined with %s; use cast<f32>() on it", what,
               lw_tystr(L, other));
      return TL_VOID;
    }
    if (d == TL_I1) {
      tl_error(L->ctx, loc, "%s: an integer literal cannot be combined with an i1 value; use true or false", what);
      return TL_VOID;
    }
    if (lit->is_const && !is_flt(dt_of(lit)) && !is_flt(d) && !literal_fits(lit->i, d, false)) {
      tl_error(L->ctx, loc, "%s: the literal %lld does not fit %s, the type it takes from %s; cast<T>() that operand "
               "to a wider type first", what, (long long)lit->i, tl_dtype_name(d), lw_tystr(L, other));
      return TL_VOID;
    }
    return d;
  }
  if (da == db) return da;
  if (a->cls == V_TILE && b->cls == V_TILE) {
    tl_error(L->ctx, loc, "%s: operands have different element types (%s and %s); use cast<T>()", what,
             lw_tystr(L, a), lw_tystr(L, b));
    return TL_VOID;
  }
  if (a->cls == V_TILE || b->cls == V_TILE) {
    const fval *t = a->cls == V_TILE ? a : b, *s = a->cls == V_TILE ? b : a;
    tl_dtype dt = dt_of(t), ds = dt_of(s);
    if (is_flt(dt) || (is_int(ds) && dt != TL_I1 && ds != TL_I1)) return dt; /* the scalar converts */
    tl_error(L->ctx, loc, "%s: %s cannot be combined with %s; use cast<T>()", what, lw_tystr(L, s), lw_tystr(L, t));
    return TL_VOID;
  }
  /* two scalars: float over int, then the wider; ties of equal width -> f32 / next int */
  if (is_flt(da) != is_flt(db)) return is_flt(da) ? da : db;
  if (da == TL_I1 || db == TL_I1) {
    tl_error(L->ctx, loc, "%s: an i1 value cannot be combined with %s", what, lw_tystr(L, da == TL_I1 ? b : a));
    return TL_VOID;
  }
  int ba = tl_dtype_bits(da), bb = tl_dtype_bits(db);
  if (ba != bb) return ba > bb ? da : db;
  if (is_flt(da)) return TL_F32;
  return ba == 8 ? TL_I16 : TL_I64;
}

/* ---- binary operators -------------------------------------------------------- */
static const char *binop_name[] = {"'+'", "'-'", "'*'", "'/'", "'%'", "min()", "max()", "'&&'", "'||'",
                                   "'&'", "'|'", "'^'", "'<<'", "'>>'",
                                   "'=='", "'!='", "'<'", "'<='", "'>'", "'>='"};
static bool is_bitop(int k) { return k >= BO_BAND && k <= BO_SHR; }

static binop_kind binop_of_tok(fe_tok_kind k) {
  switch (k) {
  case TK_PLUS: case TK_PLUS_ASSIGN: return BO_ADD;
  case TK_MINUS: case TK_MINUS_ASSIGN: return BO_SUB;
  case TK_STAR: case TK_STAR_ASSIGN: return BO_MUL;
  case TK_SLASH: case TK_SLASH_ASSIGN: return BO_DIV;
  case TK_PERCENT: return BO_REM;
  case TK_ANDAND: return BO_AND;
  case TK_OROR: return BO_OR;
  case TK_AMP: return BO_BAND;
  case TK_PIPE: return BO_BOR;
  case TK_CARET: return BO_BXOR;
  case TK_SHL: return BO_SHL;
  case TK_SHR: return BO_SHR;
  case TK_EQ: return BO_EQ;
  case TK_NE: return BO_NE;
  case TK_LT: return BO_LT;
  case TK_LE: return BO_LE;
  case TK_GT: return BO_GT;
  default: return BO_GE;
  }
}

static bool is_cmp(binop_kind k) { return k >= BO_EQ; }

static bool fold_int(lower *L, binop_kind k, int64_t a, int64_t b, int64_t *r, tl_loc loc) {
  bool ovf = false;
  switch (k) {
  case BO_ADD: ovf = __builtin_add_overflow(a, b, r); break;
  case BO_SUB: ovf = __builtin_sub_overflow(a, b, r); break;
  case BO_MUL: ovf = __builtin_mul_overflow(a, b, r); break;
  case BO_DIV: case BO_REM:
    if (b == 0) {
      tl_error(L->ctx, loc, "division by zero in a constant expression");
      return false;
    }
    if (a == INT64_MIN && b == -1) ovf = true;
    else *r = k == BO_DIV ? a / b : a % b;
    break;
  case BO_MIN: *r = a < b ? a : b; break;
  case BO_MAX: *r = a > b ? a : b; break;
  case BO_AND: *r = a && b; break;
  case BO_OR: *r = a || b; break;
  case BO_BAND: *r = a & b; break;
  case BO_BOR: *r = a | b; break;
  case BO_BXOR: *r = a ^ b; break;
  case BO_SHL:
    if (b < 0 || b > 62 || (a != 0 && (a < 0 || a > (INT64_MAX >> b)))) {
      tl_error(L->ctx, loc, "shift in a constant expression out of range (%lld << %lld)", (long long)a, (long long)b);
      return false;
    }
    *r = a << b;
    break;
  case BO_SHR:
    if (b < 0 || b > 63) {
      tl_error(L->ctx, loc, "shift in a constant expression out of range (%lld >> %lld)", (long long)a, (long long)b);
      return false;
    }
    *r = a >> b; /* arithmetic, as at run time for signed types */
    break;
  case BO_EQ: *r = a == b; break;
  case BO_NE: *r = a != b; break;
  case BO_LT: *r = a < b; break;
  case BO_LE: *r = a <= b; break;
  case BO_GT: *r = a > b; break;
  case BO_GE: *r = a >= b; break;
  }
  if (ovf) {
    tl_error(L->ctx, loc, "integer overflow in a constant expression");
    return false;
  }
  return true;
}

static double fold_float(binop_kind k, double a, double b) {
  switch (k) {
  case BO_ADD: return a + b;
  case BO_SUB: return a - b;
  case BO_MUL: return a * b;
  case BO_DIV: return a / b;
  case BO_REM: return fmod(a, b);
  case BO_MIN: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
  case BO_MAX: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
  case BO_EQ: return a == b;
  case BO_NE: return a != b;
  case BO_LT: return a < b;
  case BO_LE: return a <= b;
  case BO_GT: return a > b;
  case BO_GE: return a >= b;
  default: return 0;
  }
}

const char *lw_operand_kind_error(const fval *v) {
  return v->cls == V_TENSOR ? "a tensor (load() a view of it first)" : "no value (store() returns nothing)";
}

fval lw_binop(lower *L, binop_kind k, fval a, fval b, tl_loc loc) {
  if (a.cls == V_ERR || b.cls == V_ERR) return fv_err();
  const char *what = binop_name[k];
  if (!is_val(&a) || !is_val(&b)) {
    tl_error(L->ctx, loc, "operand of %s is %s", what, lw_operand_kind_error(is_val(&a) ? &b : &a));
    return fv_err();
  }
  bool weak;
  tl_dtype d;
  if (k == BO_AND || k == BO_OR) {
    if (dt_of(&a) != TL_I1 || dt_of(&b) != TL_I1 || a.weak || b.weak) {
      tl_error(L->ctx, loc, "operands of %s must be i1 (comparisons, true, false), not %s", what,
               lw_tystr(L, dt_of(&a) != TL_I1 || a.weak ? &a : &b));
      return fv_err();
    }
    d = TL_I1;
    weak = false;
  } else {
    d = lw_unify(L, what, &a, &b, loc, &weak);
    if (d == TL_VOID) return fv_err();
    const fval *lit = a.weak && !b.weak ? &a : b.weak && !a.weak ? &b : NULL;
    if (lit && lit->is_const && !is_flt(d) && (is_cmp(k) || k == BO_MIN || k == BO_MAX) && !literal_fits(lit->i, d, true)) {
      int64_t lo, hi;
      int_range(d, &lo, &hi);
      tl_error(L->ctx, loc, "%s: the literal %lld is outside the range of %s [%lld, %lld], the type it takes from the "
               "other operand, so this would not compare the numbers; cast<i32>() (or a wider type) that operand first",
               what, (long long)lit->i, tl_dtype_name(d), (long long)lo, (long long)hi);
      return fv_err();
    }
    if (is_bitop(k) && (is_flt(d) || (d == TL_I1 && (k == BO_SHL || k == BO_SHR)))) {
      tl_error(L->ctx, loc, "%s needs integer operands%s, not %s; use bitcast<T>() for the bits of a float", what,
               k == BO_SHL || k == BO_SHR ? "" : " (or i1)", lw_tystr(L, is_flt(dt_of(&a)) || dt_of(&a) == TL_I1 ? &a : &b));
      return fv_err();
    }
    if (d == TL_I1 && !is_cmp(k) && !is_bitop(k)) {
      tl_error(L->ctx, loc, "arithmetic %s on i1 values; use && || ! or cast<i32>()", what);
      return fv_err();
    }
    /* 8-bit floats are storage and dot operands: codegen computes no arithmetic in them, so neither does the
     * interpreter (it computed what the GPU then refused) */
    if ((d == TL_F8E4M3 || d == TL_F8E5M2) && !is_cmp(k)) {
      tl_error(L->ctx, loc, "arithmetic %s on %s values: 8-bit floats are for storage and dot operands; compute in "
               "f32 (cast<f32>(x)) and cast<%s>() the result", what, tl_dtype_name(d), tl_dtype_name(d));
      return fv_err();
    }
  }
  int rank = 0;
  int32_t shape[TL_MAX_RANK];
  if (!lw_bcast(a.cls == V_TILE ? a.ty.rank : 0, a.ty.shape, b.cls == V_TILE ? b.ty.rank : 0, b.ty.shape, &rank, shape)) {
    char sa[64], sb[64];
    lw_shape_str(a.ty.rank, a.ty.shape, sa, sizeof sa);
    lw_shape_str(b.ty.rank, b.ty.shape, sb, sizeof sb);
    tl_error(L->ctx, loc, "%s: shapes %s and %s do not broadcast", what, sa, sb);
    return fv_err();
  }
  tl_dtype rd = is_cmp(k) ? TL_I1 : d;
  if (a.is_const && b.is_const) {
    fval ca = lw_convert(L, a, d, loc), cb = lw_convert(L, b, d, loc);
    fval r;
    if (is_flt(d)) {
      double x = fold_float(k, ca.f, cb.f);
      /* a typed result rounds to its dtype as the op would at run time (literals alone keep
       * full precision until they meet a type) */
      if (!weak && !is_cmp(k)) x = tl_round_to_dtype(x, d);
      r = is_cmp(k) ? fv_int(TL_I1, x != 0, false) : fv_float(d, x, weak);
    } else {
      int64_t x = 0; /* fold_int sets it when it succeeds (GCC -Wmaybe-uninitialized cannot tell) */
      if (!fold_int(L, k, ca.i, cb.i, &x, loc)) return fv_err();
      int64_t lo, hi;
      int_range(weak ? TL_I64 : rd, &lo, &hi);
      if (x < lo || x > hi) {
        tl_error(L->ctx, loc, "constant expression overflows %s", tl_dtype_name(rd));
        return fv_err();
      }
      r = fv_int(rd, x, weak && !is_cmp(k));
    }
    if (rank > 0) {
      r.cls = V_TILE;
      r.ty = tl_tile_type(rd, rank, shape);
    }
    return r;
  }
  a = lw_to_shape(L, lw_convert(L, a, d, loc), rank, shape, loc);
  b = lw_to_shape(L, lw_convert(L, b, d, loc), rank, shape, loc);
  int32_t ops[2] = {lw_mat(L, &a, loc), lw_mat(L, &b, loc)};
  tl_type rt = rank ? tl_tile_type(rd, rank, shape) : tl_scalar_type(rd);
  static const tl_opcode opcs[] = {TL_OP_add, TL_OP_sub, TL_OP_mul, TL_OP_div, TL_OP_rem, TL_OP_min, TL_OP_max,
                                   TL_OP_and, TL_OP_or,  TL_OP_and, TL_OP_or,  TL_OP_xor, TL_OP_shl, TL_OP_shr};
  int32_t op;
  int32_t res = lw_emit(L, is_cmp(k) ? TL_OP_cmp : opcs[k], ops, 2, rt, loc, &op);
  if (is_cmp(k)) {
    static const int preds[] = {TL_CMP_EQ, TL_CMP_NE, TL_CMP_LT, TL_CMP_LE, TL_CMP_GT, TL_CMP_GE};
    tl_op_at(L->f, op)->kind = preds[k - BO_EQ];
  }
  return fv_value(L->f, res);
}

/* ---- expressions -------------------------------------------------------------- */
/* Scalar integer -> i32 (views, loop bounds, grid). */
fval lw_to_index(lower *L, fval v, const char *what, tl_loc loc) {
  if (v.cls == V_ERR) return v;
  if (v.cls != V_SCALAR || !is_int(dt_of(&v)) || dt_of(&v) == TL_I1) {
    tl_error(L->ctx, loc, "%s must be an integer scalar, not %s", what,
             v.cls == V_SCALAR || v.cls == V_TILE ? lw_tystr(L, &v) : lw_operand_kind_error(&v));
    return fv_err();
  }
  if (v.weak) {
    if (v.i < INT32_MIN || v.i > INT32_MAX) {
      tl_error(L->ctx, loc, "%s %lld does not fit in i32", what, (long long)v.i);
      return fv_err();
    }
    v.weak = false;
    return v;
  }
  return lw_convert(L, v, TL_I32, loc);
}

/* Compile-time integer value of e, or false (error reported with `what`). */
bool lw_const_int(lower *L, fe_expr *e, const char *what, int64_t *out) {
  fval v = lw_eval(L, e);
  if (v.cls == V_ERR) return false;
  if (v.cls != V_SCALAR || !v.is_const || !is_int(dt_of(&v))) {
    tl_error(L->ctx, e->loc, "%s must be a compile-time integer constant", what);
    return false;
  }
  *out = v.i;
  return true;
}

static fval eval_name(lower *L, fe_expr *e) {
  int i = lw_lookup(L, e->name);
  if (i < 0) {
    if (fe_is_reserved(e->name))
      tl_error(L->ctx, e->loc, "'%s' is a builtin, not a value", e->name);
    else {
      tl_error(L->ctx, e->loc, "undefined name '%s'", e->name);
      const char *near = NULL;
      if (!strcmp(e->name, "True") || !strcmp(e->name, "False"))
        tl_note(L->ctx, e->loc, "the boolean constants are 'true' and 'false' here");
      else if (note_block_local(L, e->name))
        ; /* (its note says where it was bound) */
      else if ((near = lw_did_you_mean(L, e->name, false)))
        tl_note(L->ctx, e->loc, "did you mean '%s'?", near);
      else if (L->in_grid && !L->in_require)
        tl_note(L->ctx, e->loc, "grid(...) sees the shape symbols, the scalar parameters and the tile constants "
                "declared before it in tiles(NAME = value, ...)");
    }
    bind(L, e->name, B_VALUE, fv_err(), e->loc); /* report once */
    return fv_err();
  }
  binding *b = &L->env.data[i];
  tl_tileconst *tc = b->kind == B_CONST && !L->in_extent ? tl_tileconst_named(L->f, e->name) : NULL;
  if (tc) tc->value_use = true; /* (predefined constants such as ARCH are no tile constants) */
  if (L->in_require && (b->kind == B_VALUE || b->kind == B_LOOPVAR) && b->v.cls != V_ERR && !b->v.is_const) {
    tl_error(L->ctx, e->loc,
             "require() can use shape symbols, scalar parameters and constants, not '%s', a value computed in the "
             "kernel: the launcher evaluates the condition before the launch",
             e->name);
    tl_note(L->ctx, b->loc, "'%s' is defined here", e->name);
    return fv_err();
  }
  if (b->kind == B_SYM && L->in_attr) {
    /* attributes are lowered before the body's dim values exist, and a shape is a launch value */
    tl_error(L->ctx, e->loc, "'%s' is a shape symbol, known only at launch; an attribute's argument is a compile-time constant",
             e->name);
    tl_note(L->ctx, b->loc, "'%s' is declared here", e->name);
    return fv_err();
  }
  if (b->kind == B_SYM) {
    int32_t *cache = L->in_grid ? L->sym_grid : L->sym_body;
    if (cache[b->sym] < 0) {
      tl_sym *s = &L->f->syms.data[b->sym];
      tl_param *p = &L->f->params.data[s->param];
      tl_type t = tl_scalar_type(TL_I32);
      int32_t opnd = p->value;
      int32_t op = tl_op_new(L->f, NULL, TL_OP_dim, &opnd, 1, &t, 1, e->loc);
      tl_op_at(L->f, op)->axis = s->axis;
      tl_region *r = L->in_grid ? &L->f->grid : &L->f->body;
      tl_region_insert(L->f, r, L->in_grid ? L->ndim_grid++ : L->ndim_body++, op);
      tl_val(L->f, tl_op_result(L->f, op, 0))->name = s->name;
      cache[b->sym] = tl_op_result(L->f, op, 0);
    }
    return fv_value(L->f, cache[b->sym]);
  }
  return b->v;
}

static fval eval_unary(lower *L, fe_expr *e) {
  fval a = lw_eval(L, e->a);
  if (a.cls == V_ERR) return a;
  const char *what = e->op == TK_MINUS ? "'-'" : "'!'";
  if (!is_val(&a)) {
    tl_error(L->ctx, e->loc, "operand of %s is %s", what, lw_operand_kind_error(&a));
    return fv_err();
  }
  tl_dtype d = dt_of(&a);
  if (e->op == TK_NOT) {
    if (d != TL_I1) {
      tl_error(L->ctx, e->loc, "operand of '!' must be i1, not %s", lw_tystr(L, &a));
      return fv_err();
    }
    if (a.is_const) { a.i = !a.i; return a; }
    int32_t x = lw_mat(L, &a, e->loc);
    return fv_value(L->f, lw_emit(L, TL_OP_not, &x, 1, a.ty, e->loc, NULL));
  }
  if (d == TL_I1 || d == TL_U8) {
    tl_error(L->ctx, e->loc, "operand of '-' cannot be %s", lw_tystr(L, &a));
    return fv_err();
  }
  if (a.is_const) {
    if (is_flt(d)) { a.f = -a.f; return a; }
    if (a.i == INT64_MIN) {
      tl_error(L->ctx, e->loc, "integer overflow in a constant expression");
      return fv_err();
    }
    a.i = -a.i;
    a.f = (double)a.i;
    return a;
  }
  int32_t x = lw_mat(L, &a, e->loc);
  return fv_value(L->f, lw_emit(L, TL_OP_neg, &x, 1, a.ty, e->loc, NULL));
}

/* A uniform scalar condition as an i1 value (ints compare != 0). */
static fval to_cond(lower *L, fval c, const char *what, tl_loc loc) {
  if (c.cls == V_ERR) return c;
  if (c.cls != V_SCALAR) {
    if (c.cls == V_TILE)
      tl_error(L->ctx, loc, "%s must be a uniform scalar, not %s; use where() to choose elementwise", what,
               lw_tystr(L, &c));
    else
      tl_error(L->ctx, loc, "%s is %s", what, lw_operand_kind_error(&c));
    return fv_err();
  }
  if (is_flt(dt_of(&c))) {
    tl_error(L->ctx, loc, "%s must be i1 or an integer, not %s", what, lw_tystr(L, &c));
    return fv_err();
  }
  if (dt_of(&c) == TL_I1) return c;
  return lw_binop(L, BO_NE, c, fv_int(TL_I32, 0, true), loc);
}

static fval eval_ternary(lower *L, fe_expr *e) {
  fval c = to_cond(L, lw_eval(L, e->a), "the condition of '?:'", e->a->loc);
  if (c.cls == V_ERR) return c;
  if (c.is_const) return lw_eval(L, c.i ? e->b : e->c); /* the other arm is not evaluated */
  fval a = lw_eval(L, e->b), b = lw_eval(L, e->c);
  if (a.cls == V_ERR || b.cls == V_ERR) return fv_err();
  if (a.cls != V_SCALAR || b.cls != V_SCALAR) {
    tl_error(L->ctx, e->loc, "the arms of '?:' must be scalars; use where() for tiles");
    return fv_err();
  }
  bool weak;
  tl_dtype d = lw_unify(L, "'?:'", &a, &b, e->loc, &weak);
  if (d == TL_VOID) return fv_err();
  a = lw_convert(L, a, d, e->loc);
  b = lw_convert(L, b, d, e->loc);
  int32_t ops[3] = {lw_mat(L, &c, e->loc), lw_mat(L, &a, e->loc), lw_mat(L, &b, e->loc)};
  return fv_value(L->f, lw_emit(L, TL_OP_select, ops, 3, tl_scalar_type(d), e->loc, NULL));
}

/* t[:, None] and friends: insert size-1 dimensions into a tile. */
static fval eval_index(lower *L, fe_expr *e) {
  fval t = lw_eval(L, e->a);
  if (t.cls == V_ERR) return t;
  if (t.cls == V_TENSOR) {
    tl_error(L->ctx, e->loc, "a view of a tensor must be the argument of load() or store()");
    return fv_err();
  }
  if (t.cls != V_TILE) {
    tl_error(L->ctx, e->loc, "only tiles can be indexed with ':' and None, not %s",
             t.cls == V_SCALAR ? lw_tystr(L, &t) : lw_operand_kind_error(&t));
    return fv_err();
  }
  int nall = 0, rank = 0;
  bool sliced = false;
  int32_t start[TL_MAX_RANK] = {0}, len[TL_MAX_RANK] = {0};
  for (int i = 0; i < e->nitems; i++) {
    fe_item *it = &e->items[i];
    if (it->kind == IT_ALL || it->kind == IT_RANGE) {
      if (nall < TL_MAX_RANK && nall < t.ty.rank) {
        start[nall] = 0;
        len[nall] = t.ty.shape[nall];
      }
      if (it->kind == IT_RANGE && nall < t.ty.rank) { /* a constant slice a : b of that dim */
        int64_t lo, hi;
        if (!lw_const_int(L, it->lo, "the start of a tile slice", &lo) || !lw_const_int(L, it->hi, "the end of a tile slice", &hi))
          return fv_err();
        if (lo < 0 || hi > t.ty.shape[nall] || !is_pow2(hi - lo)) {
          tl_error(L->ctx, it->loc, "slice %lld : %lld of a dimension of length %d: it must lie inside it and its length "
                   "be a power of two", (long long)lo, (long long)hi, (int)t.ty.shape[nall]);
          return fv_err();
        }
        start[nall] = (int32_t)lo;
        len[nall] = (int32_t)(hi - lo);
        sliced = sliced || len[nall] != t.ty.shape[nall];
      }
      nall++;
    } else if (it->kind != IT_NEWAXIS) {
      tl_error(L->ctx, it->loc, "a tile can only be indexed with ':' (keep), a constant slice a : b, or None (new axis)");
      if (it->kind == IT_EXPR) /* (one element, as NumPy indexes: say the tile ways) */
        tl_note(L->ctx, it->loc, "one element of a tile: x[i : i + 1] (constant i) is a one-element tile; a scalar of it "
                                 "is a reduction, e.g. reduce_max(where(iota<i32>[N] == i, x, -inf), 0) (i may vary)");
      return fv_err();
    }
  }
  if (nall != t.ty.rank) {
    tl_error(L->ctx, e->loc, "indexing a tile of rank %d needs %d ':' or slice entries, found %d", t.ty.rank,
             t.ty.rank, nall);
    return fv_err();
  }
  if (sliced) {
    tl_type nt = tl_tile_type(dt_of(&t), t.ty.rank, len);
    if (t.is_const) {
      t.ty = nt;
    } else {
      int32_t op, a = t.id;
      int32_t res = lw_emit(L, TL_OP_slice, &a, 1, nt, e->loc, &op);
      memcpy(tl_op_at(L->f, op)->dims, start, sizeof start);
      t = fv_value(L->f, res);
    }
  }
  rank = e->nitems;
  if (rank > TL_MAX_RANK) {
    tl_error(L->ctx, e->loc, "tile rank %d exceeds the limit of %d", rank, TL_MAX_RANK);
    return fv_err();
  }
  for (int i = 0; i < e->nitems; i++) {
    if (e->items[i].kind != IT_NEWAXIS) continue;
    int32_t shape[TL_MAX_RANK];
    int r = t.ty.rank;
    for (int j = 0, s = 0; j <= r; j++) shape[j] = j == i ? 1 : t.ty.shape[s++];
    tl_type nt = tl_tile_type(dt_of(&t), r + 1, shape);
    if (t.is_const) {
      t.ty = nt;
      continue;
    }
    int32_t op, a = t.id;
    int32_t res = lw_emit(L, TL_OP_expand_dims, &a, 1, nt, e->loc, &op);
    tl_op_at(L->f, op)->axis = i;
    t = fv_value(L->f, res);
  }
  return t;
}

fval lw_eval(lower *L, fe_expr *e) {
  fval v;
  switch (e->kind) {
  case EX_ERROR: return fv_err();
  case EX_INT: v = fv_int(TL_I32, e->ival, true); break;
  case EX_FLOAT: v = fv_float(TL_F32, e->fval, true); break;
  case EX_BOOL: v = fv_int(TL_I1, e->ival, false); break;
  case EX_STRING:
    tl_error(L->ctx, e->loc, "a string can only be the message of static_assert() or require()");
    return fv_err();
  case EX_NAME: v = eval_name(L, e); break;
  case EX_UNARY: v = eval_unary(L, e); break;
  case EX_BINARY: {
    /* program_id(a) * C: a tile constant as the tile's first row or column, a tiling use (tl_tileconst.value_use;
     * passes/form_record.c tl_program_ids_tile_only checks the IR's side) */
    bool tiling = e->op == TK_STAR && ((e->a->kind == EX_CALL && !strcmp(e->a->name, "program_id") && e->b->kind == EX_NAME) ||
                                       (e->b->kind == EX_CALL && !strcmp(e->b->name, "program_id") && e->a->kind == EX_NAME));
    int ta = tiling && e->a->kind == EX_NAME, tb = tiling && e->b->kind == EX_NAME;
    /* (b first: the order GCC gave the two evaluations as arguments of one call, which the IR's op order and
     * so the PTX of every kernel follow) */
    L->in_extent += tb;
    fval y = lw_eval(L, e->b);
    L->in_extent += ta - tb;
    fval x = lw_eval(L, e->a);
    L->in_extent -= ta;
    v = lw_binop(L, binop_of_tok(e->op), x, y, e->loc);
    break;
  }
  case EX_TERNARY: v = eval_ternary(L, e); break;
  case EX_CALL: v = lw_eval_call(L, e); break;
  case EX_INDEX: v = eval_index(L, e); break;
  case EX_LIST:
    tl_error(L->ctx, e->loc, "a list [...] can only be the shape of reshape() or the order of permute()");
    return fv_err();
  default: return fv_err();
  }
  if (is_val(&v) || v.cls == V_TENSOR) {
    e->type = v.ty;
    e->is_const = v.is_const;
    e->cival = v.i;
    e->cfval = v.f;
  }
  return v;
}

/* ---- statements -------------------------------------------------------------- */
typedef TL_VEC(const char *) name_vec;

static void add_name(lower *L, name_vec *v, const char *n) {
  for (int i = 0; i < v->len; i++)
    if (!strcmp(v->data[i], n)) return;
  tl_vec_push(&L->ctx->arena, v, n);
}

/* Names assigned anywhere inside b (nested blocks included). */
static void assigned_names(lower *L, const fe_block *b, name_vec *out) {
  if (!b) return;
  for (int i = 0; i < b->n; i++) {
    const fe_stmt *s = b->stmts[i];
    if (s->kind == ST_ASSIGN && s->name) add_name(L, out, s->name);
    if (s->kind == ST_FOR || s->kind == ST_IF) {
      assigned_names(L, s->body, out);
      assigned_names(L, s->els, out);
    }
  }
}

/* Names of `names` bound before (as values, not in error): the ones a
 * loop carries or an if yields. */
static void live_outer(lower *L, const name_vec *names, name_vec *out) {
  for (int i = 0; i < names->len; i++) {
    int b = lw_lookup(L, names->data[i]);
    if (b >= 0 && L->env.data[b].kind == B_VALUE && is_val(&L->env.data[b].v)) add_name(L, out, names->data[i]);
  }
}

static void lower_block(lower *L, const fe_block *b);

static const char *bkind_name(bkind k) {
  switch (k) {
  case B_TENSOR: return "tensor parameter";
  case B_SCALAR_PARAM: return "parameter";
  case B_CONST: return "tile constant";
  case B_SYM: return "shape symbol";
  case B_LOOPVAR: return "loop variable";
  default: return "value";
  }
}

static void lower_assign(lower *L, const fe_stmt *s) {
  if (fe_is_reserved(s->name)) {
    tl_error(L->ctx, s->name_loc, "'%s' is %s and cannot be assigned", s->name, reserved_what(s->name));
    lw_eval(L, s->expr);
    return;
  }
  int i = lw_lookup(L, s->name);
  if (i >= 0 && L->env.data[i].kind != B_VALUE) {
    tl_error(L->ctx, s->name_loc, "cannot assign to %s '%s'", bkind_name(L->env.data[i].kind), s->name);
    tl_note(L->ctx, L->env.data[i].loc, "'%s' is declared here", s->name);
    return;
  }
  fval v;
  if (s->op != TK_ASSIGN) {
    if (i < 0) {
      tl_error(L->ctx, s->name_loc, "undefined name '%s'", s->name);
      note_block_local(L, s->name);
      return;
    }
    v = lw_binop(L, binop_of_tok(s->op), L->env.data[i].v, lw_eval(L, s->expr), s->loc);
  } else {
    v = lw_eval(L, s->expr);
  }
  if (v.cls == V_VOID) {
    bool atomic = s->expr->kind == EX_CALL && !strncmp(s->expr->name, "atomic_", 7);
    tl_error(L->ctx, s->expr->loc, "%s%s returns no value%s", s->expr->kind == EX_CALL ? s->expr->name : "the expression",
             s->expr->kind == EX_CALL ? "()" : "", atomic ? " (atomic_fetch_add() returns the old values)" : "");
    v = fv_err();
  } else if (v.cls == V_TENSOR) {
    tl_error(L->ctx, s->expr->loc, "a tensor cannot be bound to a name; load() a view of it");
    v = fv_err();
  }
  v.weak = false;
  if (i >= 0) {
    L->env.data[i].v = v;
    L->env.data[i].loc = s->name_loc;
  } else {
    bind(L, s->name, B_VALUE, v, s->name_loc);
  }
}

static void lower_static_assert(lower *L, const fe_expr *e) {
  if (e->nargs < 1 || e->nargs > 2 || (e->nargs == 2 && e->args[1]->kind != EX_STRING)) {
    tl_error(L->ctx, e->loc, "static_assert takes a condition and an optional message string");
    return;
  }
  L->in_extent++; /* (a compile-time check, made again in every form's compile: no value use) */
  fval c = lw_eval(L, e->args[0]);
  L->in_extent--;
  if (c.cls == V_ERR) return;
  if (c.cls != V_SCALAR || !c.is_const || !is_int(dt_of(&c))) {
    tl_error(L->ctx, e->args[0]->loc, "static_assert condition is not a compile-time constant");
    return;
  }
  if (!c.i) {
    if (e->nargs == 2)
      tl_error(L->ctx, e->loc, "static assertion failed: %s", e->args[1]->name);
    else
      tl_error(L->ctx, e->loc, "static assertion failed");
  }
}

/* The text of require()'s condition as written: the source from its '(' to the first ',' or ')' at
 * depth 0, blanks and comments collapsed to one space (at most 200 bytes); "the condition" when the
 * source is not at hand. */
static const char *require_text(lower *L, const fe_expr *call) {
  tl_loc loc = call->loc;
  if (loc.file < 0 || loc.file >= L->ctx->files.len || loc.line <= 0) return "the condition";
  const tl_source *src = &L->ctx->files.data[loc.file];
  const char *p = src->text, *end = src->text + src->len;
  for (int l = 1; l < loc.line && p < end; p++)
    if (*p == '\n') l++;
  p += loc.col > 0 ? loc.col - 1 : 0;
  while (p < end && *p != '(') p++;
  if (p >= end) return "the condition";
  p++;
  char buf[208];
  size_t n = 0;
  int depth = 0;
  bool blank = false;
  for (; p < end; p++) {
    char c = *p;
    if (depth == 0 && (c == ',' || c == ')')) break;
    if (c == '(' || c == '[' || c == '{') depth++;
    if (c == ')' || c == ']' || c == '}') depth--;
    if (c == '/' && p + 1 < end && p[1] == '/') {
      while (p + 1 < end && p[1] != '\n') p++;
      blank = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      blank = true;
      continue;
    }
    if (blank && n > 0 && n < 200) buf[n++] = ' ';
    blank = false;
    if (n < 200) buf[n++] = c;
  }
  if (n == 0) return "the condition";
  if (n >= 200) memcpy(buf + 197, "...", 3), n = 200;
  return tl_strndup(&L->ctx->arena, buf, n);
}

/* require(cond[, "msg"]) (docs/language.md "Launch-time checks"): a statement at the top level of the
 * body (anywhere there: it is checked before the launch, not in program order).  The condition,
 * integer arithmetic on shape symbols, scalar parameters and constants as the grid clause allows,
 * goes into the grid region before its yield, as a `require` op every launcher evaluates with the
 * grid; no code in the kernel.  A constant condition is checked here, as static_assert. */
static void lower_require(lower *L, const fe_expr *e) {
  if (e->nargs < 1 || e->nargs > 2 || e->nkw) {
    tl_error(L->ctx, e->loc, "require takes a condition and an optional message string, e.g. "
             "require(C <= BC, \"one tile covers a row\")");
    return;
  }
  if (e->nargs == 2 && e->args[1]->kind != EX_STRING) {
    tl_error(L->ctx, e->args[1]->loc, "the message of require() must be a string literal");
    return;
  }
  if (L->scope > 0) {
    tl_error(L->ctx, e->loc, "require() must be at the top level of the kernel body, not inside 'for' or 'if': the "
             "launcher checks it once, before the launch");
    return;
  }
  tl_func *f = L->f;
  tl_region *g = &f->grid;
  if (g->ops.len == 0 || f->ops.data[g->ops.data[g->ops.len - 1]].opc != TL_OP_yield) return; /* (grid errors) */
  int32_t yield = g->ops.data[--g->ops.len];
  int32_t first = f->ops.len;
  tl_region *saved = L->r;
  L->r = g;
  L->in_grid = L->in_require = true;
  fval c = to_cond(L, lw_eval(L, e->args[0]), "the condition of require()", e->args[0]->loc);
  bool ok = c.cls != V_ERR;
  /* integers only: the AOT launcher translates the condition to C integer code, as the grid */
  for (int i = 0; ok && i < g->ops.len; i++) {
    const tl_op *o = &f->ops.data[g->ops.data[i]];
    if (g->ops.data[i] < first) continue;
    for (int k = 0; ok && k < o->nopnd + o->nres; k++) {
      const tl_type *t = &f->values.data[k < o->nopnd ? o->opnd[k] : o->res[k - o->nopnd]].type;
      if (t->kind != TL_KIND_TENSOR && tl_dtype_is_float((tl_dtype)t->dtype)) {
        char buf[64];
        tl_error(L->ctx, e->args[0]->loc,
                 "the condition of require() must be integer arithmetic on shape symbols, integer scalar parameters "
                 "and constants (as the launchers compute the grid), not on %s values",
                 tl_type_str(t, buf, sizeof buf));
        ok = false;
      }
    }
  }
  const char *text = require_text(L, e);
  const char *msg = e->nargs == 2 ? e->args[1]->name : NULL;
  if (ok && c.is_const) {
    if (!c.i) {
      if (msg) tl_error(L->ctx, e->loc, "require failed at compile time: %s: %s", text, msg);
      else tl_error(L->ctx, e->loc, "require failed at compile time: %s", text);
    }
  } else if (ok) {
    int32_t cv = lw_mat(L, &c, e->args[0]->loc);
    int32_t op = tl_op_new(f, g, TL_OP_require, &cv, 1, NULL, 0, e->loc);
    tl_op_at(f, op)->req_text = text;
    tl_op_at(f, op)->req_msg = msg;
  }
  tl_vec_push(&L->ctx->arena, &g->ops, yield);
  L->in_grid = L->in_require = false;
  L->r = saved;
}

/* Yield the current values of `names` (typed as `types`), checking types. */
static void emit_yield(lower *L, const name_vec *names, const tl_type *types, const tl_loc *outer_locs,
                       const char *where, tl_loc loc) {
  int32_t *ops = tl_alloc(&L->ctx->arena, sizeof(int32_t) * (size_t)(names->len + 1));
  bool ok = true;
  for (int i = 0; i < names->len; i++) {
    int b = lw_lookup(L, names->data[i]);
    fval v = L->env.data[b].v;
    if (v.cls == V_ERR) { ok = false; continue; }
    if (!is_val(&v) || !tl_type_eq(&v.ty, &types[i])) {
      char want[96];
      tl_type_str(&types[i], want, sizeof want);
      tl_error(L->ctx, L->env.data[b].loc, "'%s' changes type %s: %s before, %s here", names->data[i], where, want,
               is_val(&v) ? lw_tystr(L, &v) : "no value");
      tl_note(L->ctx, outer_locs[i], "'%s' is defined here", names->data[i]);
      ok = false;
      continue;
    }
    ops[i] = lw_mat(L, &v, loc);
  }
  if (ok) tl_op_new(L->f, L->r, TL_OP_yield, ops, names->len, NULL, 0, loc);
}

static void lower_for(lower *L, const fe_stmt *s) {
  fval lo = lw_to_index(L, lw_eval(L, s->lo), "the range start", s->lo->loc);
  fval hi = lw_to_index(L, lw_eval(L, s->hi), "the range end", s->hi->loc);
  L->in_extent++;
  fval step = s->step ? lw_to_index(L, lw_eval(L, s->step), "the range step", s->step->loc) : fv_int(TL_I32, 1, false);
  L->in_extent--;
  if (step.cls != V_ERR && step.is_const && step.i <= 0) {
    tl_error(L->ctx, s->step->loc, "the range step must be positive, not %lld", (long long)step.i);
    step = fv_err();
  }
  bool ok = lo.cls != V_ERR && hi.cls != V_ERR && step.cls != V_ERR;
  if (fe_is_reserved(s->name)) {
    tl_error(L->ctx, s->name_loc, "'%s' is %s and cannot be a loop variable", s->name, reserved_what(s->name));
    ok = false;
  } else {
    int prev = lw_lookup(L, s->name);
    if (prev >= 0) {
      tl_error(L->ctx, s->name_loc, "loop variable '%s' shadows an existing name", s->name);
      tl_note(L->ctx, L->env.data[prev].loc, "'%s' is defined here", s->name);
      ok = false;
    }
  }
  name_vec assigned = {0}, carried = {0};
  assigned_names(L, s->body, &assigned);
  live_outer(L, &assigned, &carried);
  int n = carried.len;
  tl_type *types = tl_alloc(&L->ctx->arena, sizeof(tl_type) * (size_t)(n + 1));
  tl_loc *locs = tl_alloc(&L->ctx->arena, sizeof(tl_loc) * (size_t)(n + 1));
  int32_t *ops = tl_alloc(&L->ctx->arena, sizeof(int32_t) * (size_t)(n + 3));
  for (int i = 0; i < n; i++) {
    binding *b = &L->env.data[lw_lookup(L, carried.data[i])];
    types[i] = b->v.ty;
    locs[i] = b->loc;
    ops[3 + i] = lw_mat(L, &b->v, s->loc);
  }
  tl_region scratch;
  memset(&scratch, 0, sizeof scratch);
  scratch.owner = -1;
  tl_region *body = &scratch;
  int32_t op = -1;
  if (ok) {
    ops[0] = lw_mat(L, &lo, s->lo->loc);
    ops[1] = lw_mat(L, &hi, s->hi->loc);
    ops[2] = lw_mat(L, &step, s->loc);
    op = tl_op_new(L->f, L->r, TL_OP_for, ops, n + 3, types, n, s->loc);
    tl_op_add_regions(L->f, op, 1);
    body = &tl_op_at(L->f, op)->regions[0];
  }
  int mark = push_scope(L);
  fval iv = fv_err();
  if (ok) iv = fv_value(L->f, tl_region_add_arg(L->f, body, op, tl_scalar_type(TL_I32)));
  if (s->name) bind(L, s->name, B_LOOPVAR, iv, s->name_loc);
  if (ok) tl_val(L->f, iv.id)->name = s->name;
  for (int i = 0; i < n; i++) {
    fval v = ok ? fv_value(L->f, tl_region_add_arg(L->f, body, op, types[i])) : fv_err();
    if (ok) tl_val(L->f, v.id)->name = carried.data[i];
    bind(L, carried.data[i], B_VALUE, v, locs[i]);
  }
  tl_region *saved = L->r;
  L->r = body;
  lower_block(L, s->body);
  if (ok) emit_yield(L, &carried, types, locs, "in the loop body", s->loc);
  L->r = saved;
  pop_scope(L, mark, true);
  for (int i = 0; i < n; i++) {
    binding *b = &L->env.data[lw_lookup(L, carried.data[i])];
    b->v = ok ? fv_value(L->f, tl_op_result(L->f, op, i)) : fv_err();
    if (ok) tl_val(L->f, b->v.id)->name = carried.data[i];
  }
}

static void lower_if(lower *L, const fe_stmt *s) {
  fval c = to_cond(L, lw_eval(L, s->expr), "the condition of 'if'", s->expr->loc);
  if (c.cls != V_ERR && c.is_const) { /* folded: only the taken branch is checked */
    const fe_block *taken = c.i ? s->body : s->els;
    int mark = push_scope(L);
    lower_block(L, taken);
    pop_scope(L, mark, false);
    return;
  }
  name_vec assigned = {0}, yielded = {0};
  assigned_names(L, s->body, &assigned);
  assigned_names(L, s->els, &assigned);
  live_outer(L, &assigned, &yielded);
  int n = yielded.len;
  tl_type *types = tl_alloc(&L->ctx->arena, sizeof(tl_type) * (size_t)(n + 1));
  tl_loc *locs = tl_alloc(&L->ctx->arena, sizeof(tl_loc) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) {
    binding *b = &L->env.data[lw_lookup(L, yielded.data[i])];
    types[i] = b->v.ty;
    locs[i] = b->loc;
  }
  bool ok = c.cls != V_ERR;
  int32_t op = -1;
  tl_region scratch[2];
  memset(scratch, 0, sizeof scratch);
  scratch[0].owner = scratch[1].owner = -1;
  if (ok) {
    int32_t cv = lw_mat(L, &c, s->expr->loc);
    op = tl_op_new(L->f, L->r, TL_OP_if, &cv, 1, types, n, s->loc);
    tl_op_add_regions(L->f, op, 2);
  }
  tl_region *saved = L->r;
  for (int br = 0; br < 2; br++) {
    L->r = ok ? &tl_op_at(L->f, op)->regions[br] : &scratch[br];
    int mark = push_scope(L);
    for (int i = 0; i < n; i++) bind(L, yielded.data[i], B_VALUE, L->env.data[lw_lookup(L, yielded.data[i])].v, locs[i]);
    lower_block(L, br == 0 ? s->body : s->els);
    if (ok) emit_yield(L, &yielded, types, locs, "inside 'if'", s->loc);
    pop_scope(L, mark, false);
  }
  L->r = saved;
  for (int i = 0; i < n; i++) {
    binding *b = &L->env.data[lw_lookup(L, yielded.data[i])];
    b->v = ok ? fv_value(L->f, tl_op_result(L->f, op, i)) : fv_err();
    if (ok) tl_val(L->f, b->v.id)->name = yielded.data[i];
  }
}

static void lower_stmt(lower *L, const fe_stmt *s) {
  switch (s->kind) {
  case ST_ASSIGN: lower_assign(L, s); break;
  case ST_FOR: lower_for(L, s); break;
  case ST_IF: lower_if(L, s); break;
  case ST_EXPR: {
    fe_expr *e = s->expr;
    if (e->kind == EX_CALL && !strcmp(e->name, "static_assert")) {
      lower_static_assert(L, e);
      break;
    }
    if (e->kind == EX_CALL && !strcmp(e->name, "require")) {
      lower_require(L, e);
      break;
    }
    fval v = lw_eval(L, e);
    if (v.cls != V_ERR && v.cls != V_VOID)
      tl_error(L->ctx, e->loc,
               "this expression's value is unused; only store(), static_assert() and require() stand alone");
    break;
  }
  }
}

static void lower_block(lower *L, const fe_block *b) {
  if (!b) return;
  for (int i = 0; i < b->n; i++) lower_stmt(L, b->stmts[i]);
}

/* ---- kernels ------------------------------------------------------------------- */
/* A name that a kernel declares: not reserved, not declared twice. */
static bool declare_ok(lower *L, const char *name, tl_loc loc, const char *what) {
  if (fe_is_reserved(name)) {
    tl_error(L->ctx, loc, "'%s' is %s and cannot name a %s", name, reserved_what(name), what);
    return false;
  }
  int i = lw_lookup(L, name);
  if (i >= 0) {
    tl_error(L->ctx, loc, "'%s' is already declared as a %s", name, bkind_name(L->env.data[i].kind));
    tl_note(L->ctx, L->env.data[i].loc, "previous definition is here");
    return false;
  }
  return true;
}

static void lower_attrs(lower *L, fe_kernel *k) {
  tl_func *f = L->f;
  for (int i = 0; i < k->attrs.len; i++) {
    fe_attr *a = &k->attrs.data[i];
    if (!strcmp(a->name, "zeroed")) continue; /* repeatable, one parameter each: lower_zeroed */
    for (int j = 0; j < i; j++)
      if (!strcmp(k->attrs.data[j].name, a->name)) {
        tl_error(L->ctx, a->loc, "attribute '@%s' given twice", a->name);
        tl_note(L->ctx, k->attrs.data[j].loc, "previous '@%s' is here", a->name);
        goto next;
      }
    if (!strcmp(a->name, "pipeline")) {
      static const char *names[] = {"", "simple", "multistage", "cutlass"};
      int p = 0;
      for (int j = 1; j < 4; j++)
        if (a->word && !strcmp(a->word, names[j])) p = j;
      if (!p) tl_error(L->ctx, a->arg_loc, "@pipeline takes simple, multistage or cutlass");
      f->pipeline = p;
    } else if (!strcmp(a->name, "warps") || !strcmp(a->name, "stages") || !strcmp(a->name, "maxnreg")) {
      /* integers: lower_attr_ints, once the tile constants are bound */
    } else {
      tl_error(L->ctx, a->loc, "unknown attribute '@%s' (known: @pipeline, @warps, @stages, @maxnreg, @zeroed)", a->name);
    }
  next:;
  }
}

/* A constant expression's value for an integer attribute, in [lo, hi] (and a power of two for
 * @warps), or false with an error at the argument.  The expression may use ARCH, ARCH_SPECIFIC
 * and the kernel's tile constants, so `-D` reaches it through a tile constant. */
static bool attr_int(lower *L, const fe_attr *a, int64_t lo, int64_t hi, bool pow2, const char *range, int64_t *out) {
  int64_t v;
  char what[64];
  snprintf(what, sizeof what, "the argument of @%s", a->name);
  if (!a->value || !lw_const_int(L, a->value, what, &v)) return false;
  if (v < lo || v > hi || (pow2 && !is_pow2(v))) {
    if (a->has_int)
      tl_error(L->ctx, a->arg_loc, "@%s takes %s", a->name, range);
    else
      tl_error(L->ctx, a->arg_loc, "@%s takes %s, not %lld", a->name, range, (long long)v);
    return false;
  }
  *out = v;
  return true;
}

/* @warps(N), @stages(N), @maxnreg(N), after the tile constants and the parameters. */
static void lower_attr_ints(lower *L, fe_kernel *k) {
  tl_func *f = L->f;
  for (int i = 0; i < k->attrs.len; i++) {
    fe_attr *a = &k->attrs.data[i];
    bool twice = false;
    for (int j = 0; j < i && !twice; j++) twice = !strcmp(k->attrs.data[j].name, a->name);
    if (twice) continue; /* reported by lower_attrs */
    int64_t v;
    if (!strcmp(a->name, "warps")) {
      if (attr_int(L, a, 1, 16, true, "1, 2, 4, 8 or 16", &v)) f->warps = (int)v;
    } else if (!strcmp(a->name, "stages")) {
      if (attr_int(L, a, 1, 8, false, "an integer from 1 to 8", &v)) f->stages = (int)v;
    } else if (!strcmp(a->name, "maxnreg")) {
      if (attr_int(L, a, 24, 255, false, "an integer from 24 to 255", &v)) f->maxnreg = (int)v;
    }
  }
}

/* @zeroed(NAME), after the parameters: NAME is a tensor parameter of the kernel, named by one
 * @zeroed only; its tl_param is marked (the tools that make data zero it before each launch). */
static void lower_zeroed(lower *L, fe_kernel *k) {
  tl_func *f = L->f;
  for (int i = 0; i < k->attrs.len; i++) {
    fe_attr *a = &k->attrs.data[i];
    if (strcmp(a->name, "zeroed")) continue;
    if (!a->word) {
      tl_error(L->ctx, a->arg_loc, "@zeroed takes the name of a tensor parameter");
      continue;
    }
    int pi = -1;
    for (int j = 0; j < f->params.len && pi < 0; j++)
      if (!strcmp(f->params.data[j].name, a->word)) pi = j;
    if (pi < 0) {
      tl_error(L->ctx, a->arg_loc, "@zeroed(%s): kernel '%s' has no parameter named '%s'", a->word, k->name, a->word);
      continue;
    }
    tl_param *pa = &f->params.data[pi];
    if (!pa->is_tensor) {
      tl_error(L->ctx, a->arg_loc, "@zeroed(%s): '%s' is a scalar parameter; @zeroed names a tensor", a->word, a->word);
      tl_note(L->ctx, pa->loc, "'%s' is declared here", a->word);
      continue;
    }
    bool twice = false;
    for (int j = 0; j < i && !twice; j++)
      if (!strcmp(k->attrs.data[j].name, "zeroed") && k->attrs.data[j].word && !strcmp(k->attrs.data[j].word, a->word)) {
        tl_error(L->ctx, a->arg_loc, "@zeroed(%s) given twice", a->word);
        tl_note(L->ctx, k->attrs.data[j].arg_loc, "previous @zeroed(%s) is here", a->word);
        twice = true;
      }
    if (!twice) pa->zeroed = true;
  }
}

static void lower_kernel(lower *L, tl_module *m, fe_kernel *k, const tl_define *defs, int ndefs, bool *def_used) {
  tl_func *f = tl_func_new(m, k->name, k->loc);
  L->f = f;
  L->k = k;
  L->env.len = 0;
  L->ended.len = 0;
  L->scope = 0;
  L->in_grid = false;
  L->ndim_body = L->ndim_grid = 0;
  lower_attrs(L, k);
  /* the predefined constants (a -D override replaces the target's value), then the tile
   * constants, in order (a -D override replaces the written value) */
  L->r = &f->body;
  for (int i = 0; predefined_names[i]; i++) {
    int64_t v = i == 0 ? L->arch : L->arch_specific;
    for (int d = ndefs - 1; d >= 0; d--)
      if (!strcmp(defs[d].name, predefined_names[i])) {
        v = defs[d].value;
        def_used[d] = true;
        break;
      }
    bind(L, predefined_names[i], B_CONST, fv_int(TL_I32, v, true), k->loc);
  }
  for (int i = 0; i < k->consts.len; i++) {
    fe_const *c = &k->consts.data[i];
    int64_t v = 0;
    bool over = false;
    for (int d = ndefs - 1; d >= 0; d--)
      if (!strcmp(defs[d].name, c->name)) {
        v = defs[d].value;
        over = true;
        def_used[d] = true;
        break;
      }
    if (!over && !lw_const_int(L, c->value, "a tile constant", &v)) v = 0;
    if (!declare_ok(L, c->name, c->loc, "tile constant")) continue;
    tl_tileconst tc = {c->name, v, over, c->loc};
    tl_vec_push(&L->ctx->arena, &f->consts, tc);
    bind(L, c->name, B_CONST, fv_int(TL_I32, v, true), c->loc);
  }
  /* parameters: first bind scalars (a dimension may not name one), then tensors */
  if (k->params.len > FE_MAX_PARAMS)
    tl_error(L->ctx, k->params.data[FE_MAX_PARAMS].loc, "kernel '%s' has %d parameters; the limit is %d", k->name,
             k->params.len, FE_MAX_PARAMS);
  for (int i = 0; i < k->params.len; i++) {
    fe_param *p = &k->params.data[i];
    bool ok = declare_ok(L, p->name, p->loc, "parameter");
    tl_param tp;
    memset(&tp, 0, sizeof tp);
    tp.name = p->name;
    tp.is_tensor = p->is_tensor;
    tp.dtype = p->dtype == TL_VOID ? TL_F32 : p->dtype;
    tp.rank = p->rank;
    tp.loc = p->loc;
    for (int d = 0; d < p->rank; d++) {
      fe_dim *dm = &p->dims[d];
      tl_dimspec *ds = &tp.dims[d];
      if (!dm->name) {
        if (dm->value <= 0) tl_error(L->ctx, dm->loc, "a tensor dimension must be positive");
        ds->is_const = true;
        ds->value = dm->value;
        continue;
      }
      int b = lw_lookup(L, dm->name);
      if (b >= 0 && L->env.data[b].kind == B_CONST) {
        ds->is_const = true;
        ds->value = L->env.data[b].v.i;
      } else if (b >= 0 && L->env.data[b].kind == B_SYM) {
        ds->sym = L->env.data[b].sym;
      } else if (b >= 0) {
        tl_error(L->ctx, dm->loc, "dimension '%s' names a %s; a dimension is a shape symbol, a tile constant or an integer",
                 dm->name, bkind_name(L->env.data[b].kind));
        tl_note(L->ctx, L->env.data[b].loc, "'%s' is declared here", dm->name);
      } else if (fe_is_reserved(dm->name)) {
        tl_error(L->ctx, dm->loc, "'%s' is a builtin name and cannot be a shape symbol", dm->name);
      } else {
        tl_sym sym = {dm->name, f->params.len, d};
        ds->sym = f->syms.len;
        tl_vec_push(&L->ctx->arena, &f->syms, sym);
        bind(L, dm->name, B_SYM, fv_err(), dm->loc);
        L->env.data[L->env.len - 1].sym = ds->sym;
      }
    }
    int idx = tl_func_add_param(f, &tp);
    fval v = fv_value(f, f->params.data[idx].value);
    v.param = idx;
    if (ok) bind(L, p->name, p->is_tensor ? B_TENSOR : B_SCALAR_PARAM, v, p->loc);
  }
  lower_zeroed(L, k);
  L->in_attr = true;
  lower_attr_ints(L, k); /* with every name bound: a parameter in an attribute is "not a constant" */
  L->in_attr = false;
  L->sym_body = tl_alloc(&L->ctx->arena, sizeof(int32_t) * (size_t)(f->syms.len + 1));
  L->sym_grid = tl_alloc(&L->ctx->arena, sizeof(int32_t) * (size_t)(f->syms.len + 1));
  for (int i = 0; i < f->syms.len; i++) L->sym_body[i] = L->sym_grid[i] = -1;
  /* the grid clause */
  if (!k->has_grid) {
    tl_error(L->ctx, k->loc, "kernel '%s' has no grid(...) clause", k->name);
  } else {
    L->in_grid = true;
    L->in_extent++; /* (the grid counts tiles: tile constants there are tiling uses) */
    L->r = &f->grid;
    int32_t ops[FE_MAX_GRID];
    int n = 0;
    bool ok = true;
    if (k->grid.len > FE_MAX_GRID) {
      tl_error(L->ctx, k->grid.data[FE_MAX_GRID]->loc, "grid has %d dimensions; at most %d", k->grid.len, FE_MAX_GRID);
      ok = false;
    }
    for (int i = 0; i < k->grid.len && i < FE_MAX_GRID; i++) {
      fe_expr *g = k->grid.data[i];
      fval v = lw_eval(L, g);
      if (v.cls == V_ERR) { ok = false; continue; }
      if (v.cls != V_SCALAR || !is_int(dt_of(&v)) || (!v.weak && dt_of(&v) != TL_I32)) {
        tl_error(L->ctx, g->loc, "a grid dimension must be an i32 scalar, not %s",
                 is_val(&v) ? lw_tystr(L, &v) : lw_operand_kind_error(&v));
        ok = false;
        continue;
      }
      v = lw_to_index(L, v, "a grid dimension", g->loc);
      if (v.cls == V_ERR) { ok = false; continue; }
      if (v.is_const && v.i <= 0) {
        tl_error(L->ctx, g->loc, "a grid dimension must be positive, not %lld", (long long)v.i);
        ok = false;
        continue;
      }
      ops[n++] = lw_mat(L, &v, g->loc);
    }
    if (ok) tl_op_new(f, &f->grid, TL_OP_yield, ops, n, NULL, 0, k->grid_loc);
    L->in_grid = false;
    L->in_extent--;
  }
  /* the body */
  L->r = &f->body;
  lower_block(L, k->body);
}

tl_module *fe_lower(tl_ctx *c, fe_program *p, const char *arch, const tl_define *defs, int ndefs) {
  int errors = c->nerrors;
  lower L;
  memset(&L, 0, sizeof L);
  L.ctx = c;
  int32_t sm = 90;
  bool specific = true;
  if (arch && !tl_mma_parse_arch(arch, &sm, &specific)) {
    tl_error(c, TL_NOLOC, "unknown target '%s' (sm_80, sm_86, sm_89, sm_90, sm_90a)", arch);
    return NULL;
  }
  L.arch = sm;
  L.arch_specific = specific ? sm : 0;
  tl_module *m = tl_module_new(c);
  bool *def_used = tl_alloc(&c->arena, sizeof(bool) * (size_t)(ndefs + 1));
  for (int i = 0; i < p->kernels.len; i++) {
    fe_kernel *k = p->kernels.data[i];
    for (int j = 0; j < i; j++)
      if (!strcmp(p->kernels.data[j]->name, k->name)) {
        tl_error(c, k->loc, "kernel '%s' is defined twice", k->name);
        tl_note(c, p->kernels.data[j]->loc, "previous definition is here");
        break;
      }
    lower_kernel(&L, m, k, defs, ndefs, def_used);
  }
  for (int d = 0; d < ndefs; d++)
    if (!def_used[d]) tl_error(c, TL_NOLOC, "-D %s: no kernel has a tile constant named '%s'", defs[d].name, defs[d].name);
  if (p->kernels.len == 0 && c->nerrors == errors) tl_error(c, TL_NOLOC, "no kernel in the input");
  return c->nerrors > errors ? NULL : m;
}
