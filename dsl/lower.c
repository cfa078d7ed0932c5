/* lower.c: checked AST -> tile IR, in one walk (sema and lowering together).
 * requires: a parsed program; keeps: every value the IR gets is well typed
 * (elementwise operands of one type: broadcasting, promotion and scalar
 * conversion are explicit splat/expand_dims/broadcast/cast ops), constants
 * are folded and materialized where they are used, shape symbols become `dim`
 * ops at the top of the region that uses them; reports: names, types, shapes,
 * non-constant view lengths and tile shapes, limits, static_assert.  An
 * expression in error evaluates to an error value that is silent from then
 * on, so one mistake gives one diagnostic. */
#include "ast.h"
#include "fpconv.h"
#include "mma_tiling.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- values during checking ---------------------------------------------- */
typedef enum { V_ERR = 0, V_VOID, V_SCALAR, V_TILE, V_TENSOR } vclass;

typedef struct fval {
  vclass cls;
  bool weak;     /* a literal: adopts the other operand's type */
  bool is_const; /* value known at compile time (i or f) */
  tl_type ty;    /* scalar / tile type; tensor type for V_TENSOR */
  int32_t id;    /* IR value, -1 while a constant is not materialized */
  int64_t i;     /* constant, integer dtypes */
  double f;      /* constant, float dtypes */
  int param;     /* V_TENSOR: parameter index */
} fval;

typedef enum { B_VALUE, B_TENSOR, B_SCALAR_PARAM, B_CONST, B_SYM, B_LOOPVAR } bkind;

typedef struct binding {
  const char *name;
  bkind kind;
  fval v;
  tl_loc loc;
  int scope;
  int sym; /* B_SYM */
} binding;

typedef struct lower {
  tl_ctx *ctx;
  tl_func *f;
  fe_kernel *k;
  tl_region *r; /* where ops go */
  bool in_grid;
  bool in_require; /* (with in_grid) the condition of a require(): names computed in the body are refused */
  TL_VEC(binding) env;
  int scope;
  int32_t *sym_body, *sym_grid; /* dim value per shape symbol, -1 = none yet */
  bool in_attr;                  /* evaluating @warps/@stages/@maxnreg: no dim values yet */
  int ndim_body, ndim_grid;
  int64_t arch, arch_specific;  /* the predefined constants ARCH, ARCH_SPECIFIC of the target */
} lower;

static fval fv_err(void) { fval v; memset(&v, 0, sizeof v); v.cls = V_ERR; v.id = -1; return v; }
static fval fv_void(void) { fval v = fv_err(); v.cls = V_VOID; return v; }

static fval fv_value(tl_func *f, int32_t id) {
  fval v = fv_err();
  v.ty = tl_val(f, id)->type;
  v.cls = v.ty.kind == TL_KIND_TILE ? V_TILE : v.ty.kind == TL_KIND_TENSOR ? V_TENSOR : V_SCALAR;
  v.id = id;
  return v;
}

static fval fv_int(tl_dtype d, int64_t x, bool weak) {
  fval v = fv_err();
  v.cls = V_SCALAR;
  v.ty = tl_scalar_type(d);
  v.is_const = true;
  v.weak = weak;
  v.i = x;
  v.f = (double)x;
  return v;
}

static fval fv_float(tl_dtype d, double x, bool weak) {
  fval v = fv_int(d, 0, weak);
  v.f = x;
  v.i = 0;
  return v;
}

static bool is_flt(tl_dtype d) { return tl_dtype_is_float(d); }
static bool is_int(tl_dtype d) { return tl_dtype_is_int(d); }
static bool is_val(const fval *v) { return v->cls == V_SCALAR || v->cls == V_TILE; }
static tl_dtype dt_of(const fval *v) { return (tl_dtype)v->ty.dtype; }

static const char *tystr(lower *L, const fval *v) {
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

static bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/* One extent of a tile (a shape entry, a range's length, a ':' view) must be a
 * power of two within the tile limit; WHAT names it in the one wording every
 * site shares ("WHAT V is not a power of two" / "exceeds the tile limit"). */
static bool tile_extent_ok(lower *L, tl_loc loc, const char *what, int64_t v) {
  if (is_pow2(v) && v <= TL_MAX_TILE_ELEMS) return true;
  if (is_pow2(v))
    tl_error(L->ctx, loc, "%s %lld exceeds the tile limit of %d elements", what, (long long)v, TL_MAX_TILE_ELEMS);
  else
    tl_error(L->ctx, loc, "%s %lld is not a power of two", what, (long long)v);
  return false;
}

/* ---- environment ----------------------------------------------------------- */
static int lookup(lower *L, const char *name) {
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
static void pop_scope(lower *L, int mark) { L->env.len = mark; L->scope--; }

static const char *builtin_names[] = {
  "load", "store", "where", "fma", "min", "max", "abs", "exp", "exp2", "log", "log2", "sqrt", "rsqrt",
  "sin", "cos", "tanh", "sigmoid", "floor", "ceil", "cast", "zeros", "full", "iota", "dot", "trans",
  "reduce_sum", "reduce_max", "reduce_min", "program_id", "num_programs", "cdiv", "static_assert",
  "require", "range", "atomic_add", "atomic_max", "atomic_min", "atomic_fetch_add", "rand", "randn", "randint", "cumsum", "cummax", "argmax", "argmin", "cat", "bitcast", "sort", "reshape", "permute", NULL};

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
  return fe_is_predefined(name) ? "a predefined constant" : "a builtin name";
}

bool fe_is_reserved(const char *name) {
  if (fe_is_predefined(name)) return true;
  for (int i = 0; builtin_names[i]; i++)
    if (!strcmp(builtin_names[i], name)) return true;
  return tl_dtype_from_name(name, strlen(name)) != TL_VOID;
}

/* ---- emitting ---------------------------------------------------------------- */
static int32_t emit(lower *L, tl_opcode opc, const int32_t *ops, int n, tl_type rt, tl_loc loc, int32_t *opid) {
  int32_t op = tl_op_new(L->f, L->r, opc, ops, n, &rt, 1, loc);
  if (opid) *opid = op;
  return tl_op_result(L->f, op, 0);
}

/* The IR value of v (materializing a constant in the current region). */
static int32_t mat(lower *L, fval *v, tl_loc loc) {
  if (v->id >= 0) return v->id;
  TL_CHECK(L->ctx, v->is_const);
  tl_type t = v->ty;
  if (is_flt(dt_of(v)))
    return tl_build_const_f(L->f, L->r, t, v->f, loc);
  return tl_build_const_i(L->f, L->r, t, v->i, loc);
}

/* Convert v to dtype d (same shape); constants fold. */
static fval convert(lower *L, fval v, tl_dtype d, tl_loc loc) {
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
        r.i = v.i < lo ? lo : v.i > hi ? hi : v.i; /* saturating, like cast */
      }
    }
    r.id = -1;
    return r;
  }
  int32_t a = mat(L, &v, loc);
  r.id = emit(L, TL_OP_cast, &a, 1, r.ty, loc, NULL);
  return r;
}

