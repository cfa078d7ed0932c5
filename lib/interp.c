/* interp.c: the CPU interpreter of tile IR (the oracle).
 * requires a verified function (any stage; layouts are ignored); keeps the IR
 * untouched; never prints or aborts: user-visible failures (bad arguments,
 * limits, a non-positive loop step) and broken IR invariants come back as
 * false + a one-line message.
 *
 * Model: every SSA value owns one flat buffer in a pool allocated once per
 * call and reused by every program of the grid (and every loop iteration).
 * Float dtypes are held as float (an f16/bf16/fp8 value is an exact f32),
 * integer dtypes as int64 normalized to their width (sign-extended for
 * i8..i64, zero-extended for u8, 0/1 for i1).  Semantics: docs/interpreter.md. */
#include "interp.h"
#include "require.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpconv.h"
#include "philox.h"
#include "sortkey.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF /* every f32 operation rounds on its own: no FMA */
#endif

#define MAX_PROGRAMS (INT64_C(1) << 31)

typedef struct slot {
  void *data;            /* float[] or int64_t[]; NULL for tensors */
  int64_t numel;
  const tl_type *type;
  const tl_arg *tensor;  /* tensor parameters */
} slot;

typedef struct interp {
  const tl_func *f;
  const tl_arg *args;
  slot *slots;           /* one per value id */
  char *pool;
  int64_t pid[3], npid[3];
  char *err;
  size_t errn;
  jmp_buf fail;
  bool exact_ints;       /* the grid: an integer add/sub/mul that wraps is an error */
} interp;

/* ---- errors ------------------------------------------------------------------ */
static void set_err(char *err, size_t n, const char *fmt, ...) TL_PRINTF(3, 4);
static void set_err(char *err, size_t n, const char *fmt, ...) {
  if (!err || n == 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
}

TL_NORETURN static void fail(interp *in, const char *fmt, ...) TL_PRINTF(2, 3);
TL_NORETURN static void fail(interp *in, const char *fmt, ...) {
  if (in->err && in->errn) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(in->err, in->errn, fmt, ap);
    va_end(ap);
  }
  longjmp(in->fail, 1);
}

static const char *op_name(const tl_op *op) {
  return op->opc < TL_NUM_OPS ? tl_opinfo_table[op->opc].name : "?";
}

#define BROKEN(in, op, why) fail((in), "internal: interpreter: %s: %s", op_name(op), (why))

/* ---- slots ---------------------------------------------------------------------- */
static slot *S(interp *in, int32_t v) {
  if (v < 0 || v >= in->f->values.len || (!in->slots[v].data && !in->slots[v].tensor))
    fail(in, "internal: interpreter: value %%%d has no storage (used outside its scope?)", (int)v);
  return &in->slots[v];
}
static inline float *FP(slot *s) { return (float *)s->data; }
static inline int64_t *IP(slot *s) { return (int64_t *)s->data; }
static inline tl_dtype DT(const slot *s) { return (tl_dtype)s->type->dtype; }
static inline bool is_f(const slot *s) { return tl_dtype_is_float(DT(s)); }
static inline size_t elem_size(const slot *s) { return is_f(s) ? sizeof(float) : sizeof(int64_t); }

static int64_t scalar_int(interp *in, int32_t v) {
  slot *s = S(in, v);
  if (is_f(s)) return tl_float_to_int(FP(s)[0], TL_I64);
  return IP(s)[0];
}

/* Give value v storage of its type's size, carved from *cursor (or just
 * counted when base is NULL).  Returns false if the type is over the limits. */
static bool plan_slot(interp *in, int32_t v, char *base, size_t *cursor) {
  const tl_type *t = &in->f->values.data[v].type;
  slot *s = &in->slots[v];
  s->type = t;
  if (t->kind != TL_KIND_TILE && t->kind != TL_KIND_SCALAR) return true;
  int64_t numel = 1;
  if (t->kind == TL_KIND_TILE) {
    if (t->rank > TL_MAX_RANK) return false;
    for (int d = 0; d < t->rank; d++) {
      if (t->shape[d] <= 0 || t->shape[d] > TL_MAX_TILE_ELEMS) return false;
      numel *= t->shape[d];
      if (numel > TL_MAX_TILE_ELEMS) return false;
    }
  }
  s->numel = numel;
  size_t bytes = (size_t)numel * (tl_dtype_is_float((tl_dtype)t->dtype) ? 4 : 8);
  bytes = (bytes + 15) & ~(size_t)15;
  if (base) s->data = base + *cursor;
  *cursor += bytes;
  return true;
}

/* ---- conversions between storage and the value representation --------------- */
static void read_elem(tl_dtype dt, const char *p, float *fo, int64_t *io) {
  switch (dt) {
  case TL_F32: memcpy(fo, p, 4); return;
  case TL_F16: case TL_BF16: { uint16_t h; memcpy(&h, p, 2); *fo = tl_bits_to_float(h, dt); return; }
  case TL_F8E4M3: case TL_F8E5M2: *fo = tl_bits_to_float((uint8_t)*p, dt); return;
  case TL_I1: *io = *(const uint8_t *)p != 0; return;
  case TL_I8: *io = *(const int8_t *)p; return;
  case TL_U8: *io = *(const uint8_t *)p; return;
  case TL_I16: { int16_t x; memcpy(&x, p, 2); *io = x; return; }
  case TL_I32: { int32_t x; memcpy(&x, p, 4); *io = x; return; }
  case TL_I64: memcpy(io, p, 8); return;
  default: return;
  }
}

/* Element e of load result r: read from p (storage dtype tdt), or where p is NULL (outside the
 * tensor) `other`'s element e * so (so: 0 for a scalar other), else 0. */
static void load_elem(slot *r, int64_t e, const char *p, tl_dtype tdt, bool fl, slot *other, int64_t so) {
  if (p) {
    float fv = 0;
    int64_t iv = 0;
    read_elem(tdt, p, &fv, &iv);
    if (fl) FP(r)[e] = fv; else IP(r)[e] = tl_int_to_int(iv, DT(r));
  } else if (fl) {
    FP(r)[e] = other ? FP(other)[e * so] : 0.0f;
  } else {
    IP(r)[e] = other ? IP(other)[e * so] : 0;
  }
}

static void write_elem(tl_dtype dt, char *p, bool src_float, float fv, int64_t iv) {
  if (tl_dtype_is_float(dt)) {
    float x = src_float ? fv : tl_int_to_float(iv, dt);
    if (dt == TL_F32) { memcpy(p, &x, 4); return; }
    uint32_t bits = tl_float_to_bits(x, dt);
    if (tl_dtype_bytes(dt) == 2) { uint16_t h = (uint16_t)bits; memcpy(p, &h, 2); }
    else *(uint8_t *)p = (uint8_t)bits;
    return;
  }
  int64_t x = src_float ? tl_float_to_int(fv, dt) : tl_int_to_int(iv, dt);
  switch (tl_dtype_bytes(dt)) {
  case 1: *(uint8_t *)p = (uint8_t)x; break;
  case 2: { uint16_t h = (uint16_t)x; memcpy(p, &h, 2); break; }
  case 4: { uint32_t w = (uint32_t)x; memcpy(p, &w, 4); break; }
  default: memcpy(p, &x, 8); break;
  }
}

static void round_floats(float *p, int64_t n, tl_dtype dt) {
  if (dt == TL_F32) return;
  for (int64_t i = 0; i < n; i++) p[i] = tl_round_to_dtype(p[i], dt);
}

/* ---- elementwise semantics (one place, used by tiles and scalars) ------------- */
static inline float f_min(float a, float b) {
  if (isnan(a) || isnan(b)) return NAN;
  return (a < b || (a == b && signbit(a))) ? a : b;
}
static inline float f_max(float a, float b) {
  if (isnan(a) || isnan(b)) return NAN;
  return (a > b || (a == b && !signbit(a))) ? a : b;
}

static inline bool cmp_f(int kind, float a, float b) {
  switch (kind) {
  case TL_CMP_EQ: return a == b;
  case TL_CMP_NE: return a != b; /* true for NaN, as C */
  case TL_CMP_LT: return a < b;
  case TL_CMP_LE: return a <= b;
  case TL_CMP_GT: return a > b;
  default: return a >= b;
  }
}
static inline bool cmp_i(int kind, int64_t a, int64_t b) {
  switch (kind) {
  case TL_CMP_EQ: return a == b;
  case TL_CMP_NE: return a != b;
  case TL_CMP_LT: return a < b;
  case TL_CMP_LE: return a <= b;
  case TL_CMP_GT: return a > b;
  default: return a >= b;
  }
}

/* Integer binary op on normalized operands; the caller wraps the result to
 * the dtype.  Division/remainder by zero give 0; INT_MIN / -1 wraps. */
