/* lower_internal.h: what the lowering files of dsl/ share, not a contract: the walk's state
 * (lower), the value an expression checks to (fval), the environment's bindings, and the helpers
 * one file defines and the others call, by the file that defines them.  lower.c is the walk
 * (values, environment, emitting, promotion, operators, expressions, statements, kernels);
 * lower_views.c lowers a view of a tensor, lower_builtins.c a builtin call. */
#ifndef TILEC_LOWER_INTERNAL_H
#define TILEC_LOWER_INTERNAL_H

#include "ast.h"

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

/* A name bound inside a 'for' body or an 'if' branch, gone when the block ended: an undefined name's
 * note says where it was (a Triton user expects Python's scoping, where it would still be visible). */
typedef struct block_local {
  const char *name;
  bkind kind;         /* B_VALUE or B_LOOPVAR */
  tl_loc loc;         /* where it was bound */
  bool in_loop;       /* a 'for' body (else an 'if' branch) */
} block_local;

typedef struct lower {
  tl_ctx *ctx;
  tl_func *f;
  fe_kernel *k;
  tl_region *r; /* where ops go */
  bool in_grid;
  int in_extent; /* >0: evaluating a tile extent (a shape, a loop's step): tile constants there are no value use */
  bool in_require; /* (with in_grid) the condition of a require(): names computed in the body are refused */
  TL_VEC(binding) env;
  TL_VEC(block_local) ended; /* names of blocks that have ended, for the undefined-name note */
  int scope;
  int32_t *sym_body, *sym_grid; /* dim value per shape symbol, -1 = none yet */
  bool in_attr;                  /* evaluating @warps/@stages/@maxnreg: no dim values yet */
  int ndim_body, ndim_grid;
  int64_t arch, arch_specific;  /* the predefined constants ARCH, ARCH_SPECIFIC of the target */
} lower;

static inline fval fv_err(void) { fval v; memset(&v, 0, sizeof v); v.cls = V_ERR; v.id = -1; return v; }
static inline fval fv_void(void) { fval v = fv_err(); v.cls = V_VOID; return v; }

static inline fval fv_value(tl_func *f, int32_t id) {
  fval v = fv_err();
  v.ty = tl_val(f, id)->type;
  v.cls = v.ty.kind == TL_KIND_TILE ? V_TILE : v.ty.kind == TL_KIND_TENSOR ? V_TENSOR : V_SCALAR;
  v.id = id;
  return v;
}

static inline fval fv_int(tl_dtype d, int64_t x, bool weak) {
  fval v = fv_err();
  v.cls = V_SCALAR;
  v.ty = tl_scalar_type(d);
  v.is_const = true;
  v.weak = weak;
  v.i = x;
  v.f = (double)x;
  return v;
}

static inline fval fv_float(tl_dtype d, double x, bool weak) {
  fval v = fv_int(d, 0, weak);
  v.f = x;
  v.i = 0;
  return v;
}

static inline bool is_flt(tl_dtype d) { return tl_dtype_is_float(d); }
static inline bool is_int(tl_dtype d) { return tl_dtype_is_int(d); }
static inline bool is_val(const fval *v) { return v->cls == V_SCALAR || v->cls == V_TILE; }
static inline tl_dtype dt_of(const fval *v) { return (tl_dtype)v->ty.dtype; }

/* ---- lower.c -------------------------------------------------------------- */
/* values */
const char *lw_tystr(lower *L, const fval *v); /* v's type for a message ("an integer literal" ...) */
bool lw_tile_extent_ok(lower *L, tl_loc loc, const char *what, int64_t v);
/* environment */
int lw_lookup(lower *L, const char *name); /* index into L->env, -1 = unbound */
const char *lw_did_you_mean(lower *L, const char *name, bool function); /* a near name in scope / builtin, or NULL */
/* emitting */
int32_t lw_emit(lower *L, tl_opcode opc, const int32_t *ops, int n, tl_type rt, tl_loc loc, int32_t *opid);
int32_t lw_mat(lower *L, fval *v, tl_loc loc);
fval lw_convert(lower *L, fval v, tl_dtype d, tl_loc loc);
fval lw_to_shape(lower *L, fval v, int rank, const int32_t *shape, tl_loc loc);
bool lw_bcast(int ra, const int32_t *sa, int rb, const int32_t *sb, int *rr, int32_t *sr);
void lw_shape_str(int rank, const int32_t *s, char *buf, size_t n);
bool lw_check_tile_shape(lower *L, tl_loc loc, int rank, const int32_t *shape);
/* type unification */
tl_dtype lw_unify(lower *L, const char *what, const fval *a, const fval *b, tl_loc loc, bool *weak);
/* binary operators */
typedef enum { BO_ADD, BO_SUB, BO_MUL, BO_DIV, BO_REM, BO_MIN, BO_MAX, BO_AND, BO_OR,
               BO_BAND, BO_BOR, BO_BXOR, BO_SHL, BO_SHR,
               BO_EQ, BO_NE, BO_LT, BO_LE, BO_GT, BO_GE } binop_kind;
const char *lw_operand_kind_error(const fval *v);
fval lw_binop(lower *L, binop_kind k, fval a, fval b, tl_loc loc);
/* expressions */
fval lw_eval(lower *L, fe_expr *e);
fval lw_to_index(lower *L, fval v, const char *what, tl_loc loc);
bool lw_const_int(lower *L, fe_expr *e, const char *what, int64_t *out);

/* ---- lower_views.c -------------------------------------------------------- */
/* A view of a tensor parameter, T[i, a : a + C, :] (the first argument of load(), store() and
 * the atomics). */
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
bool lw_lower_view(lower *L, fe_expr *e, const char *fn, view *out);

/* ---- lower_builtins.c ----------------------------------------------------- */
fval lw_eval_call(lower *L, fe_expr *e);

#endif