/* Broadcast v to a tile of `rank`/`shape` (v's shape must be compatible). */
static fval to_shape(lower *L, fval v, int rank, const int32_t *shape, tl_loc loc) {
  if (rank == 0) return v;
  tl_type want = tl_tile_type(dt_of(&v), rank, shape);
  if (v.is_const) { /* constants are splats: just retype */
    v.ty = want;
    v.cls = V_TILE;
    v.id = -1;
    return v;
  }
  if (v.cls == V_SCALAR) {
    int32_t a = mat(L, &v, loc);
    return fv_value(L->f, emit(L, TL_OP_splat, &a, 1, want, loc, NULL));
  }
  /* prepend size-1 dims (numpy aligns shapes on the right) */
  while (v.ty.rank < rank) {
    int32_t nshape[TL_MAX_RANK];
    nshape[0] = 1;
    for (int i = 0; i < v.ty.rank; i++) nshape[i + 1] = v.ty.shape[i];
    tl_type t = tl_tile_type(dt_of(&v), v.ty.rank + 1, nshape);
    int32_t op, a = v.id;
    int32_t res = emit(L, TL_OP_expand_dims, &a, 1, t, loc, &op);
    tl_op_at(L->f, op)->axis = 0;
    v = fv_value(L->f, res);
  }
  if (!tl_type_eq(&v.ty, &want)) {
    int32_t a = v.id;
    v = fv_value(L->f, emit(L, TL_OP_broadcast, &a, 1, want, loc, NULL));
  }
  return v;
}

/* numpy broadcasting of two shapes; false when incompatible. */
static bool bcast(int ra, const int32_t *sa, int rb, const int32_t *sb, int *rr, int32_t *sr) {
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

static void shape_str(int rank, const int32_t *s, char *buf, size_t n) {
  size_t used = (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < rank && used < n; i++) used += (size_t)snprintf(buf + used, n - used, "%s%d", i ? ", " : "", s[i]);
  if (used < n) snprintf(buf + used, n - used, "]");
}

/* Check a tile shape made by the user: rank, powers of two, element count. */
static bool check_tile_shape(lower *L, tl_loc loc, int rank, const int32_t *shape) {
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
static tl_dtype unify(lower *L, const char *what, const fval *a, const fval *b, tl_loc loc, bool *weak) {
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
               tystr(L, other));
      return TL_VOID;
    }
    if (d == TL_I1) {
      tl_error(L->ctx, loc, "%s: an integer literal cannot be combined with an i1 value; use true or false", what);
      return TL_VOID;
    }
    return d;
  }
  if (da == db) return da;
  if (a->cls == V_TILE && b->cls == V_TILE) {
    tl_error(L->ctx, loc, "%s: operands have different element types (%s and %s); use cast<T>()", what,
             tystr(L, a), tystr(L, b));
    return TL_VOID;
  }
  if (a->cls == V_TILE || b->cls == V_TILE) {
    const fval *t = a->cls == V_TILE ? a : b, *s = a->cls == V_TILE ? b : a;
    tl_dtype dt = dt_of(t), ds = dt_of(s);
    if (is_flt(dt) || (is_int(ds) && dt != TL_I1 && ds != TL_I1)) return dt; /* the scalar converts */
    tl_error(L->ctx, loc, "%s: %s cannot be combined with %s; use cast<T>()", what, tystr(L, s), tystr(L, t));
    return TL_VOID;
  }
  /* two scalars: float over int, then the wider; ties of equal width -> f32 / next int */
  if (is_flt(da) != is_flt(db)) return is_flt(da) ? da : db;
  if (da == TL_I1 || db == TL_I1) {
    tl_error(L->ctx, loc, "%s: an i1 value cannot be combined with %s", what, tystr(L, da == TL_I1 ? b : a));
    return TL_VOID;
  }
  int ba = tl_dtype_bits(da), bb = tl_dtype_bits(db);
  if (ba != bb) return ba > bb ? da : db;
  if (is_flt(da)) return TL_F32;
  return ba == 8 ? TL_I16 : TL_I64;
}

/* ---- binary operators -------------------------------------------------------- */
typedef enum { BO_ADD, BO_SUB, BO_MUL, BO_DIV, BO_REM, BO_MIN, BO_MAX, BO_AND, BO_OR,
               BO_BAND, BO_BOR, BO_BXOR, BO_SHL, BO_SHR,
               BO_EQ, BO_NE, BO_LT, BO_LE, BO_GT, BO_GE } binop_kind;
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

static const char *operand_kind_error(const fval *v) {
  return v->cls == V_TENSOR ? "a tensor (load() a view of it first)" : "no value (store() returns nothing)";
}