static inline int64_t int_binop(int opc, int bits, bool is_signed, int64_t a, int64_t b) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (opc) {
  case TL_OP_add: return (int64_t)(ua + ub);
  case TL_OP_sub: return (int64_t)(ua - ub);
  case TL_OP_mul: return (int64_t)(ua * ub);
  case TL_OP_div:
    if (b == 0) return 0;
    if (b == -1) return (int64_t)(0 - ua);
    return a / b;
  case TL_OP_rem:
    if (b == 0 || b == -1) return 0;
    return a % b;
  case TL_OP_min: return a < b ? a : b;
  case TL_OP_max: return a > b ? a : b;
  case TL_OP_and: return a & b;
  case TL_OP_or: return a | b;
  case TL_OP_xor: return a ^ b;
  case TL_OP_shl: return (b < 0 || b >= bits) ? 0 : (int64_t)(ua << b);
  case TL_OP_shr:
    if (b < 0 || b >= bits) return (is_signed && a < 0) ? -1 : 0;
    return is_signed ? a >> b : (int64_t)(ua >> b); /* u8/i1 are zero-extended */
  default: return 0;
  }
}

static inline double float_unop(int opc, double x) {
  switch (opc) {
  case TL_OP_neg: return -x;
  case TL_OP_abs: return fabs(x);
  case TL_OP_exp: return exp(x);
  case TL_OP_exp2: return exp2(x);
  case TL_OP_log: return log(x);
  case TL_OP_log2: return log2(x);
  case TL_OP_sqrt: return sqrt(x);
  case TL_OP_rsqrt: return 1.0 / sqrt(x);
  case TL_OP_sin: return sin(x);
  case TL_OP_cos: return cos(x);
  case TL_OP_tanh: return tanh(x);
  case TL_OP_sigmoid: return 1.0 / (1.0 + exp(-x));
  case TL_OP_floor: return floor(x);
  case TL_OP_ceil: return ceil(x);
  default: return NAN;
  }
}

/* ---- ops -------------------------------------------------------------------------- */
static void need_operands(interp *in, const tl_op *op, int n) {
  if (op->nopnd < n || op->nres < 1) BROKEN(in, op, "wrong number of operands or results");
}

/* Operand stride: 0 for a broadcast scalar, 1 for a tile of the result's size. */
static int64_t ew_stride(interp *in, const tl_op *op, const slot *a, int64_t n) {
  if (a->numel == n) return 1;
  if (a->numel == 1) return 0;
  BROKEN(in, op, "elementwise operand of another size");
}

static void exec_const(interp *in, const tl_op *op) {
  slot *r = S(in, op->res[0]);
  if (is_f(r)) {
    float v = tl_round_to_dtype(op->fval, DT(r));
    for (int64_t i = 0; i < r->numel; i++) FP(r)[i] = v;
  } else {
    int64_t v = tl_int_to_int(op->ival, DT(r));
    for (int64_t i = 0; i < r->numel; i++) IP(r)[i] = v;
  }
}

static void exec_binary(interp *in, const tl_op *op) {
  need_operands(in, op, 2);
  slot *r = S(in, op->res[0]), *a = S(in, op->opnd[0]), *b = S(in, op->opnd[1]);
  int64_t n = r->numel, sa = ew_stride(in, op, a, n), sb = ew_stride(in, op, b, n);
  int opc = op->opc;
  if (is_f(a) != is_f(b)) BROKEN(in, op, "operands of different kinds");
  if (opc == TL_OP_cmp) {
    int64_t *o = IP(r);
    if (is_f(a)) {
      const float *x = FP(a), *y = FP(b);
      for (int64_t i = 0; i < n; i++) o[i] = cmp_f(op->kind, x[i * sa], y[i * sb]);
    } else {
      const int64_t *x = IP(a), *y = IP(b);
      for (int64_t i = 0; i < n; i++) o[i] = cmp_i(op->kind, x[i * sa], y[i * sb]);
    }
    return;
  }
  if (is_f(a)) {
    if (!is_f(r)) BROKEN(in, op, "float operands, integer result");
    const float *x = FP(a), *y = FP(b);
    float *o = FP(r);
#define FLOOP(EXPR) for (int64_t i = 0; i < n; i++) { float p = x[i * sa], q = y[i * sb]; o[i] = (EXPR); }
    switch (opc) {
    case TL_OP_add: FLOOP(p + q); break;
    case TL_OP_sub: FLOOP(p - q); break;
    case TL_OP_mul: FLOOP(p * q); break;
    case TL_OP_div: FLOOP(p / q); break;
    case TL_OP_rem: FLOOP(fmodf(p, q)); break;
    case TL_OP_min: FLOOP(f_min(p, q)); break;
    case TL_OP_max: FLOOP(f_max(p, q)); break;
    default: BROKEN(in, op, "not defined on floats");
    }
#undef FLOOP
    round_floats(o, n, DT(r));
    return;
  }
  const int64_t *x = IP(a), *y = IP(b);
  int64_t *o = IP(r);
  tl_dtype dt = DT(r);
  int bits = tl_dtype_bits(dt);
  bool sgn = tl_dtype_is_signed(dt);
  for (int64_t i = 0; i < n; i++) o[i] = tl_int_to_int(int_binop(opc, bits, sgn, x[i * sa], y[i * sb]), dt);
  if (in->exact_ints && (opc == TL_OP_add || opc == TL_OP_sub || opc == TL_OP_mul))
    for (int64_t i = 0; i < n; i++) {
      /* operands fit in 32 bits here, so the 64-bit result is exact */
      int64_t p = x[i * sa], q = y[i * sb], exact = opc == TL_OP_add ? p + q : opc == TL_OP_sub ? p - q : p * q;
      if (bits <= 32 && o[i] != exact)
        fail(in, "kernel %s: the grid's %s %lld %s %lld = %lld overflows %s (it would wrap to %lld: a wrong grid)",
             in->f->name, tl_dtype_name(dt), (long long)p, opc == TL_OP_add ? "+" : opc == TL_OP_sub ? "-" : "*",
             (long long)q, (long long)exact, tl_dtype_name(dt), (long long)o[i]);
    }
}

static void exec_select(interp *in, const tl_op *op) {
  need_operands(in, op, 3);
  slot *r = S(in, op->res[0]), *c = S(in, op->opnd[0]), *a = S(in, op->opnd[1]), *b = S(in, op->opnd[2]);
  int64_t n = r->numel;
  int64_t sc = ew_stride(in, op, c, n), sa = ew_stride(in, op, a, n), sb = ew_stride(in, op, b, n);
  if (is_f(c) || is_f(a) != is_f(r) || is_f(b) != is_f(r)) BROKEN(in, op, "operand kinds");
  const int64_t *cc = IP(c);
  if (is_f(r)) {
    for (int64_t i = 0; i < n; i++) FP(r)[i] = cc[i * sc] ? FP(a)[i * sa] : FP(b)[i * sb];
  } else {
    for (int64_t i = 0; i < n; i++) IP(r)[i] = cc[i * sc] ? IP(a)[i * sa] : IP(b)[i * sb];
  }
}

/* fma: a * b + c rounded once in f32 (fmaf), then to the result's dtype */
static void exec_fma(interp *in, const tl_op *op) {
  need_operands(in, op, 3);
  slot *r = S(in, op->res[0]), *a = S(in, op->opnd[0]), *b = S(in, op->opnd[1]), *c = S(in, op->opnd[2]);
  int64_t n = r->numel, sa = ew_stride(in, op, a, n), sb = ew_stride(in, op, b, n), sc = ew_stride(in, op, c, n);
  if (!is_f(r) || !is_f(a) || !is_f(b) || !is_f(c)) BROKEN(in, op, "operand kinds");
  for (int64_t i = 0; i < n; i++) FP(r)[i] = fmaf(FP(a)[i * sa], FP(b)[i * sb], FP(c)[i * sc]);
  round_floats(FP(r), n, DT(r));
}

static void exec_unary(interp *in, const tl_op *op) {
  need_operands(in, op, 1);
  slot *r = S(in, op->res[0]), *a = S(in, op->opnd[0]);
  int64_t n = r->numel, sa = ew_stride(in, op, a, n);
  int opc = op->opc;
  if (is_f(a) != is_f(r)) BROKEN(in, op, "operand and result of different kinds");
  if (is_f(a)) {
    if (opc == TL_OP_not) BROKEN(in, op, "not defined on floats");
    tl_dtype dt = DT(r);
    const float *x = FP(a);
    float *o = FP(r);
    if (dt == TL_F32) {
      for (int64_t i = 0; i < n; i++) o[i] = (float)float_unop(opc, x[i * sa]);
    } else {
      for (int64_t i = 0; i < n; i++) o[i] = tl_round_to_dtype(float_unop(opc, x[i * sa]), dt);
    }
    return;
  }
  tl_dtype dt = DT(r);
  const int64_t *x = IP(a);
  int64_t *o = IP(r);
  for (int64_t i = 0; i < n; i++) {
    int64_t v = x[i * sa];
    switch (opc) {
    case TL_OP_neg: v = (int64_t)(0 - (uint64_t)v); break;
    case TL_OP_not: v = dt == TL_I1 ? !v : ~v; break;
    case TL_OP_abs: v = v < 0 ? (int64_t)(0 - (uint64_t)v) : v; break;
    case TL_OP_floor: case TL_OP_ceil: break;
    default: BROKEN(in, op, "not defined on integers");
    }
    o[i] = tl_int_to_int(v, dt);
  }
}

