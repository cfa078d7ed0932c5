/* Kernels built with the IR builder, shared by test_back_codegen.c and the
 * GPU check (tests/unit/test_back_codegen_gpu.c): the same IR is lowered to PTX
 * here and run against the interpreter on a GPU machine. */
#include <string.h>

#include "ir.h"

static tl_ctx ctx;
static jmp_buf jb;

/* ---- a tiny builder ---------------------------------------------------------- */
static tl_func *F;
static tl_region *R; /* where ops go */

static int32_t tensor_param(const char *name, tl_dtype dt, int rank) {
  tl_param p;
  memset(&p, 0, sizeof p);
  p.name = name;
  p.is_tensor = true;
  p.dtype = dt;
  p.rank = rank;
  for (int d = 0; d < rank; d++) {
    tl_sym s = {name, F->params.len, d};
    p.dims[d].sym = F->syms.len;
    tl_vec_push(&ctx.arena, &F->syms, s);
  }
  int32_t i = tl_func_add_param(F, &p);
  return F->params.data[i].value;
}

static int32_t scalar_param(const char *name, tl_dtype dt) {
  tl_param p;
  memset(&p, 0, sizeof p);
  p.name = name;
  p.dtype = dt;
  int32_t i = tl_func_add_param(F, &p);
  return F->params.data[i].value;
}

static int32_t ci(int64_t v) { return tl_build_const_i(F, R, tl_scalar_type(TL_I32), v, TL_NOLOC); }
static int32_t splat_to(int32_t s, tl_type like) {
  like.dtype = tl_val(F, s)->type.dtype;
  int32_t op = tl_op_new(F, R, TL_OP_splat, &s, 1, &like, 1, TL_NOLOC);
  return tl_op_result(F, op, 0);
}

/* Binary op; a scalar meeting a tile is splat first (the IR wants equal shapes). */
static int32_t bin(tl_opcode op, int32_t a, int32_t b) {
  tl_type ta = tl_val(F, a)->type, tb = tl_val(F, b)->type;
  if (ta.kind == TL_KIND_SCALAR && tb.kind == TL_KIND_TILE) a = splat_to(a, tb);
  if (tb.kind == TL_KIND_SCALAR && ta.kind == TL_KIND_TILE) b = splat_to(b, ta);
  return tl_build_binary(F, R, op, a, b, TL_NOLOC);
}
static int32_t un(tl_opcode op, int32_t a) { return tl_build_unary(F, R, op, a, TL_NOLOC); }
static tl_type ty(int32_t v) { return tl_val(F, v)->type; }

static int32_t pid(int axis) {
  tl_type t = tl_scalar_type(TL_I32);
  int32_t op = tl_op_new(F, R, TL_OP_program_id, NULL, 0, &t, 1, TL_NOLOC);
  tl_op_at(F, op)->axis = axis;
  return tl_op_result(F, op, 0);
}

/* load(T[idx0 : +len0, ...]); len 0 = indexed */
static int32_t load(int32_t t, const int32_t *idx, const int32_t *len) {
  int rank = ty(t).rank;
  int32_t opnd[1 + TL_MAX_RANK] = {t};
  int32_t shape[TL_MAX_RANK];
  int k = 0;
  for (int d = 0; d < rank; d++) {
    opnd[1 + d] = idx[d];
    if (len[d]) shape[k++] = len[d];
  }
  tl_type rt = k ? tl_tile_type((tl_dtype)ty(t).dtype, k, shape) : tl_scalar_type((tl_dtype)ty(t).dtype);
  int32_t op = tl_op_new(F, R, TL_OP_load, opnd, 1 + rank, &rt, 1, TL_NOLOC);
  for (int d = 0; d < rank; d++) tl_op_at(F, op)->dims[d] = len[d];
  return tl_op_result(F, op, 0);
}

static void store(int32_t t, const int32_t *idx, const int32_t *len, int32_t v) {
  int rank = ty(t).rank;
  int32_t opnd[2 + TL_MAX_RANK] = {t};
  for (int d = 0; d < rank; d++) opnd[1 + d] = idx[d];
  opnd[1 + rank] = v;
  int32_t op = tl_op_new(F, R, TL_OP_store, opnd, 2 + rank, NULL, 0, TL_NOLOC);
  for (int d = 0; d < rank; d++) tl_op_at(F, op)->dims[d] = len[d];
}