static fval binop(lower *L, binop_kind k, fval a, fval b, tl_loc loc) {
  if (a.cls == V_ERR || b.cls == V_ERR) return fv_err();
  const char *what = binop_name[k];
  if (!is_val(&a) || !is_val(&b)) {
    tl_error(L->ctx, loc, "operand of %s is %s", what, operand_kind_error(is_val(&a) ? &b : &a));
    return fv_err();
  }
  bool weak;
  tl_dtype d;
  if (k == BO_AND || k == BO_OR) {
    if (dt_of(&a) != TL_I1 || dt_of(&b) != TL_I1 || a.weak || b.weak) {
      tl_error(L->ctx, loc, "operands of %s must be i1 (comparisons, true, false), not %s", what,
               tystr(L, dt_of(&a) != TL_I1 || a.weak ? &a : &b));
      return fv_err();
    }
    d = TL_I1;
    weak = false;
  } else {
    d = unify(L, what, &a, &b, loc, &weak);
    if (d == TL_VOID) return fv_err();
    if (is_bitop(k) && (is_flt(d) || (d == TL_I1 && (k == BO_SHL || k == BO_SHR)))) {
      tl_error(L->ctx, loc, "%s needs integer operands%s, not %s; use bitcast<T>() for the bits of a float", what,
               k == BO_SHL || k == BO_SHR ? "" : " (or i1)", tystr(L, is_flt(dt_of(&a)) || dt_of(&a) == TL_I1 ? &a : &b));
      return fv_err();
    }
    if (d == TL_I1 && !is_cmp(k) && !is_bitop(k)) {
      tl_error(L->ctx, loc, "arithmetic %s on i1 values; use && || ! or cast<i32>()", what);
      return fv_err();
    }
  }
  int rank = 0;
  int32_t shape[TL_MAX_RANK];
  if (!bcast(a.cls == V_TILE ? a.ty.rank : 0, a.ty.shape, b.cls == V_TILE ? b.ty.rank : 0, b.ty.shape, &rank, shape)) {
    char sa[64], sb[64];
    shape_str(a.ty.rank, a.ty.shape, sa, sizeof sa);
    shape_str(b.ty.rank, b.ty.shape, sb, sizeof sb);
    tl_error(L->ctx, loc, "%s: shapes %s and %s do not broadcast", what, sa, sb);
    return fv_err();
  }
  tl_dtype rd = is_cmp(k) ? TL_I1 : d;
  if (a.is_const && b.is_const) {
    fval ca = convert(L, a, d, loc), cb = convert(L, b, d, loc);
    fval r;
    if (is_flt(d)) {
      double x = fold_float(k, ca.f, cb.f);
      /* a typed result rounds to its dtype as the op would at run time (literals alone keep
       * full precision until they meet a type) */
      if (!weak && !is_cmp(k)) x = tl_round_to_dtype(x, d);
      r = is_cmp(k) ? fv_int(TL_I1, x != 0, false) : fv_float(d, x, weak);
    } else {
      int64_t x;
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
  a = to_shape(L, convert(L, a, d, loc), rank, shape, loc);
  b = to_shape(L, convert(L, b, d, loc), rank, shape, loc);
  int32_t ops[2] = {mat(L, &a, loc), mat(L, &b, loc)};
  tl_type rt = rank ? tl_tile_type(rd, rank, shape) : tl_scalar_type(rd);
  static const tl_opcode opcs[] = {TL_OP_add, TL_OP_sub, TL_OP_mul, TL_OP_div, TL_OP_rem, TL_OP_min, TL_OP_max,
                                   TL_OP_and, TL_OP_or,  TL_OP_and, TL_OP_or,  TL_OP_xor, TL_OP_shl, TL_OP_shr};
  int32_t op;
  int32_t res = emit(L, is_cmp(k) ? TL_OP_cmp : opcs[k], ops, 2, rt, loc, &op);
  if (is_cmp(k)) {
    static const int preds[] = {TL_CMP_EQ, TL_CMP_NE, TL_CMP_LT, TL_CMP_LE, TL_CMP_GT, TL_CMP_GE};
    tl_op_at(L->f, op)->kind = preds[k - BO_EQ];
  }
  return fv_value(L->f, res);
}

/* ---- expressions -------------------------------------------------------------- */
static fval eval(lower *L, fe_expr *e);

/* Scalar integer -> i32 (views, loop bounds, grid). */
static fval to_index(lower *L, fval v, const char *what, tl_loc loc) {
  if (v.cls == V_ERR) return v;
  if (v.cls != V_SCALAR || !is_int(dt_of(&v)) || dt_of(&v) == TL_I1) {
    tl_error(L->ctx, loc, "%s must be an integer scalar, not %s", what,
             v.cls == V_SCALAR || v.cls == V_TILE ? tystr(L, &v) : operand_kind_error(&v));
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
  return convert(L, v, TL_I32, loc);
}

/* Compile-time integer value of e, or false (error reported with `what`). */
static bool const_int(lower *L, fe_expr *e, const char *what, int64_t *out) {
  fval v = eval(L, e);
  if (v.cls == V_ERR) return false;
  if (v.cls != V_SCALAR || !v.is_const || !is_int(dt_of(&v))) {
    tl_error(L->ctx, e->loc, "%s must be a compile-time integer constant", what);
    return false;
  }
  *out = v.i;
  return true;
}

static fval eval_name(lower *L, fe_expr *e) {
  int i = lookup(L, e->name);
  if (i < 0) {
    if (fe_is_reserved(e->name))
      tl_error(L->ctx, e->loc, "'%s' is a builtin, not a value", e->name);
    else
      tl_error(L->ctx, e->loc, "undefined name '%s'", e->name);
    bind(L, e->name, B_VALUE, fv_err(), e->loc); /* report once */
    return fv_err();
  }
  binding *b = &L->env.data[i];
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
  fval a = eval(L, e->a);
  if (a.cls == V_ERR) return a;
  const char *what = e->op == TK_MINUS ? "'-'" : "'!'";
  if (!is_val(&a)) {
    tl_error(L->ctx, e->loc, "operand of %s is %s", what, operand_kind_error(&a));
    return fv_err();
  }
  tl_dtype d = dt_of(&a);
  if (e->op == TK_NOT) {
    if (d != TL_I1) {
      tl_error(L->ctx, e->loc, "operand of '!' must be i1, not %s", tystr(L, &a));
      return fv_err();
    }
    if (a.is_const) { a.i = !a.i; return a; }
    int32_t x = mat(L, &a, e->loc);
    return fv_value(L->f, emit(L, TL_OP_not, &x, 1, a.ty, e->loc, NULL));
  }
  if (d == TL_I1 || d == TL_U8) {
    tl_error(L->ctx, e->loc, "operand of '-' cannot be %s", tystr(L, &a));
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
  int32_t x = mat(L, &a, e->loc);
  return fv_value(L->f, emit(L, TL_OP_neg, &x, 1, a.ty, e->loc, NULL));
}

/* A uniform scalar condition as an i1 value (ints compare != 0). */
static fval to_cond(lower *L, fval c, const char *what, tl_loc loc) {
  if (c.cls == V_ERR) return c;
  if (c.cls != V_SCALAR) {
    if (c.cls == V_TILE)
      tl_error(L->ctx, loc, "%s must be a uniform scalar, not %s; use where() to choose elementwise", what,
               tystr(L, &c));
    else
      tl_error(L->ctx, loc, "%s is %s", what, operand_kind_error(&c));
    return fv_err();
  }
  if (is_flt(dt_of(&c))) {
    tl_error(L->ctx, loc, "%s must be i1 or an integer, not %s", what, tystr(L, &c));
    return fv_err();
  }
  if (dt_of(&c) == TL_I1) return c;
  return binop(L, BO_NE, c, fv_int(TL_I32, 0, true), loc);
}

static fval eval_ternary(lower *L, fe_expr *e) {
  fval c = to_cond(L, eval(L, e->a), "the condition of '?:'", e->a->loc);
  if (c.cls == V_ERR) return c;
  if (c.is_const) return eval(L, c.i ? e->b : e->c); /* the other arm is not evaluated */
  fval a = eval(L, e->b), b = eval(L, e->c);
  if (a.cls == V_ERR || b.cls == V_ERR) return fv_err();
  if (a.cls != V_SCALAR || b.cls != V_SCALAR) {
    tl_error(L->ctx, e->loc, "the arms of '?:' must be scalars; use where() for tiles");
    return fv_err();
  }
  bool weak;
  tl_dtype d = unify(L, "'?:'", &a, &b, e->loc, &weak);
  if (d == TL_VOID) return fv_err();
  a = convert(L, a, d, e->loc);
  b = convert(L, b, d, e->loc);
  int32_t ops[3] = {mat(L, &c, e->loc), mat(L, &a, e->loc), mat(L, &b, e->loc)};
  return fv_value(L->f, emit(L, TL_OP_select, ops, 3, tl_scalar_type(d), e->loc, NULL));
}

/* t[:, None] and friends: insert size-1 dimensions into a tile. */
static fval eval_index(lower *L, fe_expr *e) {
  fval t = eval(L, e->a);
  if (t.cls == V_ERR) return t;
  if (t.cls == V_TENSOR) {
    tl_error(L->ctx, e->loc, "a view of a tensor must be the argument of load() or store()");
    return fv_err();
  }
  if (t.cls != V_TILE) {
    tl_error(L->ctx, e->loc, "only tiles can be indexed with ':' and None, not %s",
             t.cls == V_SCALAR ? tystr(L, &t) : operand_kind_error(&t));
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
        if (!const_int(L, it->lo, "the start of a tile slice", &lo) || !const_int(L, it->hi, "the end of a tile slice", &hi))
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
      int32_t res = emit(L, TL_OP_slice, &a, 1, nt, e->loc, &op);
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
    int32_t res = emit(L, TL_OP_expand_dims, &a, 1, nt, e->loc, &op);
    tl_op_at(L->f, op)->axis = i;
    t = fv_value(L->f, res);
  }
  return t;
}

/* ---- views: T[i, a : a + C, :] ------------------------------------------- */
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
    int i = lookup(L, e->name);
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

typedef struct view {
  int param;
  int32_t tensor;
  int rank;                 /* the tensor's */
  int32_t start[TL_MAX_RANK];
  int32_t dims[TL_MAX_RANK]; /* 0 = indexed */
  int trank;                /* the tile's */
  int32_t tshape[TL_MAX_RANK];
  tl_dtype dtype;
  const char *name;
  bool gather[TL_MAX_RANK]; /* start[d] is an i32 index tile of the view's shape */
} view;

/* Range view d of tensor parameter `param` of length len, its end `hi`: note which tile constant
 * names the length (tl_param.view_const: `x : x + C` or `x : C + x` with C a tile constant of
 * value len; any other view of that dimension makes it -1). */
static void note_view_const(lower *L, int param, int d, const fe_expr *hi, int64_t len) {
  int16_t found = 0;
  if (hi->kind == EX_BINARY && hi->op == TK_PLUS) {
    const fe_expr *side[2] = {hi->a, hi->b};
    for (int s = 0; s < 2 && !found; s++) {
      if (side[s]->kind != EX_NAME) continue;
      int b = lookup(L, side[s]->name);
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

static bool lower_view(lower *L, fe_expr *e, const char *fn, view *out) {
  memset(out, 0, sizeof *out);
  if (e->kind == EX_ERROR) return false;
  fe_expr *base = e->kind == EX_INDEX ? e->a : e;
  fval t = eval(L, base);
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
      fval x = eval(L, it->lo);
      if (x.cls == V_TILE) { /* a gather / scatter index: one tile dim, an index per row */
        if (x.ty.rank != 1 || !is_int(dt_of(&x)) || dt_of(&x) == TL_I1) {
          tl_error(L->ctx, it->lo->loc, "a tile in a view must be a rank-1 integer tile of indices (a gather), not %s",
                   tystr(L, &x));
          ok = false;
          continue;
        }
        start = convert(L, x, TL_I32, it->lo->loc);
        out->dims[d] = x.ty.shape[0];
        out->gather[d] = true;
        break;
      }
      start = to_index(L, x, "a view index", it->lo->loc);
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
      if (!tile_extent_ok(L, it->loc, what, ds->value)) {
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
      start = to_index(L, eval(L, it->lo), "a range start", it->lo->loc);
      if (!lin) {
        tl_error(L->ctx, it->loc, "the length of this range is not a compile-time constant; write it as a : a + C");
        ok = false;
        continue;
      }
      if (!tile_extent_ok(L, it->loc, "range length", A.c)) {
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
    out->start[d] = mat(L, &start, it->loc);
    if (out->dims[d]) out->tshape[out->trank++] = out->dims[d];
  }
  if (!ok) return false;
  if (out->trank == 0) return true; /* every entry an index: one element, a scalar */
  if (!check_tile_shape(L, e->loc, out->trank, out->tshape)) return false;
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
        int32_t res = emit(L, TL_OP_expand_dims, &a, 1, tl_tile_type(TL_I32, r + 1, shape), e->loc, &op);
        tl_op_at(L->f, op)->axis = j;
        x = fv_value(L->f, res);
      }
      out->start[d] = to_shape(L, x, out->trank, out->tshape, e->loc).id;
    }
    tpos++;
  }
  return true;
}

/* ---- builtin calls ------------------------------------------------------- */
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
  if (!lower_view(L, e->args[0], "load", &v)) return fv_err();
  int32_t ops[TL_MAX_RANK + 2];
  int n = 0;
  ops[n++] = v.tensor;
  for (int d = 0; d < v.rank; d++) ops[n++] = v.start[d];
  if (other_e) {
    fval o = eval(L, other_e);
    if (o.cls == V_ERR) return o;
    if (o.cls != V_SCALAR) {
      tl_error(L->ctx, other_e->loc, "'other' must be a scalar, not %s",
               o.cls == V_TILE ? tystr(L, &o) : operand_kind_error(&o));
      return fv_err();
    }
    if (is_flt(dt_of(&o)) && !is_flt(v.dtype)) {
      tl_error(L->ctx, other_e->loc, "'other' is %s but '%s' holds %s", tystr(L, &o), v.name, tl_dtype_name(v.dtype));
      return fv_err();
    }
    o = convert(L, o, v.dtype, other_e->loc);
    ops[n++] = mat(L, &o, other_e->loc);
  }
  int32_t op;
  tl_type rt = v.trank ? tl_tile_type(v.dtype, v.trank, v.tshape) : tl_scalar_type(v.dtype);
  int32_t res = emit(L, TL_OP_load, ops, n, rt, e->loc, &op);
  for (int d = 0; d < v.rank; d++) tl_op_at(L->f, op)->dims[d] = v.dims[d];
  return fv_value(L->f, res);
}

/* store(view, x) and atomic_*(view, x) (opc TL_OP_atomic, kind TL_ATOMIC_*):
 * the same view and value rules.  atomic_fetch_add(view, x) is the one with a
 * value: a scalar view of an i32 tensor, the old element (docs/language.md 7). */
static fval eval_store_like(lower *L, fe_expr *e, tl_opcode opc, int kind) {
  if (!nargs_ok(L, e, 2, 2)) return fv_err();
  view v;
  bool ok = lower_view(L, e->args[0], e->name, &v);
  fval x = eval(L, e->args[1]);
  if (!ok || x.cls == V_ERR) return fv_err();
  tl_loc xl = e->args[1]->loc;
  bool fetch = opc == TL_OP_atomic && kind == TL_ATOMIC_FETCH_ADD;
  if (fetch && (v.trank != 0 || v.dtype != TL_I32)) {
    tl_error(L->ctx, e->loc, "atomic_fetch_add() takes one element of an i32 tensor (every view entry an index); "
             "'%s' is a tensor of %s%s", v.name, tl_dtype_name(v.dtype), v.trank ? " viewed as a tile" : "");
    return fv_err();
  }
  if (fetch && (x.cls != V_SCALAR || is_flt(dt_of(&x)))) {
    tl_error(L->ctx, xl, "atomic_fetch_add() adds an integer scalar, not %s", x.cls == V_SCALAR ? tystr(L, &x) : "a tile");
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
    tl_error(L->ctx, xl, "the value stored is %s", operand_kind_error(&x));
    return fv_err();
  }
  if (x.cls == V_TILE && dt_of(&x) != v.dtype) {
    tl_error(L->ctx, xl, "storing %s into '%s', a tensor of %s; use cast<%s>()", tystr(L, &x), v.name,
             tl_dtype_name(v.dtype), tl_dtype_name(v.dtype));
    return fv_err();
  }
  if (x.cls == V_SCALAR && is_flt(dt_of(&x)) && !is_flt(v.dtype)) {
    tl_error(L->ctx, xl, "storing %s into '%s', a tensor of %s", tystr(L, &x), v.name, tl_dtype_name(v.dtype));
    return fv_err();
  }
  int rank;
  int32_t shape[TL_MAX_RANK];
  if (!bcast(x.cls == V_TILE ? x.ty.rank : 0, x.ty.shape, v.trank, v.tshape, &rank, shape) || rank != v.trank ||
      memcmp(shape, v.tshape, sizeof(int32_t) * (size_t)rank) != 0) {
    char sx[64], sv[64];
    shape_str(x.cls == V_TILE ? x.ty.rank : 0, x.ty.shape, sx, sizeof sx);
    shape_str(v.trank, v.tshape, sv, sizeof sv);
    tl_error(L->ctx, xl, "the value stored has shape %s, the view has shape %s", sx, sv);
    return fv_err();
  }
  x = to_shape(L, convert(L, x, v.dtype, xl), v.trank, v.tshape, xl);
  int32_t ops[TL_MAX_RANK + 2];
  int n = 0;
  ops[n++] = v.tensor;
  for (int d = 0; d < v.rank; d++) ops[n++] = v.start[d];
  ops[n++] = mat(L, &x, xl);
  tl_type rt = tl_scalar_type(TL_I32);
  int32_t op = tl_op_new(L->f, L->r, opc, ops, n, fetch ? &rt : NULL, fetch ? 1 : 0, e->loc);
  for (int d = 0; d < v.rank; d++) tl_op_at(L->f, op)->dims[d] = v.dims[d];
  tl_op_at(L->f, op)->kind = kind;
  return fetch ? fv_value(L->f, tl_op_at(L->f, op)->res[0]) : fv_void();
}

/* A tile (or scalar) argument; tensors and void are errors. */
static fval value_arg(lower *L, fe_expr *call, int i) {
  fval v = eval(L, call->args[i]);
  if (v.cls == V_ERR || is_val(&v)) return v;
  tl_error(L->ctx, call->args[i]->loc, "argument %d of %s() is %s", i + 1, call->name, operand_kind_error(&v));
  return fv_err();
}

static fval tile_arg(lower *L, fe_expr *call, int i, int rank) {
  fval v = value_arg(L, call, i);
  if (v.cls == V_ERR) return v;
  if (v.cls != V_TILE || (rank && v.ty.rank != rank)) {
    if (rank)
      tl_error(L->ctx, call->args[i]->loc, "argument %d of %s() must be a %d-D tile, not %s", i + 1, call->name, rank,
               tystr(L, &v));
    else
      tl_error(L->ctx, call->args[i]->loc, "argument %d of %s() must be a tile, not %s", i + 1, call->name,
               tystr(L, &v));
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
  if (a.weak) a = convert(L, a, TL_F32, e->loc);
  tl_dtype d = dt_of(&a);
  if (opc == TL_OP_abs ? d == TL_I1 || d == TL_U8 : !is_flt(d)) {
    tl_error(L->ctx, e->args[0]->loc, "%s() needs a %s operand, not %s; use cast<f32>()", e->name,
             opc == TL_OP_abs ? "signed" : "float", tystr(L, &a));
    return fv_err();
  }
  int32_t x = mat(L, &a, e->loc);
  a.weak = false;
  return fv_value(L->f, emit(L, opc, &x, 1, a.ty, e->loc, NULL));
}

/* The broadcast shape of three values (a scalar has rank 0), or false. */
static bool bcast3(const fval *x, const fval *y, const fval *z, int *rank, int32_t *shape) {
  int r1;
  int32_t s1[TL_MAX_RANK];
  return bcast(x->cls == V_TILE ? x->ty.rank : 0, x->ty.shape, y->cls == V_TILE ? y->ty.rank : 0, y->ty.shape, &r1, s1) &&
         bcast(r1, s1, z->cls == V_TILE ? z->ty.rank : 0, z->ty.shape, rank, shape);
}

/* fma(a, b, c): a * b + c with one rounding (f32; a bf16 / f16 result is that f32 rounded
 * once more), on floats, the three broadcast as where()'s are. */
static fval eval_fma(lower *L, fe_expr *e) {
  if (!nargs_ok(L, e, 3, 3)) return fv_err();
  fval a = value_arg(L, e, 0), b = value_arg(L, e, 1), c = value_arg(L, e, 2);
  if (a.cls == V_ERR || b.cls == V_ERR || c.cls == V_ERR) return fv_err();
  bool weak;
  tl_dtype d = unify(L, "fma()", &a, &b, e->loc, &weak);
  if (d == TL_VOID) return fv_err();
  fval ab = a.cls == V_TILE ? a : b; /* a * b's type (a tile's, when one is), for unify() with c */
  ab.ty.dtype = d;
  ab.weak = weak;
  d = unify(L, "fma()", &ab, &c, e->loc, &weak);
  if (d == TL_VOID) return fv_err();
  if (weak) d = TL_F32;
  if (!is_flt(d)) {
    tl_error(L->ctx, e->loc, "fma() needs float operands, not %s; use cast<f32>()", tl_dtype_name(d));
    return fv_err();
  }
  int r2;
  int32_t s2[TL_MAX_RANK];
  if (!bcast3(&a, &b, &c, &r2, s2)) {
    tl_error(L->ctx, e->loc, "the shapes of the fma() arguments do not broadcast");
    return fv_err();
  }
  a = to_shape(L, convert(L, a, d, e->loc), r2, s2, e->loc);
  b = to_shape(L, convert(L, b, d, e->loc), r2, s2, e->loc);
  c = to_shape(L, convert(L, c, d, e->loc), r2, s2, e->loc);
  int32_t ops[3] = {mat(L, &a, e->loc), mat(L, &b, e->loc), mat(L, &c, e->loc)};
  return fv_value(L->f, emit(L, TL_OP_fma, ops, 3, r2 ? tl_tile_type(d, r2, s2) : tl_scalar_type(d), e->loc, NULL));
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
    if (!const_int(L, e->shape[i], "a tile dimension", &v)) return false;
    if (!tile_extent_ok(L, e->shape[i]->loc, "tile dimension", v)) return false;
    shape[i] = (int32_t)v;
  }
  *rank = e->nshape;
  return check_tile_shape(L, e->loc, *rank, shape);
}

static fval eval_reduce(lower *L, fe_expr *e, int kind) {
  if (!nargs_ok(L, e, 2, 2)) return fv_err();
  fval t = tile_arg(L, e, 0, 0);
  int64_t axis;
  if (!const_int(L, e->args[1], "the reduction axis", &axis) || t.cls == V_ERR) return fv_err();
  if (axis < 0) axis += t.ty.rank;
  if (axis < 0 || axis >= t.ty.rank) {
    tl_error(L->ctx, e->args[1]->loc, "reduction axis is out of range for %s", tystr(L, &t));
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
  int32_t op, x = mat(L, &t, e->loc);
  int32_t res = emit(L, TL_OP_reduce, &x, 1, rt, e->loc, &op);
  tl_op_at(L->f, op)->kind = kind;
  tl_op_at(L->f, op)->axis = (int32_t)axis;
  return fv_value(L->f, res);
}

/* The tile argument 0 and the constant axis argument 1 of a scan, argreduce or sort (a negative
 * axis counts from the end); false after a diagnostic.  Booleans and 8-bit floats are refused. */
static bool tile_and_axis(lower *L, fe_expr *e, fval *t, int64_t *axis) {
  *t = tile_arg(L, e, 0, 0);
  if (!const_int(L, e->args[1], "the axis", axis) || t->cls == V_ERR) return false;
  if (*axis < 0) *axis += t->ty.rank;
  if (*axis < 0 || *axis >= t->ty.rank) {
    tl_error(L->ctx, e->args[1]->loc, "axis is out of range for %s", tystr(L, t));
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
  int32_t op, x = mat(L, &t, e->loc);
  int32_t res = emit(L, opc, &x, 1, rt, e->loc, &op);
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
    fval d = eval(L, e->kwargs[i]);
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
  int32_t op, x = mat(L, &t, e->loc);
  int32_t res = emit(L, TL_OP_sort, &x, 1, t.ty, e->loc, &op);
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
    if (!const_int(L, l->args[k], what, &out[k])) return false;
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
    if (!tile_extent_ok(L, e->args[1]->args[k]->loc, "tile dimension", v[k])) return fv_err();
    shape[k] = (int32_t)v[k];
  }
  if (!check_tile_shape(L, e->loc, n, shape)) return fv_err();
  tl_type rt = tl_tile_type(dt_of(&t), n, shape);
  if (tl_type_numel(&rt) != tl_type_numel(&t.ty)) {
    tl_error(L->ctx, e->loc, "reshape() of %s to %lld elements: the element count must stay %lld", tystr(L, &t),
             (long long)tl_type_numel(&rt), (long long)tl_type_numel(&t.ty));
    return fv_err();
  }
  if (t.is_const) { t.ty = rt; return t; }
  int32_t x = mat(L, &t, e->loc);
  return fv_value(L->f, emit(L, TL_OP_reshape, &x, 1, rt, e->loc, NULL));
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
    tl_error(L->ctx, e->args[1]->loc, "permute() of %s needs a permutation of 0..%d", tystr(L, &t), t.ty.rank - 1);
    return fv_err();
  }
  if (id) return t;
  int32_t shape[TL_MAX_RANK];
  for (int k = 0; k < n; k++) shape[k] = t.ty.shape[v[k]];
  tl_type rt = tl_tile_type(dt_of(&t), n, shape);
  if (t.is_const) { t.ty = rt; return t; }
  int32_t op, x = mat(L, &t, e->loc);
  if (n == 2) return fv_value(L->f, emit(L, TL_OP_trans, &x, 1, rt, e->loc, NULL));
  int32_t res = emit(L, TL_OP_permute, &x, 1, rt, e->loc, &op);
  for (int k = 0; k < n; k++) tl_op_at(L->f, op)->dims[k] = (int32_t)v[k];
  return fv_value(L->f, res);
}

/* cat(a, b, axis): a and b of one element type and shape but along axis. */
static fval eval_cat(lower *L, fe_expr *e) {
  if (!nargs_ok(L, e, 3, 3)) return fv_err();
  fval a = tile_arg(L, e, 0, 0), b = tile_arg(L, e, 1, 0);
  int64_t axis;
  if (!const_int(L, e->args[2], "the axis", &axis) || a.cls == V_ERR || b.cls == V_ERR) return fv_err();
  if (axis < 0) axis += a.ty.rank;
  if (axis < 0 || axis >= a.ty.rank) {
    tl_error(L->ctx, e->args[2]->loc, "axis is out of range for %s", tystr(L, &a));
    return fv_err();
  }
  bool same = a.ty.rank == b.ty.rank && dt_of(&a) == dt_of(&b);
  for (int d = 0; same && d < a.ty.rank; d++) same = d == axis || a.ty.shape[d] == b.ty.shape[d];
  if (!same) {
    tl_error(L->ctx, e->loc, "cat() of %s and %s: the element types and every dimension but axis %lld must agree",
             tystr(L, &a), tystr(L, &b), (long long)axis);
    return fv_err();
  }
  int32_t shape[TL_MAX_RANK];
  memcpy(shape, a.ty.shape, sizeof shape);
  shape[axis] = a.ty.shape[axis] + b.ty.shape[axis];
  if (!check_tile_shape(L, e->loc, a.ty.rank, shape)) return fv_err();
  int32_t ops[2] = {mat(L, &a, e->loc), mat(L, &b, e->loc)}, op;
  int32_t res = emit(L, TL_OP_cat, ops, 2, tl_tile_type(dt_of(&a), a.ty.rank, shape), e->loc, &op);
  tl_op_at(L->f, op)->axis = (int32_t)axis;
  return fv_value(L->f, res);
}

static fval eval_dot(lower *L, fe_expr *e) {
  if (!nargs_ok(L, e, 2, 3)) return fv_err();
  bool tf32 = false;
  for (int i = 0; i < e->nkw; i++) {
    if (strcmp(e->kwnames[i], "precision") != 0) {
      tl_error(L->ctx, e->kwlocs[i], "dot() has no argument named '%s' (only 'precision')", e->kwnames[i]);
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
    tl_error(L->ctx, e->loc, "dot() precision = \"tf32\" takes f32 operands, found %s and %s", tystr(L, &a), tystr(L, &b));
    return fv_err();
  }
  bool ok = (da == db && (da == TL_F16 || da == TL_BF16 || da == TL_F32 || da == TL_I8)) || (fp8a && fp8b);
  if (!ok) {
    tl_error(L->ctx, e->loc, "dot() operands must be of one type (f16, bf16, i8, or f32 with precision = \"tf32\"; "
             "f8e4m3 and f8e5m2 may be mixed), found %s and %s", tystr(L, &a), tystr(L, &b));
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
  if (!check_tile_shape(L, e->loc, 2, shape)) return fv_err();
  if (acc.cls == V_VOID) {
    acc = accdt == TL_I32 ? fv_int(TL_I32, 0, false) : fv_float(TL_F32, 0.0, false);
    acc.cls = V_TILE;
    acc.ty = rt;
  } else if (!tl_type_eq(&acc.ty, &rt)) {
    tl_error(L->ctx, e->args[2]->loc, "dot() accumulator must be tile<%dx%dx%s>, not %s", M, N, tl_dtype_name(accdt),
             tystr(L, &acc));
    return fv_err();
  }
  int32_t ops[3] = {mat(L, &a, e->loc), mat(L, &b, e->loc), mat(L, &acc, e->loc)}, op;
  int32_t res = emit(L, TL_OP_dot, ops, 3, rt, e->loc, &op);
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
    tl_error(L->ctx, e->args[0]->loc, "the seed of %s() must be an integer scalar, not %s", e->name, tystr(L, &seed));
    return fv_err();
  }
  if (!is_int(dt_of(&off)) || dt_of(&off) == TL_I1) {
    tl_error(L->ctx, e->args[1]->loc, "the offsets of %s() must be integers, not %s", e->name, tystr(L, &off));
    return fv_err();
  }
  seed = convert(L, seed, TL_I64, e->loc);
  off = convert(L, off, TL_I32, e->loc);
  int32_t ops[2] = {mat(L, &seed, e->loc), mat(L, &off, e->loc)};
  tl_type rt = tl_val(L->f, ops[1])->type;
  rt.dtype = (uint8_t)(kind == TL_RAND_INT ? TL_I32 : TL_F32);
  int32_t op;
  int32_t res = emit(L, TL_OP_rand, ops, 2, rt, e->loc, &op);
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
      {"static_print", "there is no printing in a kernel: static_assert(cond, \"msg\") checks constants"},
      {"to", "x.to(T) is cast<T>(x) here"},
      {"float", "cast<f32>(x) converts here"},
      {"int", "cast<i32>(x) converts here"},
      {"mean", "a mean is reduce_sum(x, axis) / n here"},
  };
  for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
    if (!strcmp(hints[i][0], name)) return hints[i][1];
  return NULL;
}

/* `axis = A` (Triton's spelling, tl.sum(x, axis=0)) for the builtins that take an axis: the same as A
 * in the axis's place (the second argument; cat's third), when the arguments before it are given
 * and it is not given by position too (that case keeps the keyword for eval_call's error); also
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

static fval eval_call(lower *L, fe_expr *e) {
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
    if (!nargs_ok(L, e, 2, 2)) return fv_err();
    fval a = value_arg(L, e, 0), b = value_arg(L, e, 1);
    return binop(L, n[1] == 'i' ? BO_MIN : BO_MAX, a, b, e->loc);
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
      tl_error(L->ctx, e->args[0]->loc, "the condition of where() must be i1, not %s", tystr(L, &c));
      return fv_err();
    }
    bool weak;
    tl_dtype d = unify(L, "where()", &a, &b, e->loc, &weak);
    if (d == TL_VOID) return fv_err();
    int r2;
    int32_t s2[TL_MAX_RANK];
    if (!bcast3(&c, &a, &b, &r2, s2)) {
      tl_error(L->ctx, e->loc, "the shapes of the where() arguments do not broadcast");
      return fv_err();
    }
    if (c.is_const && a.is_const && b.is_const) {
      /* the chosen operand, in the broadcast shape of all three (a constant
       * condition does not shrink the result: where(c[32,4], x[32,4], y[4])
       * is [32,4] whichever it picks) */
      fval r = convert(L, c.i ? a : b, d, e->loc);
      r.weak = weak;
      return r2 ? to_shape(L, r, r2, s2, e->loc) : r;
    }
    c = to_shape(L, c, r2, s2, e->loc);
    a = to_shape(L, convert(L, a, d, e->loc), r2, s2, e->loc);
    b = to_shape(L, convert(L, b, d, e->loc), r2, s2, e->loc);
    int32_t ops[3] = {mat(L, &c, e->loc), mat(L, &a, e->loc), mat(L, &b, e->loc)};
    return fv_value(L->f, emit(L, TL_OP_select, ops, 3, r2 ? tl_tile_type(d, r2, s2) : tl_scalar_type(d), e->loc, NULL));
  }
  if (!strcmp(n, "fma")) return eval_fma(L, e);
  if (!strcmp(n, "cast")) {
    if (!nargs_ok(L, e, 1, 1)) return fv_err();
    fval a = value_arg(L, e, 0);
    if (a.cls == V_ERR) return a;
    return convert(L, a, e->targ, e->loc);
  }
  if (!strcmp(n, "bitcast")) { /* the same bits as another type of the same width */
    if (!nargs_ok(L, e, 1, 1)) return fv_err();
    fval a = value_arg(L, e, 0);
    if (a.cls == V_ERR) return a;
    if (a.weak) a = convert(L, a, is_flt(dt_of(&a)) ? TL_F32 : TL_I32, e->loc);
    tl_dtype from = dt_of(&a), to = e->targ;
    if (from == TL_I1 || to == TL_I1 || tl_dtype_bits(from) != tl_dtype_bits(to)) {
      tl_error(L->ctx, e->loc, "bitcast<%s>() of %s: the widths differ (or one is i1); use cast<T>() to convert values",
               tl_dtype_name(to), tystr(L, &a));
      return fv_err();
    }
    if (from == to) return a;
    tl_type rt = a.ty;
    rt.dtype = (uint8_t)to;
    int32_t x = mat(L, &a, e->loc);
    return fv_value(L->f, emit(L, TL_OP_bitcast, &x, 1, rt, e->loc, NULL));
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
        tl_error(L->ctx, e->args[0]->loc, "the fill value of full() must be a scalar, not %s", tystr(L, &v));
        return fv_err();
      }
      v = convert(L, v, e->targ, e->loc);
    }
    return to_shape(L, v, rank, shape, e->loc);
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
    fval v = fv_value(L->f, emit(L, TL_OP_iota, NULL, 0, tl_tile_type(TL_I32, 1, shape), e->loc, NULL));
    return convert(L, v, e->targ, e->loc);
  }
  if (!strcmp(n, "dot")) return eval_dot(L, e);
  if (!strcmp(n, "trans")) {
    if (!nargs_ok(L, e, 1, 1)) return fv_err();
    fval t = tile_arg(L, e, 0, 2);
    if (t.cls == V_ERR) return t;
    int32_t shape[2] = {t.ty.shape[1], t.ty.shape[0]};
    int32_t x = mat(L, &t, e->loc);
    return fv_value(L->f, emit(L, TL_OP_trans, &x, 1, tl_tile_type(dt_of(&t), 2, shape), e->loc, NULL));
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
    if (!nargs_ok(L, e, 1, 1) || !const_int(L, e->args[0], "the axis", &axis)) return fv_err();
    if (axis < 0 || axis > 2) {
      tl_error(L->ctx, e->args[0]->loc, "%s() axis must be 0, 1 or 2, not %lld", n, (long long)axis);
      return fv_err();
    }
    int32_t op;
    int32_t res = emit(L, n[0] == 'p' ? TL_OP_program_id : TL_OP_num_programs, NULL, 0, tl_scalar_type(TL_I32), e->loc, &op);
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
    fval s = binop(L, BO_ADD, a, b, e->loc);
    s = binop(L, BO_SUB, s, fv_int(TL_I32, 1, true), e->loc);
    return binop(L, BO_DIV, s, b, e->loc);
  }
  if (lookup(L, n) >= 0) {
    tl_error(L->ctx, e->loc, "'%s' is not a function", n);
  } else {
    tl_error(L->ctx, e->loc, "unknown function '%s'", n);
    const char *hint = triton_hint(n);
    if (hint) tl_note(L->ctx, e->loc, "%s", hint);
  }
  return fv_err();
}