static void exec_cast(interp *in, const tl_op *op) {
  need_operands(in, op, 1);
  slot *r = S(in, op->res[0]), *a = S(in, op->opnd[0]);
  int64_t n = r->numel, sa = ew_stride(in, op, a, n);
  tl_dtype dt = DT(r);
  if (is_f(a) && is_f(r)) {
    for (int64_t i = 0; i < n; i++) FP(r)[i] = tl_round_to_dtype(FP(a)[i * sa], dt);
  } else if (is_f(a)) {
    for (int64_t i = 0; i < n; i++) IP(r)[i] = tl_float_to_int(FP(a)[i * sa], dt);
  } else if (is_f(r)) {
    for (int64_t i = 0; i < n; i++) FP(r)[i] = tl_int_to_float(IP(a)[i * sa], dt);
  } else {
    for (int64_t i = 0; i < n; i++) IP(r)[i] = tl_int_to_int(IP(a)[i * sa], dt);
  }
}

/* The same bits as another dtype of the same width (floats held as exact
 * f32 values: their encoding is recomputed; NaN payloads of 16- and 8-bit
 * floats are not kept). */
static void exec_bitcast(interp *in, const tl_op *op) {
  need_operands(in, op, 1);
  slot *r = S(in, op->res[0]), *a = S(in, op->opnd[0]);
  int64_t n = r->numel, sa = ew_stride(in, op, a, n);
  tl_dtype from = DT(a), to = DT(r);
  for (int64_t i = 0; i < n; i++) {
    uint64_t bits;
    if (from == TL_F32) {
      uint32_t w;
      memcpy(&w, &FP(a)[i * sa], 4);
      bits = w;
    } else if (is_f(a)) {
      bits = tl_float_to_bits(FP(a)[i * sa], from);
    } else {
      bits = (uint64_t)IP(a)[i * sa];
    }
    if (to == TL_F32) {
      uint32_t w = (uint32_t)bits;
      memcpy(&FP(r)[i], &w, 4);
    } else if (is_f(r)) {
      FP(r)[i] = tl_bits_to_float((uint32_t)(bits & ((1u << tl_dtype_bits(to)) - 1)), to);
    } else {
      IP(r)[i] = tl_int_to_int((int64_t)bits, to);
    }
  }
}

/* Same data, new shape (reshape, expand_dims, convert_layout, splat of one). */
static void exec_copy(interp *in, const tl_op *op) {
  need_operands(in, op, 1);
  slot *r = S(in, op->res[0]), *a = S(in, op->opnd[0]);
  if (is_f(a) != is_f(r)) BROKEN(in, op, "operand and result of different kinds");
  if (a->numel == r->numel) {
    memcpy(r->data, a->data, (size_t)r->numel * elem_size(r));
  } else if (a->numel == 1) { /* splat */
    if (is_f(r)) for (int64_t i = 0; i < r->numel; i++) FP(r)[i] = FP(a)[0];
    else for (int64_t i = 0; i < r->numel; i++) IP(r)[i] = IP(a)[0];
  } else {
    BROKEN(in, op, "element counts differ");
  }
}

static void exec_broadcast(interp *in, const tl_op *op) {
  need_operands(in, op, 1);
  slot *r = S(in, op->res[0]), *a = S(in, op->opnd[0]);
  if (is_f(a) != is_f(r)) BROKEN(in, op, "operand and result of different kinds");
  if (a->numel == 1 || a->numel == r->numel) { exec_copy(in, op); return; }
  const tl_type *rt = r->type, *at = a->type;
  int rank = rt->rank;
  if (at->kind != TL_KIND_TILE || at->rank != rank) BROKEN(in, op, "ranks differ");
  int64_t stride[TL_MAX_RANK], idx[TL_MAX_RANK] = {0}, s = 1;
  for (int d = rank - 1; d >= 0; d--) {
    if (at->shape[d] != rt->shape[d] && at->shape[d] != 1) BROKEN(in, op, "shapes do not broadcast");
    stride[d] = at->shape[d] == 1 ? 0 : s;
    s *= at->shape[d];
  }
  int64_t off = 0;
  bool fl = is_f(r);
  for (int64_t i = 0; i < r->numel; i++) {
    if (fl) FP(r)[i] = FP(a)[off]; else IP(r)[i] = IP(a)[off];
    for (int d = rank - 1; d >= 0; d--) {
      off += stride[d];
      if (++idx[d] < rt->shape[d]) break;
      off -= stride[d] * rt->shape[d];
      idx[d] = 0;
    }
  }
}

static void exec_trans(interp *in, const tl_op *op) {
  need_operands(in, op, 1);
  slot *r = S(in, op->res[0]), *a = S(in, op->opnd[0]);
  const tl_type *at = a->type;
  if (at->kind != TL_KIND_TILE || at->rank != 2 || a->numel != r->numel || is_f(a) != is_f(r))
    BROKEN(in, op, "expects a 2-D tile");
  int64_t rows = at->shape[0], cols = at->shape[1];
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      if (is_f(r)) FP(r)[j * rows + i] = FP(a)[i * cols + j];
      else IP(r)[j * rows + i] = IP(a)[i * cols + j];
    }
}

static void exec_iota(interp *in, const tl_op *op) {
  slot *r = S(in, op->res[0]);
  for (int64_t i = 0; i < r->numel; i++) {
    if (is_f(r)) FP(r)[i] = tl_int_to_float(i, DT(r));
    else IP(r)[i] = tl_int_to_int(i, DT(r));
  }
}

/* Reduction over `axis`, in index order; floats accumulate in f32. */
static void exec_reduce(interp *in, const tl_op *op) {
  need_operands(in, op, 1);
  slot *r = S(in, op->res[0]), *a = S(in, op->opnd[0]);
  const tl_type *at = a->type;
  if (at->kind != TL_KIND_TILE || op->axis < 0 || op->axis >= at->rank || is_f(a) != is_f(r))
    BROKEN(in, op, "bad axis or operand");
  int64_t outer = 1, inner = 1, len = at->shape[op->axis];
  for (int d = 0; d < op->axis; d++) outer *= at->shape[d];
  for (int d = op->axis + 1; d < at->rank; d++) inner *= at->shape[d];
  if (outer * inner != r->numel) BROKEN(in, op, "result size");
  int kind = op->kind;
  for (int64_t o = 0; o < outer; o++) {
    if (is_f(r)) {
      float *acc = FP(r) + o * inner;
      const float *src = FP(a) + o * len * inner;
      memcpy(acc, src, (size_t)inner * sizeof(float));
      for (int64_t k = 1; k < len; k++) {
        const float *row = src + k * inner;
        if (kind == TL_RED_SUM) for (int64_t i = 0; i < inner; i++) acc[i] = acc[i] + row[i];
        else if (kind == TL_RED_MAX) for (int64_t i = 0; i < inner; i++) acc[i] = f_max(acc[i], row[i]);
        else for (int64_t i = 0; i < inner; i++) acc[i] = f_min(acc[i], row[i]);
      }
    } else {
      int64_t *acc = IP(r) + o * inner;
      const int64_t *src = IP(a) + o * len * inner;
      memcpy(acc, src, (size_t)inner * sizeof(int64_t));
      for (int64_t k = 1; k < len; k++) {
        const int64_t *row = src + k * inner;
        for (int64_t i = 0; i < inner; i++) {
          if (kind == TL_RED_SUM) acc[i] = (int64_t)((uint64_t)acc[i] + (uint64_t)row[i]);
          else if (kind == TL_RED_MAX) acc[i] = acc[i] > row[i] ? acc[i] : row[i];
          else acc[i] = acc[i] < row[i] ? acc[i] : row[i];
        }
      }
      for (int64_t i = 0; i < inner; i++) acc[i] = tl_int_to_int(acc[i], DT(r));
    }
  }
  if (is_f(r)) round_floats(FP(r), r->numel, DT(r));
}

/* f32 x as the tensor core reads a tf32 operand: sign, exponent and the top
 * 10 mantissa bits, the low 13 bits dropped (truncation, docs/language.md
 * "dot"); NaN stays NaN. */
static float tf32_of(float x) {
  if (x != x) return x;
  uint32_t u;
  memcpy(&u, &x, 4);
  u &= 0xFFFFE000u;
  memcpy(&x, &u, 4);
  return x;
}

/* i8 x i8 -> i32: every product and sum exact (in int64: |a b| <= 2^14, so
 * any K below 2^49 is exact), then the accumulator added and the result
 * wrapped to i32 as the tensor core's s32 accumulator does. */
