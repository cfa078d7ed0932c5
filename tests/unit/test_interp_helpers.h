/* test_interp_helpers.h: small IR-building and data helpers shared by the
 * interpreter unit tests (tests/unit/test_interp_*.c).  Everything is static
 * inline so a test that does not use a helper does not warn. */
#ifndef TEST_INTERP_HELPERS_H
#define TEST_INTERP_HELPERS_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fpconv.h"
#include "interp.h"
#include "ir.h"

typedef struct kb {
  tl_ctx ctx;
  tl_module *m;
  tl_func *f;
} kb;

static inline kb *kb_new(const char *name) {
  kb *k = calloc(1, sizeof *k);
  tl_ctx_init(&k->ctx);
  k->m = tl_module_new(&k->ctx);
  k->f = tl_func_new(k->m, name, TL_NOLOC);
  return k;
}

static inline void kb_free(kb *k) {
  tl_ctx_free(&k->ctx);
  free(k);
}

static inline tl_region *kb_body(kb *k) { return &k->f->body; }
static inline tl_region *kb_gridr(kb *k) { return &k->f->grid; }

static inline int32_t kb_sym(kb *k, const char *name, int32_t param, int axis) {
  for (int i = 0; i < k->f->syms.len; i++)
    if (!strcmp(k->f->syms.data[i].name, name)) return i;
  tl_sym s = {name, param, axis};
  tl_vec_push(&k->ctx.arena, &k->f->syms, s);
  return k->f->syms.len - 1;
}

/* dims: a symbol name ("M") or a decimal constant ("16"). Returns the value id. */
static inline int32_t kb_tensor(kb *k, const char *name, tl_dtype dt, int rank, const char *const *dims) {
  tl_param p;
  memset(&p, 0, sizeof p);
  p.name = name;
  p.is_tensor = true;
  p.dtype = dt;
  p.rank = rank;
  p.loc = TL_NOLOC;
  int32_t idx = k->f->params.len;
  for (int d = 0; d < rank; d++) {
    if (dims[d][0] >= '0' && dims[d][0] <= '9') {
      p.dims[d].is_const = true;
      p.dims[d].value = atoll(dims[d]);
    } else {
      p.dims[d].sym = kb_sym(k, dims[d], idx, d);
    }
  }
  idx = tl_func_add_param(k->f, &p);
  return k->f->params.data[idx].value;
}

static inline int32_t kb_scalar(kb *k, const char *name, tl_dtype dt) {
  tl_param p;
  memset(&p, 0, sizeof p);
  p.name = name;
  p.dtype = dt;
  p.loc = TL_NOLOC;
  int32_t idx = tl_func_add_param(k->f, &p);
  return k->f->params.data[idx].value;
}

static inline int32_t kb_ci(kb *k, tl_region *r, int64_t v) {
  return tl_build_const_i(k->f, r, tl_scalar_type(TL_I32), v, TL_NOLOC);
}

static inline int32_t kb_op(kb *k, tl_region *r, tl_opcode opc, const int32_t *opnd, int n, tl_type rt) {
  int32_t op = tl_op_new(k->f, r, opc, opnd, n, &rt, 1, TL_NOLOC);
  return tl_op_result(k->f, op, 0);
}

static inline tl_op *kb_def(kb *k, int32_t value) { return tl_op_at(k->f, tl_val(k->f, value)->def); }

static inline tl_type tile1(tl_dtype dt, int32_t n) { return tl_tile_type(dt, 1, &n); }
static inline tl_type tile2(tl_dtype dt, int32_t a, int32_t b) {
  int32_t s[2] = {a, b};
  return tl_tile_type(dt, 2, s);
}

static inline void kb_yield(kb *k, tl_region *r, const int32_t *vals, int n) {
  tl_op_new(k->f, r, TL_OP_yield, vals, n, NULL, 0, TL_NOLOC);
}

/* cdiv(dim(tensor, axis), block) in region r */
static inline int32_t kb_cdiv_dim(kb *k, tl_region *r, int32_t tensor, int axis, int64_t block) {
  int32_t d = kb_op(k, r, TL_OP_dim, &tensor, 1, tl_scalar_type(TL_I32));
  kb_def(k, d)->axis = axis;
  int32_t num = tl_build_binary(k->f, r, TL_OP_add, d, kb_ci(k, r, block - 1), TL_NOLOC);
  return tl_build_binary(k->f, r, TL_OP_div, num, kb_ci(k, r, block), TL_NOLOC);
}

static inline void kb_grid_consts(kb *k, int n, const int64_t *g) {
  int32_t v[3];
  for (int i = 0; i < n; i++) v[i] = kb_ci(k, kb_gridr(k), g[i]);
  kb_yield(k, kb_gridr(k), v, n);
}

static inline int32_t kb_pid(kb *k, tl_region *r, int axis) {
  int32_t v = kb_op(k, r, TL_OP_program_id, NULL, 0, tl_scalar_type(TL_I32));
  kb_def(k, v)->axis = axis;
  return v;
}