static fval eval(lower *L, fe_expr *e) {
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
  case EX_BINARY: v = binop(L, binop_of_tok(e->op), eval(L, e->a), eval(L, e->b), e->loc); break;
  case EX_TERNARY: v = eval_ternary(L, e); break;
  case EX_CALL: v = eval_call(L, e); break;
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
    int b = lookup(L, names->data[i]);
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
    eval(L, s->expr);
    return;
  }
  int i = lookup(L, s->name);
  if (i >= 0 && L->env.data[i].kind != B_VALUE) {
    tl_error(L->ctx, s->name_loc, "cannot assign to %s '%s'", bkind_name(L->env.data[i].kind), s->name);
    tl_note(L->ctx, L->env.data[i].loc, "'%s' is declared here", s->name);
    return;
  }
  fval v;
  if (s->op != TK_ASSIGN) {
    if (i < 0) {
      tl_error(L->ctx, s->name_loc, "undefined name '%s'", s->name);
      return;
    }
    v = binop(L, binop_of_tok(s->op), L->env.data[i].v, eval(L, s->expr), s->loc);
  } else {
    v = eval(L, s->expr);
  }
  if (v.cls == V_VOID) {
    tl_error(L->ctx, s->expr->loc, "store() returns no value");
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
  fval c = eval(L, e->args[0]);
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
  fval c = to_cond(L, eval(L, e->args[0]), "the condition of require()", e->args[0]->loc);
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
    int32_t cv = mat(L, &c, e->args[0]->loc);
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
    int b = lookup(L, names->data[i]);
    fval v = L->env.data[b].v;
    if (v.cls == V_ERR) { ok = false; continue; }
    if (!is_val(&v) || !tl_type_eq(&v.ty, &types[i])) {
      char want[96];
      tl_type_str(&types[i], want, sizeof want);
      tl_error(L->ctx, L->env.data[b].loc, "'%s' changes type %s: %s before, %s here", names->data[i], where, want,
               is_val(&v) ? tystr(L, &v) : "no value");
      tl_note(L->ctx, outer_locs[i], "'%s' is defined here", names->data[i]);
      ok = false;
      continue;
    }
    ops[i] = mat(L, &v, loc);
  }
  if (ok) tl_op_new(L->f, L->r, TL_OP_yield, ops, names->len, NULL, 0, loc);
}