static int32_t cast(int32_t v, tl_dtype dt) {
  tl_type t = ty(v);
  t.dtype = dt;
  int32_t op = tl_op_new(F, R, TL_OP_cast, &v, 1, &t, 1, TL_NOLOC);
  return tl_op_result(F, op, 0);
}

static int32_t reduce(int32_t v, int kind, int axis) {
  tl_type t = ty(v);
  tl_type rt;
  if (t.rank == 1) {
    rt = tl_scalar_type((tl_dtype)t.dtype);
  } else {
    int32_t shape[TL_MAX_RANK];
    int k = 0;
    for (int d = 0; d < t.rank; d++)
      if (d != axis) shape[k++] = t.shape[d];
    rt = tl_tile_type((tl_dtype)t.dtype, k, shape);
  }
  int32_t op = tl_op_new(F, R, TL_OP_reduce, &v, 1, &rt, 1, TL_NOLOC);
  tl_op_at(F, op)->kind = kind;
  tl_op_at(F, op)->axis = axis;
  return tl_op_result(F, op, 0);
}

static int32_t expand(int32_t v, int axis) {
  tl_type t = ty(v);
  int32_t shape[TL_MAX_RANK];
  for (int d = 0, k = 0; d <= t.rank; d++) shape[d] = d == axis ? 1 : t.shape[k++];
  tl_type rt = tl_tile_type((tl_dtype)t.dtype, t.rank + 1, shape);
  int32_t op = tl_op_new(F, R, TL_OP_expand_dims, &v, 1, &rt, 1, TL_NOLOC);
  tl_op_at(F, op)->axis = axis;
  return tl_op_result(F, op, 0);
}

static int32_t bcast(int32_t v, int rank, const int32_t *shape) {
  tl_type rt = tl_tile_type((tl_dtype)ty(v).dtype, rank, shape);
  int32_t op = tl_op_new(F, R, TL_OP_broadcast, &v, 1, &rt, 1, TL_NOLOC);
  return tl_op_result(F, op, 0);
}

static int32_t zeros(tl_dtype dt, int rank, const int32_t *shape) {
  return tl_build_const_f(F, R, tl_tile_type(dt, rank, shape), 0.0, TL_NOLOC);
}

static int32_t dim_of(int32_t t, int axis) {
  tl_type i32 = tl_scalar_type(TL_I32);
  int32_t op = tl_op_new(F, R, TL_OP_dim, &t, 1, &i32, 1, TL_NOLOC);
  tl_op_at(F, op)->axis = axis;
  return tl_op_result(F, op, 0);
}

/* grid(g0[, g1]) where each is cdiv(dim(t, axis), block); t = -1 ends the list */
static void grid2(int32_t t0, int a0, int b0, int32_t t1, int a1, int b1) {
  tl_region *save = R;
  R = &F->grid;
  int32_t g[2];
  int n = 0;
  int32_t ts[2] = {t0, t1}, as[2] = {a0, a1}, bs[2] = {b0, b1};
  for (int i = 0; i < 2; i++) {
    if (ts[i] < 0) continue;
    g[n++] = bin(TL_OP_div, bin(TL_OP_add, dim_of(ts[i], as[i]), ci(bs[i] - 1)), ci(bs[i]));
  }
  tl_op_new(F, R, TL_OP_yield, g, n, NULL, 0, TL_NOLOC);
  R = save;
}

static tl_module *M;

static void begin(const char *name) {
  M = tl_module_new(&ctx);
  F = tl_func_new(M, name, TL_NOLOC);
  R = &F->body;
}

/* ---- kernels ------------------------------------------------------------------------ */

/* z[i] = x[i] * a + y[i] over blocks of BLOCK */
static void build_axpy(int block, tl_dtype dt) {
  begin("axpy");
  int32_t x = tensor_param("X", dt, 1), y = tensor_param("Y", dt, 1), z = tensor_param("Z", dt, 1);
  int32_t a = scalar_param("a", TL_F32);
  grid2(x, 0, block, -1, 0, 0);
  int32_t start = bin(TL_OP_mul, pid(0), ci(block));
  int32_t len[1] = {block}, idx[1] = {start};
  int32_t xv = cast(load(x, idx, len), TL_F32), yv = cast(load(y, idx, len), TL_F32);
  int32_t r = bin(TL_OP_add, bin(TL_OP_mul, xv, a), yv);
  store(z, idx, len, cast(r, dt));
}