/* load(tensor[idx0 : +len0, ...]) with len 0 = indexed dim; other < 0 = none. */
static inline int32_t kb_load(kb *k, tl_region *r, int32_t tensor, int rank, const int32_t *idx,
                              const int32_t *lens, tl_type rt, int32_t other) {
  int32_t opnd[TL_MAX_RANK + 2];
  opnd[0] = tensor;
  for (int d = 0; d < rank; d++) opnd[1 + d] = idx[d];
  int n = 1 + rank;
  if (other >= 0) opnd[n++] = other;
  int32_t v = kb_op(k, r, TL_OP_load, opnd, n, rt);
  for (int d = 0; d < rank; d++) kb_def(k, v)->dims[d] = lens[d];
  return v;
}

static inline void kb_store(kb *k, tl_region *r, int32_t tensor, int rank, const int32_t *idx,
                            const int32_t *lens, int32_t value) {
  int32_t opnd[TL_MAX_RANK + 2];
  opnd[0] = tensor;
  for (int d = 0; d < rank; d++) opnd[1 + d] = idx[d];
  opnd[1 + rank] = value;
  int32_t op = tl_op_new(k->f, r, TL_OP_store, opnd, rank + 2, NULL, 0, TL_NOLOC);
  for (int d = 0; d < rank; d++) tl_op_at(k->f, op)->dims[d] = lens[d];
}

/* ---- data ------------------------------------------------------------------------ */
typedef struct rng { uint64_t s; } rng;
static inline uint64_t rng_u64(rng *g) {
  g->s ^= g->s << 13;
  g->s ^= g->s >> 7;
  g->s ^= g->s << 17;
  return g->s;
}
/* uniform in [lo, hi) */
static inline double rng_uniform(rng *g, double lo, double hi) {
  return lo + (hi - lo) * (double)(rng_u64(g) >> 11) * 0x1p-53;
}

/* A compact row-major tensor argument over freshly allocated storage. */
static inline tl_arg targ(tl_dtype dt, int rank, const int64_t *shape) {
  tl_arg a;
  memset(&a, 0, sizeof a);
  a.is_tensor = true;
  a.dtype = dt;
  a.rank = rank;
  int64_t n = 1;
  for (int d = rank - 1; d >= 0; d--) {
    a.shape[d] = shape[d];
    a.strides[d] = n;
    n *= shape[d];
  }
  a.data = calloc((size_t)(n ? n : 1), (size_t)tl_dtype_bytes(dt));
  return a;
}

static inline tl_arg sarg_i(int64_t v) {
  tl_arg a;
  memset(&a, 0, sizeof a);
  a.i = v;
  return a;
}
static inline tl_arg sarg_f(double v) {
  tl_arg a;
  memset(&a, 0, sizeof a);
  a.f = v;
  a.is_float = true;
  return a;
}

static inline int64_t targ_numel(const tl_arg *a) {
  int64_t n = 1;
  for (int d = 0; d < a->rank; d++) n *= a->shape[d];
  return n;
}

/* Element i (in storage order) of a float tensor, as a value; set likewise. */
static inline float tget_f(const tl_arg *a, int64_t i) {
  const char *p = (const char *)a->data + i * tl_dtype_bytes(a->dtype);
  switch (a->dtype) {
  case TL_F32: { float x; memcpy(&x, p, 4); return x; }
  case TL_F16: case TL_BF16: { uint16_t h; memcpy(&h, p, 2); return tl_bits_to_float(h, a->dtype); }
  default: return tl_bits_to_float(*(const uint8_t *)p, a->dtype);
  }
}
static inline void tset_f(tl_arg *a, int64_t i, double v) {
  char *p = (char *)a->data + i * tl_dtype_bytes(a->dtype);
  uint32_t bits = tl_float_to_bits(v, a->dtype);
  switch (tl_dtype_bytes(a->dtype)) {
  case 4: { float x = tl_f64_to_f32(v); memcpy(p, &x, 4); break; }
  case 2: { uint16_t h = (uint16_t)bits; memcpy(p, &h, 2); break; }
  default: *(uint8_t *)p = (uint8_t)bits; break;
  }
}
static inline void tfill_random(tl_arg *a, rng *g, double lo, double hi) {
  for (int64_t i = 0; i < targ_numel(a); i++) tset_f(a, i, rng_uniform(g, lo, hi));
}
/* NaN everywhere (0xFF bytes are NaN in every float format here). */
static inline void tpoison(tl_arg *a) { memset(a->data, 0xFF, (size_t)targ_numel(a) * tl_dtype_bytes(a->dtype)); }

static inline void run_ok(kb *k, tl_arg *args, int n) {
  char err[512] = "";
  bool ok = tl_interpret_func(k->f, args, n, err, sizeof err);
  cr_assert(ok, "interpreter failed: %s", err);
}

#endif