static void exec_dot_int(interp *in, const tl_op *op, slot *r, slot *a, slot *b, slot *c) {
  int64_t M = a->type->shape[0], K = a->type->shape[1], N = b->type->shape[1];
  if (is_f(r) || is_f(c) || is_f(a) || is_f(b)) BROKEN(in, op, "integer dot of float values");
  int64_t *out = IP(r);
  const int64_t *A = IP(a), *B = IP(b);
  for (int64_t i = 0; i < M * N; i++) out[i] = 0;
  for (int64_t m = 0; m < M; m++)
    for (int64_t k = 0; k < K; k++) {
      int64_t av = A[m * K + k];
      for (int64_t n = 0; n < N; n++) out[m * N + n] += av * B[k * N + n];
    }
  int64_t sc = c->numel == 1 ? 0 : 1;
  for (int64_t i = 0; i < M * N; i++) out[i] = tl_int_to_int((int64_t)((uint64_t)out[i] + (uint64_t)IP(c)[i * sc]), DT(r));
}

static void exec_dot(interp *in, const tl_op *op) {
  need_operands(in, op, 3);
  slot *r = S(in, op->res[0]), *a = S(in, op->opnd[0]), *b = S(in, op->opnd[1]), *c = S(in, op->opnd[2]);
  const tl_type *at = a->type, *bt = b->type;
  if (at->rank != 2 || bt->rank != 2 || at->shape[1] != bt->shape[0]) BROKEN(in, op, "shapes or types");
  int64_t M = at->shape[0], K = at->shape[1], N = bt->shape[1];
  if (r->numel != M * N || (c->numel != M * N && c->numel != 1)) BROKEN(in, op, "result shape");
  if (!is_f(r)) {
    exec_dot_int(in, op, r, a, b, c);
    return;
  }
  if (!is_f(c) || !is_f(a) || !is_f(b)) BROKEN(in, op, "shapes or types");
  const float *A = FP(a), *B = FP(b);
  float *scratch = NULL;
  if (op->kind == TL_DOT_TF32) {
    scratch = malloc(sizeof(float) * (size_t)(a->numel + b->numel));
    if (!scratch) fail(in, "out of memory in dot");
    for (int64_t i = 0; i < a->numel; i++) scratch[i] = tf32_of(A[i]);
    for (int64_t i = 0; i < b->numel; i++) scratch[a->numel + i] = tf32_of(B[i]);
    A = scratch;
    B = scratch + a->numel;
  }
  float *out = FP(r);
  /* sum_k a[m,k] * b[k,n], each product and each addition rounded to f32,
   * k in increasing order; the k-outer loop keeps that order per element.
   * (Products of f16, bf16, fp8 and tf32 values are exact in f32.) */
  for (int64_t i = 0; i < M * N; i++) out[i] = 0.0f;
  for (int64_t m = 0; m < M; m++) {
    float *orow = out + m * N;
    for (int64_t k = 0; k < K; k++) {
      float av = A[m * K + k];
      const float *brow = B + k * N;
      for (int64_t n = 0; n < N; n++) {
        float p = av * brow[n];
        orow[n] = orow[n] + p;
      }
    }
  }
  int64_t sc = c->numel == 1 ? 0 : 1;
  for (int64_t i = 0; i < M * N; i++) out[i] = FP(c)[i * sc] + out[i];
  round_floats(out, r->numel, DT(r));
  free(scratch);
}

/* A view of a tensor: per tensor dim, start index and length (1 where indexed). */
typedef struct view {
  const tl_arg *t;
  int rank;
  int64_t start[TL_MAX_RANK], len[TL_MAX_RANK];
  bool empty; /* some dim entirely outside: every element is out of bounds */
} view;

/* value_numel: the tile's element count; a store may also broadcast one value
 * (allow_one). */
static void make_view(interp *in, const tl_op *op, view *v, int64_t value_numel, bool allow_one) {
  slot *ts = S(in, op->opnd[0]);
  if (!ts->tensor) BROKEN(in, op, "first operand is not a tensor");
  v->t = ts->tensor;
  v->rank = v->t->rank;
  v->empty = false;
  if (op->nopnd < 1 + v->rank) BROKEN(in, op, "missing indices");
  int64_t numel = 1;
  for (int d = 0; d < v->rank; d++) {
    v->start[d] = scalar_int(in, op->opnd[1 + d]);
    v->len[d] = op->dims[d] > 0 ? op->dims[d] : 1;
    numel *= v->len[d];
    /* a start outside [-len, size] leaves the whole dim out of bounds; this
     * also keeps start + i from overflowing below */
    if (v->start[d] <= -v->len[d] || v->start[d] >= v->t->shape[d]) v->empty = true;
  }
  if (numel != value_numel && !(allow_one && value_numel == 1)) BROKEN(in, op, "view length does not match the tile");
}

/* Visit every element of view v in row-major order; for each row of the last
 * dimension compute the in-bounds range [lo, hi) and the base element offset. */
#define VIEW_ROWS(v, BODY)                                                                       \
  do {                                                                                           \
    int last_ = (v)->rank - 1;                                                                   \
    int64_t rowlen_ = last_ >= 0 ? (v)->len[last_] : 1, nrows_ = 1;                              \
    for (int d_ = 0; d_ < last_; d_++) nrows_ *= (v)->len[d_];                                   \
    for (int64_t row_ = 0; row_ < nrows_; row_++) {                                              \
      int64_t rem_ = row_, base_ = 0;                                                            \
      bool inb_ = !(v)->empty;                                                                   \
      for (int d_ = last_ - 1; d_ >= 0; d_--) {                                                  \
        int64_t ix_ = (v)->start[d_] + rem_ % (v)->len[d_];                                      \
        rem_ /= (v)->len[d_];                                                                    \
        if (ix_ < 0 || ix_ >= (v)->t->shape[d_]) inb_ = false;                                   \
        else base_ += ix_ * (v)->t->strides[d_];                                                 \
      }                                                                                          \
      int64_t lo_ = 0, hi_ = 0, s0_ = 0, st_ = 0;                                                \
      if (inb_ && last_ >= 0) {                                                                  \
        s0_ = (v)->start[last_];                                                                 \
        st_ = (v)->t->strides[last_];                                                            \
        lo_ = s0_ < 0 ? -s0_ : 0;                                                                \
        hi_ = (v)->t->shape[last_] - s0_;                                                        \
        if (hi_ > rowlen_) hi_ = rowlen_;                                                        \
        if (hi_ < lo_) hi_ = lo_;                                                                \
      } else if (inb_) {                                                                         \
        hi_ = 1;                                                                                 \
      }                                                                                          \
      int64_t first_ = row_ * rowlen_;                                                           \
      (void)first_; (void)base_; (void)s0_; (void)st_;                                           \
      BODY                                                                                       \
    }                                                                                            \
  } while (0)

/* ---- views with gather indices, and atomics: element by element ------------- */
/* A view whose index along a dim may be a tile of the view's shape (a gather:
 * element e uses gidx[d][e]); len[d] = 0 where the dim is indexed. */
typedef struct eview {
  const tl_arg *t;
  int rank;
  int64_t start[TL_MAX_RANK];
  const int64_t *gidx[TL_MAX_RANK];
  int64_t len[TL_MAX_RANK];
  int64_t numel;
} eview;

static bool has_gather(interp *in, const tl_op *op) {
  slot *ts = S(in, op->opnd[0]);
  if (!ts->tensor || op->nopnd < 1 + ts->tensor->rank) return false;
  for (int d = 0; d < ts->tensor->rank; d++)
    if (in->f->values.data[op->opnd[1 + d]].type.kind == TL_KIND_TILE) return true;
  return false;
}

static void make_eview(interp *in, const tl_op *op, eview *v, int64_t value_numel) {
  slot *ts = S(in, op->opnd[0]);
  if (!ts->tensor) BROKEN(in, op, "first operand is not a tensor");
  v->t = ts->tensor;
  v->rank = v->t->rank;
  if (op->nopnd < 1 + v->rank) BROKEN(in, op, "missing indices");
  v->numel = 1;
  for (int d = 0; d < v->rank; d++) {
    slot *ix = S(in, op->opnd[1 + d]);
    v->len[d] = op->dims[d] > 0 ? op->dims[d] : 0;
    v->gidx[d] = NULL;
    v->start[d] = 0;
    if (ix->type->kind == TL_KIND_TILE) {
      if (!v->len[d] || ix->numel != value_numel || is_f(ix)) BROKEN(in, op, "gather index of another shape");
      v->gidx[d] = IP(ix);
    } else {
      v->start[d] = scalar_int(in, op->opnd[1 + d]);
    }
    if (v->len[d]) v->numel *= v->len[d];
  }
  if (v->numel != value_numel) BROKEN(in, op, "view length does not match the tile");
}