static void lower_for(lower *L, const fe_stmt *s) {
  fval lo = to_index(L, eval(L, s->lo), "the range start", s->lo->loc);
  fval hi = to_index(L, eval(L, s->hi), "the range end", s->hi->loc);
  fval step = s->step ? to_index(L, eval(L, s->step), "the range step", s->step->loc) : fv_int(TL_I32, 1, false);
  if (step.cls != V_ERR && step.is_const && step.i <= 0) {
    tl_error(L->ctx, s->step->loc, "the range step must be positive, not %lld", (long long)step.i);
    step = fv_err();
  }
  bool ok = lo.cls != V_ERR && hi.cls != V_ERR && step.cls != V_ERR;
  if (fe_is_reserved(s->name)) {
    tl_error(L->ctx, s->name_loc, "'%s' is %s and cannot be a loop variable", s->name, reserved_what(s->name));
    ok = false;
  } else {
    int prev = lookup(L, s->name);
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
    binding *b = &L->env.data[lookup(L, carried.data[i])];
    types[i] = b->v.ty;
    locs[i] = b->loc;
    ops[3 + i] = mat(L, &b->v, s->loc);
  }
  tl_region scratch;
  memset(&scratch, 0, sizeof scratch);
  scratch.owner = -1;
  tl_region *body = &scratch;
  int32_t op = -1;
  if (ok) {
    ops[0] = mat(L, &lo, s->lo->loc);
    ops[1] = mat(L, &hi, s->hi->loc);
    ops[2] = mat(L, &step, s->loc);
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
  pop_scope(L, mark);
  for (int i = 0; i < n; i++) {
    binding *b = &L->env.data[lookup(L, carried.data[i])];
    b->v = ok ? fv_value(L->f, tl_op_result(L->f, op, i)) : fv_err();
    if (ok) tl_val(L->f, b->v.id)->name = carried.data[i];
  }
}

static void lower_if(lower *L, const fe_stmt *s) {
  fval c = to_cond(L, eval(L, s->expr), "the condition of 'if'", s->expr->loc);
  if (c.cls != V_ERR && c.is_const) { /* folded: only the taken branch is checked */
    const fe_block *taken = c.i ? s->body : s->els;
    int mark = push_scope(L);
    lower_block(L, taken);
    pop_scope(L, mark);
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
    binding *b = &L->env.data[lookup(L, yielded.data[i])];
    types[i] = b->v.ty;
    locs[i] = b->loc;
  }
  bool ok = c.cls != V_ERR;
  int32_t op = -1;
  tl_region scratch[2];
  memset(scratch, 0, sizeof scratch);
  scratch[0].owner = scratch[1].owner = -1;
  if (ok) {
    int32_t cv = mat(L, &c, s->expr->loc);
    op = tl_op_new(L->f, L->r, TL_OP_if, &cv, 1, types, n, s->loc);
    tl_op_add_regions(L->f, op, 2);
  }
  tl_region *saved = L->r;
  for (int br = 0; br < 2; br++) {
    L->r = ok ? &tl_op_at(L->f, op)->regions[br] : &scratch[br];
    int mark = push_scope(L);
    for (int i = 0; i < n; i++) bind(L, yielded.data[i], B_VALUE, L->env.data[lookup(L, yielded.data[i])].v, locs[i]);
    lower_block(L, br == 0 ? s->body : s->els);
    if (ok) emit_yield(L, &yielded, types, locs, "inside 'if'", s->loc);
    pop_scope(L, mark);
  }
  L->r = saved;
  for (int i = 0; i < n; i++) {
    binding *b = &L->env.data[lookup(L, yielded.data[i])];
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
    fval v = eval(L, e);
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
  int i = lookup(L, name);
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
  if (!a->value || !const_int(L, a->value, what, &v)) return false;
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
    if (!over && !const_int(L, c->value, "a tile constant", &v)) v = 0;
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
      int b = lookup(L, dm->name);
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
      fval v = eval(L, g);
      if (v.cls == V_ERR) { ok = false; continue; }
      if (v.cls != V_SCALAR || !is_int(dt_of(&v)) || (!v.weak && dt_of(&v) != TL_I32)) {
        tl_error(L->ctx, g->loc, "a grid dimension must be an i32 scalar, not %s",
                 is_val(&v) ? tystr(L, &v) : operand_kind_error(&v));
        ok = false;
        continue;
      }
      v = to_index(L, v, "a grid dimension", g->loc);
      if (v.cls == V_ERR) { ok = false; continue; }
      if (v.is_const && v.i <= 0) {
        tl_error(L->ctx, g->loc, "a grid dimension must be positive, not %lld", (long long)v.i);
        ok = false;
        continue;
      }
      ops[n++] = mat(L, &v, g->loc);
    }
    if (ok) tl_op_new(f, &f->grid, TL_OP_yield, ops, n, NULL, 0, k->grid_loc);
    L->in_grid = false;
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