/* rmsnorm: one program per row; reduce over a whole row (lanes + warps). */
static void build_rmsnorm(int bc) {
  begin("rmsnorm");
  int32_t X = tensor_param("X", TL_BF16, 2), W = tensor_param("W", TL_BF16, 1), Y = tensor_param("Y", TL_BF16, 2);
  int32_t eps = scalar_param("eps", TL_F32);
  grid2(X, 0, 1, -1, 0, 0);
  int32_t r = pid(0), z = ci(0);
  int32_t idx2[2] = {r, z}, len2[2] = {0, bc}, idx1[1] = {z}, len1[1] = {bc};
  int32_t x = cast(load(X, idx2, len2), TL_F32);
  int32_t ss = reduce(bin(TL_OP_mul, x, x), TL_RED_SUM, 0);
  int32_t cols = cast(dim_of(X, 1), TL_F32);
  int32_t inv = un(TL_OP_rsqrt, bin(TL_OP_add, bin(TL_OP_div, ss, cols), eps));
  int32_t w = cast(load(W, idx1, len1), TL_F32);
  store(Y, idx2, len2, cast(bin(TL_OP_mul, bin(TL_OP_mul, x, inv), w), TL_BF16));
}


/* softmax over rows of a [BM, BN] tile: reduce along axis 1, broadcast back. */
static void build_softmax(int bm, int bn) {
  begin("softmax");
  int32_t X = tensor_param("X", TL_F32, 2), Y = tensor_param("Y", TL_F32, 2);
  grid2(X, 0, bm, -1, 0, 0);
  int32_t m0 = bin(TL_OP_mul, pid(0), ci(bm));
  int32_t idx[2] = {m0, ci(0)}, len[2] = {bm, bn};
  int32_t x = load(X, idx, len);
  int32_t shape[2] = {bm, bn};
  int32_t mx = bcast(expand(reduce(x, TL_RED_MAX, 1), 1), 2, shape);
  int32_t e = un(TL_OP_exp, bin(TL_OP_sub, x, mx));
  int32_t s = bcast(expand(reduce(e, TL_RED_SUM, 1), 1), 2, shape);
  store(Y, idx, len, bin(TL_OP_div, e, s));
}


/* gemm: acc = sum_k dot(A[m0:+BM, k:+BK], B[k:+BK, n0:+BN]) in a for loop. */
static void build_gemm(int bm, int bn, int bk, tl_dtype dt) {
  begin("gemm");
  int32_t A = tensor_param("A", dt, 2), B = tensor_param("B", dt, 2), C = tensor_param("C", TL_BF16, 2);
  grid2(A, 0, bm, B, 1, bn);
  int32_t m0 = bin(TL_OP_mul, pid(0), ci(bm)), n0 = bin(TL_OP_mul, pid(1), ci(bn));
  int32_t shape[2] = {bm, bn};
  int32_t acc0 = zeros(TL_F32, 2, shape);
  int32_t opnd[4] = {ci(0), dim_of(A, 1), ci(bk), acc0};
  tl_type at = ty(acc0);
  int32_t fo = tl_op_new(F, R, TL_OP_for, opnd, 4, &at, 1, TL_NOLOC);
  tl_op_add_regions(F, fo, 1);
  tl_region *body = &tl_op_at(F, fo)->regions[0];
  int32_t k = tl_region_add_arg(F, body, fo, tl_scalar_type(TL_I32));
  int32_t acc = tl_region_add_arg(F, body, fo, at);
  tl_region *outer = R;
  R = body;
  int32_t ia[2] = {m0, k}, la[2] = {bm, bk}, ib[2] = {k, n0}, lb[2] = {bk, bn};
  int32_t a = load(A, ia, la), b = load(B, ib, lb);
  int32_t dop[3] = {a, b, acc};
  int32_t d = tl_op_new(F, R, TL_OP_dot, dop, 3, &at, 1, TL_NOLOC);
  int32_t dv = tl_op_result(F, d, 0);
  tl_op_new(F, R, TL_OP_yield, &dv, 1, NULL, 0, TL_NOLOC);
  R = outer;
  int32_t ic[2] = {m0, n0}, lc[2] = {bm, bn};
  store(C, ic, lc, cast(tl_op_result(F, fo, 0), TL_BF16));
}