/* Element offset of view element e (row-major); false when it is outside. */
static bool eview_offset(const eview *v, int64_t e, int64_t *off) {
  int64_t rem = e, o = 0;
  bool inb = true;
  for (int d = v->rank - 1; d >= 0; d--) {
    int64_t ix = v->start[d];
    if (v->len[d]) {
      int64_t c = rem % v->len[d];
      rem /= v->len[d];
      if (v->gidx[d]) ix = v->gidx[d][e];
      else if (__builtin_add_overflow(ix, c, &ix)) ix = -1;
    }
    if (ix < 0 || ix >= v->t->shape[d]) inb = false;
    else o += ix * v->t->strides[d];
  }
  *off = o;
  return inb;
}

static void exec_load_gather(interp *in, const tl_op *op, slot *r) {
  eview v;
  make_eview(in, op, &v, r->numel);
  tl_dtype tdt = v.t->dtype;
  int esz = tl_dtype_bytes(tdt);
  bool fl = is_f(r);
  slot *other = op->nopnd > 1 + v.rank ? S(in, op->opnd[1 + v.rank]) : NULL;
  int64_t so = other ? ew_stride(in, op, other, r->numel) : 0;
  if (other && is_f(other) != fl) BROKEN(in, op, "`other` of another kind");
  for (int64_t e = 0; e < r->numel; e++) {
    int64_t off;
    load_elem(r, e, eview_offset(&v, e, &off) ? (const char *)v.t->data + off * esz : NULL, tdt, fl, other, so);
  }
}

/* Scatter (store) and atomics: element by element in row-major order, so a
 * repeated index ends with the last element's value (store), and float
 * atomics add in that order (docs/interpreter.md). */
static void exec_scatter(interp *in, const tl_op *op) {
  if (op->nopnd < 2) BROKEN(in, op, "missing operands");
  slot *val = S(in, op->opnd[op->nopnd - 1]);
  eview v;
  make_eview(in, op, &v, val->numel);
  if (op->nopnd != v.rank + 2) BROKEN(in, op, "operand count");
  tl_dtype tdt = v.t->dtype;
  int esz = tl_dtype_bytes(tdt);
  bool fl = is_f(val);
  if (fl != tl_dtype_is_float(tdt)) BROKEN(in, op, "value kind is not the tensor's");
  bool atomic = op->opc == TL_OP_atomic;
  if (atomic && op->kind == TL_ATOMIC_FETCH_ADD) { /* one element, the old value as the result */
    if (op->nres != 1 || fl || val->numel != 1) BROKEN(in, op, "fetch_add operands");
    int64_t off, old = 0;
    if (eview_offset(&v, 0, &off)) {
      char *p = (char *)v.t->data + off * esz;
      float fo = 0;
      read_elem(tdt, p, &fo, &old);
      write_elem(tdt, p, false, 0, (int64_t)((uint64_t)old + (uint64_t)IP(val)[0])); /* wraps, as add */
    }
    IP(S(in, op->res[0]))[0] = old; /* outside the tensor: 0, nothing written */
    return;
  }
  for (int64_t e = 0; e < val->numel; e++) {
    int64_t off;
    if (!eview_offset(&v, e, &off)) continue;
    char *p = (char *)v.t->data + off * esz;
    float fv = fl ? FP(val)[e] : 0;
    int64_t iv = fl ? 0 : IP(val)[e];
    if (atomic) {
      float fo = 0;
      int64_t io = 0;
      read_elem(tdt, p, &fo, &io);
      switch (op->kind) {
      case TL_ATOMIC_ADD:
        /* one rounding of the exact sum, as the hardware's: in f32, or for
         * 16-bit floats through double (exact enough that rounding twice
         * cannot differ from once) */
        if (fl) fv = tdt == TL_F32 ? fo + fv : tl_round_to_dtype((double)fo + (double)fv, tdt);
        else iv = (int64_t)((uint64_t)io + (uint64_t)iv);
        break;
      case TL_ATOMIC_MAX:
        if (fl) fv = f_max(fo, fv); else iv = io > iv ? io : iv;
        break;
      case TL_ATOMIC_MIN:
        if (fl) fv = f_min(fo, fv); else iv = io < iv ? io : iv;
        break;
      default: BROKEN(in, op, "atomic kind");
      }
    }
    write_elem(tdt, p, fl, fv, iv);
  }
}

/* slice: result element c is source element c + starts; cat: a, then b
 * along the axis; permute: result coordinate d is source coordinate dims[d]. */
static void exec_slice_cat(interp *in, const tl_op *op) {
  slot *r = S(in, op->res[0]), *a = S(in, op->opnd[0]);
  slot *b = op->opc == TL_OP_cat ? S(in, op->opnd[1]) : NULL;
  const tl_type *rt = r->type, *at = a->type;
  if (rt->kind != TL_KIND_TILE || at->kind != TL_KIND_TILE || at->rank != rt->rank || is_f(a) != is_f(r) ||
      (b && (b->type->kind != TL_KIND_TILE || b->type->rank != rt->rank || is_f(b) != is_f(r))))
    BROKEN(in, op, "operands");
  int rank = rt->rank, axis = op->axis;
  int32_t c[TL_MAX_RANK] = {0};
  for (int64_t e = 0; e < r->numel; e++) {
    int64_t rem = e;
    for (int d = rank - 1; d >= 0; d--) {
      c[d] = (int32_t)(rem % rt->shape[d]);
      rem /= rt->shape[d];
    }
    slot *src = a;
    const tl_type *stt = at;
    int32_t sc[TL_MAX_RANK] = {0};
    for (int d = 0; d < rank; d++) sc[d] = c[d] + (op->opc == TL_OP_slice ? op->dims[d] : 0);
    if (op->opc == TL_OP_permute)
      for (int d = 0; d < rank; d++) {
        if (op->dims[d] < 0 || op->dims[d] >= rank) BROKEN(in, op, "order");
        sc[op->dims[d]] = c[d];
      }
    if (b && c[axis] >= at->shape[axis]) {
      src = b;
      stt = b->type;
      sc[axis] -= at->shape[axis];
    }
    int64_t off = 0;
    for (int d = 0; d < rank; d++) {
      if (sc[d] < 0 || sc[d] >= stt->shape[d]) BROKEN(in, op, "index outside the source");
      off = off * stt->shape[d] + sc[d];
    }
    if (is_f(r)) FP(r)[e] = FP(src)[off];
    else IP(r)[e] = IP(src)[off];
  }
}

/* scan and argreduce: lines along the axis, each in index order. */
static void line_geometry(const tl_type *t, int axis, int64_t *outer, int64_t *len, int64_t *inner) {
  *outer = *inner = 1;
  for (int d = 0; d < t->rank; d++) {
    if (d < axis) *outer *= t->shape[d];
    if (d > axis) *inner *= t->shape[d];
  }
  *len = t->shape[axis];
}

/* Inclusive scan: floats accumulate in f32 (each output rounded to the
 * dtype once), ints wrap; max is NaN-propagating.  The GPU runs the same
 * sequence (emit_scan.c), so results agree bit for bit. */
static void exec_scan(interp *in, const tl_op *op) {
  need_operands(in, op, 1);
  slot *r = S(in, op->res[0]), *a = S(in, op->opnd[0]);
  if (a->type->kind != TL_KIND_TILE || op->axis < 0 || op->axis >= a->type->rank || r->numel != a->numel)
    BROKEN(in, op, "operand");
  int64_t outer, len, inner;
  line_geometry(a->type, op->axis, &outer, &len, &inner);
  tl_dtype dt = DT(r);
  bool sum = op->kind == TL_SCAN_SUM;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      float fa = 0;
      int64_t ia = 0;
      for (int64_t j = 0; j < len; j++) {
        int64_t e = (o * len + j) * inner + i;
        if (is_f(a)) {
          float x = FP(a)[e];
          fa = j == 0 ? x : sum ? fa + x : f_max(fa, x);
          FP(r)[e] = tl_round_to_dtype(fa, dt);
        } else {
          int64_t x = IP(a)[e];
          ia = j == 0 ? x : sum ? tl_int_to_int(int_binop(TL_OP_add, 64, true, ia, x), dt) : (x > ia ? x : ia);
          IP(r)[e] = ia;
        }
      }
    }
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}
static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* sort: each line along the axis in the order of lib/sortkey.h (floats by
 * key; integers by value), reversed when descending. */
static void exec_sort(interp *in, const tl_op *op) {
  need_operands(in, op, 1);
  slot *r = S(in, op->res[0]), *a = S(in, op->opnd[0]);
  if (a->type->kind != TL_KIND_TILE || op->axis < 0 || op->axis >= a->type->rank || r->numel != a->numel)
    BROKEN(in, op, "operand");
  int64_t outer, len, inner;
  line_geometry(a->type, op->axis, &outer, &len, &inner);
  void *buf = malloc((size_t)len * 8);
  if (!buf) fail(in, "out of memory");
  uint32_t *ku = buf;
  int64_t *ki = buf;
  bool fl = is_f(a), desc = op->kind != 0;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      for (int64_t j = 0; j < len; j++) {
        int64_t e = (o * len + j) * inner + i;
        if (fl) {
          uint32_t bits;
          memcpy(&bits, &FP(a)[e], 4);
          ku[j] = tl_sort_key_f32(bits);
        } else {
          ki[j] = IP(a)[e];
        }
      }
      qsort(buf, (size_t)len, fl ? 4 : 8, fl ? cmp_u32 : cmp_i64);
      for (int64_t j = 0; j < len; j++) {
        int64_t e = (o * len + j) * inner + i, src = desc ? len - 1 - j : j;
        if (fl) {
          uint32_t bits = tl_sort_f32_of_key(ku[src]);
          float v;
          memcpy(&v, &bits, 4);
          FP(r)[e] = tl_round_to_dtype(v, DT(r));
        } else {
          IP(r)[e] = ki[src];
        }
      }
    }
  free(buf);
}

/* argmax / argmin: the first index of the extremum; a NaN counts as the
 * extremum (the first NaN wins). */
static void exec_argreduce(interp *in, const tl_op *op) {
  need_operands(in, op, 1);
  slot *r = S(in, op->res[0]), *a = S(in, op->opnd[0]);
  if (a->type->kind != TL_KIND_TILE || op->axis < 0 || op->axis >= a->type->rank || is_f(r)) BROKEN(in, op, "operand");
  int64_t outer, len, inner;
  line_geometry(a->type, op->axis, &outer, &len, &inner);
  if (r->numel != outer * inner) BROKEN(in, op, "result size");
  bool mx = op->kind == TL_ARG_MAX;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t best = 0;
      for (int64_t j = 1; j < len; j++) {
        int64_t e = (o * len + j) * inner + i, eb = (o * len + best) * inner + i;
        bool take;
        if (is_f(a)) {
          float x = FP(a)[e], b = FP(a)[eb];
          take = (mx ? x > b : x < b) || (isnan(x) && !isnan(b));
        } else {
          int64_t x = IP(a)[e], b = IP(a)[eb];
          take = mx ? x > b : x < b;
        }
        if (take) best = j;
      }
      IP(r)[o * inner + i] = best;
    }
}

/* rand: Philox-4x32-10 (lib/philox.h), bit for bit the GPU's.  One block gives four words:
 * rand / randint take word o % 4 of the block o / 4 (stream 0), randn words 2 (o % 2) and
 * 2 (o % 2) + 1 of the block o / 2 of stream 1 (docs/language.md "Random numbers"). */
static void exec_rand(interp *in, const tl_op *op) {
  need_operands(in, op, 2);
  slot *r = S(in, op->res[0]), *off = S(in, op->opnd[1]);
  int64_t seed = scalar_int(in, op->opnd[0]);
  if (is_f(off) || off->numel != r->numel) BROKEN(in, op, "offsets of another shape");
  uint32_t key[2] = {(uint32_t)(uint64_t)seed, (uint32_t)((uint64_t)seed >> 32)};
  for (int64_t i = 0; i < r->numel; i++) {
    uint32_t o = (uint32_t)IP(off)[i], out[4];
    if (op->kind == TL_RAND_NORMAL) {
      uint32_t ctr[4] = {o >> 1, TL_RAND_NORMAL_STREAM, 0, 0};
      tl_philox4x32_10(ctr, key, out);
      FP(r)[i] = tl_rand_normal(out[2 * (o & 1)], out[2 * (o & 1) + 1]);
      continue;
    }
    uint32_t ctr[4] = {o >> 2, 0, 0, 0};
    tl_philox4x32_10(ctr, key, out);
    switch (op->kind) {
    case TL_RAND_UNIFORM: FP(r)[i] = tl_rand_uniform(out[o & 3]); break;
    case TL_RAND_INT: IP(r)[i] = (int32_t)out[o & 3]; break;
    default: BROKEN(in, op, "rand kind");
    }
  }
}

static void exec_load(interp *in, const tl_op *op) {
  slot *r = S(in, op->res[0]);
  if (has_gather(in, op)) {
    exec_load_gather(in, op, r);
    return;
  }
  view v;
  make_view(in, op, &v, r->numel, false);
  tl_dtype tdt = v.t->dtype;
  int esz = tl_dtype_bytes(tdt);
  const char *data = v.t->data;
  bool fl = is_f(r);
  slot *other = op->nopnd > 1 + v.rank ? S(in, op->opnd[1 + v.rank]) : NULL;
  int64_t so = other ? ew_stride(in, op, other, r->numel) : 0;
  if (other && is_f(other) != fl) BROKEN(in, op, "`other` of another kind");
  if (fl != tl_dtype_is_float(tdt) || (fl && DT(r) != tdt)) BROKEN(in, op, "tile dtype is not the tensor's");
  VIEW_ROWS(&v, {
    for (int64_t i = 0; i < rowlen_; i++) {
      int64_t e = first_ + i;
      load_elem(r, e, i >= lo_ && i < hi_ ? data + (base_ + (s0_ + i) * st_) * esz : NULL, tdt, fl, other, so);
    }
  });
}

static void exec_store(interp *in, const tl_op *op) {
  if (has_gather(in, op)) {
    exec_scatter(in, op);
    return;
  }
  if (op->nopnd < 2) BROKEN(in, op, "missing operands");
  slot *val = S(in, op->opnd[op->nopnd - 1]);
  view v;
  make_view(in, op, &v, val->numel, true);
  if (op->nopnd != v.rank + 2) BROKEN(in, op, "operand count");
  tl_dtype tdt = v.t->dtype;
  int esz = tl_dtype_bytes(tdt);
  char *data = v.t->data;
  bool fl = is_f(val);
  int64_t sv = val->numel == 1 ? 0 : 1;
  VIEW_ROWS(&v, {
    for (int64_t i = lo_; i < hi_; i++) {
      int64_t e = (first_ + i) * sv;
      char *p = data + (base_ + (s0_ + i) * st_) * esz;
      write_elem(tdt, p, fl, fl ? FP(val)[e] : 0, fl ? 0 : IP(val)[e]);
    }
  });
}

static void copy_value(interp *in, const tl_op *op, int32_t dst, int32_t src) {
  slot *d = S(in, dst), *s = S(in, src);
  if (d == s) return;
  if (is_f(d) != is_f(s) || (s->numel != d->numel && s->numel != 1))
    BROKEN(in, op, "carried/yielded value of another type");
  if (s->numel == d->numel) { memcpy(d->data, s->data, (size_t)d->numel * elem_size(d)); return; }
  for (int64_t i = 0; i < d->numel; i++) {
    if (is_f(d)) FP(d)[i] = FP(s)[0]; else IP(d)[i] = IP(s)[0];
  }
}

static int32_t run_region(interp *in, const tl_region *r);

/* The yield op with id y (NULL for -1: the region had none). */
static const tl_op *region_yield(interp *in, int32_t y) {
  if (y < 0) return NULL;
  return &in->f->ops.data[y];
}

static void yield_into_results(interp *in, const tl_op *op, const tl_op *y) {
  int ny = y ? y->nopnd : 0;
  if (ny != op->nres) BROKEN(in, op, "yield count differs from the result count");
  for (int i = 0; i < ny; i++) copy_value(in, op, op->res[i], y->opnd[i]);
}

static void exec_for(interp *in, const tl_op *op) {
  if (op->nopnd < 3 || op->nregions < 1) BROKEN(in, op, "malformed");
  const tl_region *body = &op->regions[0];
  int ncarried = op->nopnd - 3;
  if (body->args.len != ncarried + 1 || op->nres != ncarried) BROKEN(in, op, "carried values do not match");
  int64_t lo = scalar_int(in, op->opnd[0]), hi = scalar_int(in, op->opnd[1]), step = scalar_int(in, op->opnd[2]);
  if (step <= 0)
    fail(in, "for loop at line %d: step must be positive, got %lld", (int)op->loc.line, (long long)step);
  for (int i = 0; i < ncarried; i++) copy_value(in, op, body->args.data[1 + i], op->opnd[3 + i]);
  slot *iv = S(in, body->args.data[0]);
  bool any = false;
  for (int64_t i = lo; i < hi; i += step) {
    any = true;
    if (is_f(iv)) FP(iv)[0] = (float)i; else IP(iv)[0] = tl_int_to_int(i, DT(iv));
    int32_t y = run_region(in, body);
    yield_into_results(in, op, region_yield(in, y));
    for (int k = 0; k < ncarried; k++) copy_value(in, op, body->args.data[1 + k], op->res[k]);
    if (i > INT64_MAX - step) break;
  }
  if (!any)
    for (int k = 0; k < ncarried; k++) copy_value(in, op, op->res[k], op->opnd[3 + k]);
}

static void exec_if(interp *in, const tl_op *op) {
  if (op->nopnd < 1 || op->nregions < 1) BROKEN(in, op, "malformed");
  bool cond = scalar_int(in, op->opnd[0]) != 0;
  if (!cond && op->nregions < 2) {
    if (op->nres) BROKEN(in, op, "results without an else region");
    return;
  }
  const tl_region *r = &op->regions[cond ? 0 : 1];
  int32_t y = run_region(in, r);
  yield_into_results(in, op, region_yield(in, y));
}

/* A false `require` (grid region): the diagnostic of lib/require.h with the arguments' values. */
TL_NORETURN static void require_failed(interp *in, const tl_op *op) {
  tl_require_name names[TL_REQ_MAX_NAMES];
  char text[TL_REQ_MAX_NAMES][32];
  const char *vals[TL_REQ_MAX_NAMES];
  int nn = tl_require_names(in->f, op->req_text, names, TL_REQ_MAX_NAMES);
  for (int i = 0; i < nn; i++) {
    const tl_require_name *nm = &names[i];
    const tl_arg *a = nm->param >= 0 && nm->param < in->f->params.len ? &in->args[nm->param] : NULL;
    if (nm->kind == TL_REQ_CONST) snprintf(text[i], sizeof text[i], "%lld", (long long)nm->value);
    else if (nm->kind == TL_REQ_SYM && a && a->is_tensor && nm->axis >= 0 && nm->axis < a->rank)
      snprintf(text[i], sizeof text[i], "%lld", (long long)a->shape[nm->axis]);
    else if (nm->kind == TL_REQ_PARAM && a && !a->is_tensor && a->is_float) snprintf(text[i], sizeof text[i], "%g", a->f);
    else if (nm->kind == TL_REQ_PARAM && a && !a->is_tensor) snprintf(text[i], sizeof text[i], "%lld", (long long)a->i);
    else snprintf(text[i], sizeof text[i], "?");
    vals[i] = text[i];
  }
  tl_require_format(in->f, op, names, vals, nn, in->err, in->errn);
  longjmp(in->fail, 1);
}

static void exec_op(interp *in, const tl_op *op) {
  switch ((tl_opcode)op->opc) {
  case TL_OP_require:
    if (op->nopnd != 1) BROKEN(in, op, "wrong number of operands");
    if (!scalar_int(in, op->opnd[0])) require_failed(in, op);
    break;
  case TL_OP_const: exec_const(in, op); break;
  case TL_OP_dim: {
    need_operands(in, op, 1);
    slot *t = S(in, op->opnd[0]);
    if (!t->tensor || op->axis < 0 || op->axis >= t->tensor->rank) BROKEN(in, op, "bad tensor or axis");
    slot *r = S(in, op->res[0]);
    IP(r)[0] = tl_int_to_int(t->tensor->shape[op->axis], DT(r));
    break;
  }
  case TL_OP_program_id:
  case TL_OP_num_programs: {
    if (op->axis < 0 || op->axis > 2) BROKEN(in, op, "axis");
    slot *r = S(in, op->res[0]);
    int64_t v = op->opc == TL_OP_program_id ? in->pid[op->axis] : in->npid[op->axis];
    if (is_f(r)) BROKEN(in, op, "float result");
    IP(r)[0] = tl_int_to_int(v, DT(r));
    break;
  }
  case TL_OP_iota: exec_iota(in, op); break;
  case TL_OP_add: case TL_OP_sub: case TL_OP_mul: case TL_OP_div: case TL_OP_rem:
  case TL_OP_min: case TL_OP_max: case TL_OP_and: case TL_OP_or: case TL_OP_xor:
  case TL_OP_shl: case TL_OP_shr: case TL_OP_cmp:
    exec_binary(in, op);
    break;
  case TL_OP_select: exec_select(in, op); break;
  case TL_OP_fma: exec_fma(in, op); break;
  case TL_OP_neg: case TL_OP_not: case TL_OP_abs: case TL_OP_exp: case TL_OP_exp2: case TL_OP_log:
  case TL_OP_log2: case TL_OP_sqrt: case TL_OP_rsqrt: case TL_OP_sin: case TL_OP_cos: case TL_OP_tanh:
  case TL_OP_sigmoid: case TL_OP_floor: case TL_OP_ceil:
    exec_unary(in, op);
    break;
  case TL_OP_cast: exec_cast(in, op); break;
  case TL_OP_bitcast: exec_bitcast(in, op); break;
  case TL_OP_splat: case TL_OP_expand_dims: case TL_OP_reshape: case TL_OP_convert_layout:
    exec_copy(in, op);
    break;
  case TL_OP_broadcast: exec_broadcast(in, op); break;
  case TL_OP_trans: exec_trans(in, op); break;
  case TL_OP_reduce: exec_reduce(in, op); break;
  case TL_OP_dot: exec_dot(in, op); break;
  case TL_OP_load: exec_load(in, op); break;
  case TL_OP_store: exec_store(in, op); break;
  case TL_OP_atomic: exec_scatter(in, op); break;
  case TL_OP_rand: exec_rand(in, op); break;
  case TL_OP_scan: exec_scan(in, op); break;
  case TL_OP_sort: exec_sort(in, op); break;
  case TL_OP_slice: case TL_OP_cat: case TL_OP_permute: exec_slice_cat(in, op); break;
  case TL_OP_argreduce: exec_argreduce(in, op); break;
  case TL_OP_for: exec_for(in, op); break;
  case TL_OP_if: exec_if(in, op); break;
  default: BROKEN(in, op, "not supported by the interpreter");
  }
}

/* Run the ops of r in order; returns the id of its terminating yield, or -1. */
static int32_t run_region(interp *in, const tl_region *r) {
  for (int i = 0; i < r->ops.len; i++) {
    int32_t id = r->ops.data[i];
    const tl_op *op = &in->f->ops.data[id];
    if (op->flags & TL_OPF_DEAD) continue;
    if (op->opc == TL_OP_yield) return id;
    exec_op(in, op);
  }
  return -1;
}

/* ---- arguments --------------------------------------------------------------------------- */
static const char *param_name(const tl_param *p) { return p->name ? p->name : "?"; }

static const char *sym_name(const tl_func *f, int32_t sym) {
  if (sym >= 0 && sym < f->syms.len && f->syms.data[sym].name) return f->syms.data[sym].name;
  return "?";
}

bool tl_check_args(const tl_func *f, const tl_arg *args, int nargs, char *err, size_t n) {
  if (nargs != f->params.len) {
    set_err(err, n, "kernel %s takes %d arguments, got %d", f->name, f->params.len, nargs);
    return false;
  }
  if (nargs > 0 && !args) {
    set_err(err, n, "kernel %s: no argument array", f->name);
    return false;
  }
  for (int i = 0; i < nargs; i++) {
    const tl_param *p = &f->params.data[i];
    const tl_arg *a = &args[i];
    const char *pn = param_name(p);
    if (p->is_tensor != a->is_tensor) {
      set_err(err, n, "argument %d (%s): expected a %s, got a %s", i, pn, p->is_tensor ? "tensor" : "scalar",
              a->is_tensor ? "tensor" : "scalar");
      return false;
    }
    if (!p->is_tensor) continue;
    if (a->dtype != p->dtype) {
      set_err(err, n, "argument %d (%s): dtype %s, expected %s", i, pn, tl_dtype_name(a->dtype),
              tl_dtype_name(p->dtype));
      return false;
    }
    if (a->rank != p->rank) {
      set_err(err, n, "argument %d (%s): rank %d, expected %d", i, pn, a->rank, p->rank);
      return false;
    }
    int64_t max_off = 0; /* largest |element offset| of an in-bounds element */
    bool empty = false;
    for (int d = 0; d < p->rank; d++) {
      int64_t size = a->shape[d];
      const tl_dimspec *ds = &p->dims[d];
      if (size < 0 || size > INT32_MAX) {
        set_err(err, n, "argument %d (%s): dimension %d has size %lld, outside [0, 2^31)", i, pn, d,
                (long long)size);
        return false;
      }
      if (size == 0) empty = true;
      if (ds->is_const) {
        if (size != ds->value) {
          set_err(err, n, "argument %d (%s): dimension %d is %lld, expected the constant %lld", i, pn, d,
                  (long long)size, (long long)ds->value);
          return false;
        }
      } else {
        /* the first dimension bound to the same symbol decides its value */
        for (int j = 0; j <= i; j++) {
          const tl_param *q = &f->params.data[j];
          if (!q->is_tensor) continue;
          int dmax = j == i ? d : q->rank;
          bool found = false;
          for (int e = 0; e < dmax; e++) {
            if (q->dims[e].is_const || q->dims[e].sym != ds->sym) continue;
            found = true;
            if (args[j].shape[e] != size) {
              set_err(err, n,
                      "argument %d (%s): dimension %d (%s) is %lld, but %s = %lld from argument %d (%s) "
                      "dimension %d",
                      i, pn, d, sym_name(f, ds->sym), (long long)size, sym_name(f, ds->sym),
                      (long long)args[j].shape[e], j, param_name(q), e);
              return false;
            }
            break;
          }
          if (found) break;
        }
      }
      int64_t st = a->strides[d] < 0 ? -a->strides[d] : a->strides[d];
      if (a->strides[d] == INT64_MIN) st = INT64_MAX;
      if (size > 1) {
        int64_t span;
        if (__builtin_mul_overflow(size - 1, st, &span) || __builtin_add_overflow(max_off, span, &max_off)) {
          set_err(err, n, "argument %d (%s): strides overflow a 64-bit offset", i, pn);
          return false;
        }
      }
    }
    int64_t bytes;
    if (__builtin_mul_overflow(max_off, (int64_t)tl_dtype_bytes(a->dtype), &bytes)) {
      set_err(err, n, "argument %d (%s): strides overflow a 64-bit byte offset", i, pn);
      return false;
    }
    if (!empty && !a->data) {
      set_err(err, n, "argument %d (%s): null data for a non-empty tensor", i, pn);
      return false;
    }
  }
  return true;
}

static void bind_params(interp *in) {
  const tl_func *f = in->f;
  for (int i = 0; i < f->params.len; i++) {
    const tl_param *p = &f->params.data[i];
    const tl_arg *a = &in->args[i];
    slot *s = &in->slots[p->value];
    if (p->is_tensor) { s->tensor = a; continue; }
    if (!s->data) continue;
    tl_dtype dt = p->dtype;
    if (tl_dtype_is_float(dt)) FP(s)[0] = a->is_float ? tl_round_to_dtype(a->f, dt) : tl_int_to_float(a->i, dt);
    else IP(s)[0] = a->is_float ? tl_float_to_int(a->f, dt) : tl_int_to_int(a->i, dt);
  }
}

/* Storage for the values the grid region touches (params and its results). */
static bool plan_grid(interp *in, char *base, size_t *cursor) {
  const tl_func *f = in->f;
  for (int i = 0; i < f->params.len; i++)
    if (!plan_slot(in, f->params.data[i].value, base, cursor)) return false;
  for (int i = 0; i < f->grid.ops.len; i++) {
    const tl_op *op = &f->ops.data[f->grid.ops.data[i]];
    if (op->nregions) return false; /* only scalar ops belong in the grid */
    for (int k = 0; k < op->nres; k++)
      if (!plan_slot(in, op->res[k], base, cursor)) return false;
  }
  return true;
}

static bool eval_grid(interp *in, int64_t grid[3]) {
  for (int d = 0; d < 3; d++) grid[d] = 1;
  in->exact_ints = true; /* a wrapped grid size would launch the wrong number of programs */
  int32_t y = run_region(in, &in->f->grid);
  in->exact_ints = false;  /* (the kernel body keeps i32's wrapping) */
  if (y < 0) fail(in, "internal: kernel %s: grid region has no yield", in->f->name);
  const tl_op *yop = &in->f->ops.data[y];
  if (yop->nopnd < 1 || yop->nopnd > 3) fail(in, "internal: kernel %s: grid yields %d values", in->f->name, yop->nopnd);
  int64_t total = 1;
  for (int d = 0; d < yop->nopnd; d++) {
    grid[d] = scalar_int(in, yop->opnd[d]);
    if (grid[d] < 0) fail(in, "kernel %s: grid dimension %d is negative (%lld)", in->f->name, d, (long long)grid[d]);
    if (grid[d] > MAX_PROGRAMS) total = MAX_PROGRAMS + 1;
    else total *= grid[d];
    if (total > MAX_PROGRAMS) total = MAX_PROGRAMS + 1;
  }
  if (total > MAX_PROGRAMS)
    fail(in, "kernel %s: grid (%lld, %lld, %lld) has more than 2^31 programs", in->f->name, (long long)grid[0],
         (long long)grid[1], (long long)grid[2]);
  return true;
}

static interp *interp_new(const tl_func *f, const tl_arg *args, char *err, size_t n) {
  interp *in = calloc(1, sizeof *in);
  if (!in) { set_err(err, n, "out of memory"); return NULL; }
  in->slots = calloc((size_t)f->values.len + 1, sizeof(slot));
  if (!in->slots) { free(in); set_err(err, n, "out of memory"); return NULL; }
  in->f = f;
  in->args = args;
  in->err = err;
  in->errn = n;
  return in;
}

static void interp_free(interp *in) {
  if (!in) return;
  free(in->pool);
  free(in->slots);
  free(in);
}

bool tl_eval_grid(const tl_func *f, const tl_arg *args, int nargs, int64_t grid[3], char *err, size_t n) {
  if (!tl_check_args(f, args, nargs, err, n)) return false;
  tl_grid_eval *g = tl_grid_eval_new(f, err, n);
  if (!g) return false;
  bool ok = tl_grid_eval_run(g, args, nargs, grid, err, n);
  tl_grid_eval_free(g);
  return ok;
}

/* The allocation-free grid evaluator (see interp.h): an interp whose slots and
 * pool cover the grid region, made once; a run only binds the new arguments. */
struct tl_grid_eval { interp in; };

tl_grid_eval *tl_grid_eval_new(const tl_func *f, char *err, size_t n) {
  interp *in = interp_new(f, NULL, err, n);
  if (!in) return NULL;
  size_t bytes = 0;
  if (!plan_grid(in, NULL, &bytes)) {
    set_err(err, n, "internal: kernel %s: grid region has a non-scalar op", f->name);
    interp_free(in);
    return NULL;
  }
  in->pool = malloc(bytes + 16);
  if (!in->pool) {
    set_err(err, n, "out of memory");
    interp_free(in);
    return NULL;
  }
  bytes = 0;
  plan_grid(in, in->pool, &bytes);
  return (tl_grid_eval *)in; /* interp is the first (only) member */
}

bool tl_grid_eval_run(tl_grid_eval *g, const tl_arg *args, int nargs, int64_t grid[3], char *err, size_t n) {
  interp *in = &g->in;
  if (nargs != in->f->params.len) {
    set_err(err, n, "kernel %s: %d arguments for %d parameters", in->f->name, nargs, in->f->params.len);
    return false;
  }
  in->args = args;
  in->err = err;
  in->errn = n;
  if (setjmp(in->fail) != 0) return false;
  bind_params(in);
  return eval_grid(in, grid);
}

void tl_grid_eval_free(tl_grid_eval *g) {
  if (g) interp_free(&g->in);
}

bool tl_interpret_func(tl_func *f, const tl_arg *args, int nargs, char *err, size_t n) {
  if (!tl_check_args(f, args, nargs, err, n)) return false;
  interp *in = interp_new(f, args, err, n);
  if (!in) return false;
  bool ok = false;
  if (setjmp(in->fail) == 0) {
    size_t bytes = 0;
    for (int32_t v = 0; v < f->values.len; v++) {
      if (plan_slot(in, v, NULL, &bytes)) continue;
      char buf[64];
      fail(in, "kernel %s: value %%%d of type %s exceeds the interpreter's limit of %d elements per tile",
           f->name, (int)v, tl_type_str(&f->values.data[v].type, buf, sizeof buf), TL_MAX_TILE_ELEMS);
    }
    in->pool = malloc(bytes + 16);
    if (!in->pool) fail(in, "out of memory (%zu bytes of tiles)", bytes);
    bytes = 0;
    for (int32_t v = 0; v < f->values.len; v++) plan_slot(in, v, in->pool, &bytes);
    bind_params(in);
    int64_t grid[3];
    eval_grid(in, grid);
    /* CUDA's grid limits (every sm_80+ device: 2^31 - 1 x 65535 x 65535), which a launch of the kernel would meet:
     * the interpreter refuses what the GPU would, with the JIT launcher's advice (lib/api/launch.c) */
    static const int64_t max_grid[3] = {2147483647, 65535, 65535};
    for (int d = 0; d < 3; d++)
      if (grid[d] > max_grid[d])
        fail(in, "kernel %s: grid (%lld, %lld, %lld): axis %d has %lld programs; a CUDA grid allows at most %lld on "
             "axis %d (2147483647 x 65535 x 65535), so a launch would refuse it: " TL_GRID_AXIS0_ADVICE,
             f->name, (long long)grid[0], (long long)grid[1], (long long)grid[2], d, (long long)grid[d],
             (long long)max_grid[d], d);
    for (int d = 0; d < 3; d++) in->npid[d] = grid[d];
    for (int64_t z = 0; z < grid[2]; z++)
      for (int64_t y = 0; y < grid[1]; y++)
        for (int64_t x = 0; x < grid[0]; x++) {
          in->pid[0] = x;
          in->pid[1] = y;
          in->pid[2] = z;
          run_region(in, &f->body);
        }
    ok = true;
  }
  interp_free(in);
  return ok;
}
