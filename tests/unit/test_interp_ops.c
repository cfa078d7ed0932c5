/* test_interp_ops.c: the interpreter against plain C on random data, op by
 * op, at ragged sizes (1, tile-1, tile, tile+1, primes). */
#include "test_interp_helpers.h"

#define NSIZES 6
static int64_t ragged_size(int i, int64_t tile) {
  const int64_t s[NSIZES] = {1, tile - 1, tile, tile + 1, 37, 3 * tile + 5};
  return s[i] < 1 ? 1 : s[i];
}

/* kernel(X[N], Y[N], Z[N]) grid(cdiv(N, B)): Z[o:+B] = op(X[o:+B], Y[o:+B]),
 * or with chain: op(op(x, y), x) (shows the rounding between two ops). */
static bool g_chain;
static kb *build_ew1d(tl_opcode opc, tl_dtype dt, int32_t B, bool unary) {
  kb *k = kb_new("ew");
  const char *dn[1] = {"N"};
  int32_t X = kb_tensor(k, "X", dt, 1, dn), Y = kb_tensor(k, "Y", dt, 1, dn), Z = kb_tensor(k, "Z", dt, 1, dn);
  int32_t g = kb_cdiv_dim(k, kb_gridr(k), X, 0, B);
  kb_yield(k, kb_gridr(k), &g, 1);
  tl_region *b = kb_body(k);
  int32_t off = tl_build_binary(k->f, b, TL_OP_mul, kb_pid(k, b, 0), kb_ci(k, b, B), TL_NOLOC);
  int32_t len = B;
  int32_t x = kb_load(k, b, X, 1, &off, &len, tile1(dt, B), -1);
  int32_t y = kb_load(k, b, Y, 1, &off, &len, tile1(dt, B), -1);
  int32_t z = unary ? tl_build_unary(k->f, b, opc, x, TL_NOLOC) : tl_build_binary(k->f, b, opc, x, y, TL_NOLOC);
  if (g_chain) z = tl_build_binary(k->f, b, opc, z, x, TL_NOLOC);
  kb_store(k, b, Z, 1, &off, &len, z);
  return k;
}

static double ref_float_op(tl_opcode opc, float p, float q) {
  switch (opc) {
  case TL_OP_add: return p + q;
  case TL_OP_sub: return p - q;
  case TL_OP_mul: return p * q;
  case TL_OP_div: return p / q;
  case TL_OP_rem: return fmodf(p, q);
  case TL_OP_min: return fminf(p, q);
  case TL_OP_max: return fmaxf(p, q);
  case TL_OP_exp: return exp((double)p);
  case TL_OP_exp2: return exp2((double)p);
  case TL_OP_log: return log((double)p);
  case TL_OP_sqrt: return sqrt((double)p);
  case TL_OP_rsqrt: return 1 / sqrt((double)p);
  case TL_OP_sin: return sin((double)p);
  case TL_OP_tanh: return tanh((double)p);
  case TL_OP_sigmoid: return 1 / (1 + exp(-(double)p));
  case TL_OP_neg: return -p;
  case TL_OP_abs: return fabsf(p);
  case TL_OP_floor: return floorf(p);
  default: cr_assert_fail("no reference for op %d", opc); return 0;
  }
}

static void check_float_ew(tl_opcode opc, tl_dtype dt, bool unary, double lo, double hi, uint64_t seed) {
  const int32_t B = 16;
  kb *k = build_ew1d(opc, dt, B, unary);
  rng g = {seed};
  for (int si = 0; si < NSIZES; si++) {
    int64_t n = ragged_size(si, B), guard = 8, full = n + guard;
    tl_arg a[3];
    a[0] = targ(dt, 1, &n);
    a[1] = targ(dt, 1, &n);
    a[2] = targ(dt, 1, &full);
    tpoison(&a[2]);
    a[2].shape[0] = n; /* storage has a guard zone beyond the tensor */
    tfill_random(&a[0], &g, lo, hi);
    tfill_random(&a[1], &g, lo, hi);
    run_ok(k, a, 3);
    for (int64_t i = 0; i < n; i++) {
      float p = tget_f(&a[0], i), q = tget_f(&a[1], i);
      float want = tl_round_to_dtype(ref_float_op(opc, p, q), dt), got = tget_f(&a[2], i);
      if (g_chain) want = tl_round_to_dtype(ref_float_op(opc, want, p), dt);
      cr_assert(!isnan(got), "%s %s n=%lld: element %lld not written", tl_opinfo_table[opc].name,
                tl_dtype_name(dt), (long long)n, (long long)i);
      cr_assert(memcmp(&want, &got, sizeof got) == 0, "%s %s n=%lld [%lld]: %a op %a = %a, want %a",
                tl_opinfo_table[opc].name, tl_dtype_name(dt), (long long)n, (long long)i, (double)p,
                (double)q, (double)got, (double)want);
    }
    for (int64_t i = n; i < full; i++) cr_assert(isnan(tget_f(&a[2], i)), "store beyond the tensor at %lld", (long long)i);
    for (int j = 0; j < 3; j++) free(a[j].data);
  }
  kb_free(k);
}

Test(interp_ops, float_binary_f32) {
  const tl_opcode ops[] = {TL_OP_add, TL_OP_sub, TL_OP_mul, TL_OP_div, TL_OP_rem, TL_OP_min, TL_OP_max};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) check_float_ew(ops[i], TL_F32, false, -10, 10, 11 + i);
}

Test(interp_ops, float_binary_narrow_rounds_after_each_op) {
  const tl_dtype dts[] = {TL_BF16, TL_F16, TL_F8E4M3, TL_F8E5M2};
  const tl_opcode ops[] = {TL_OP_add, TL_OP_mul, TL_OP_div, TL_OP_max};
  for (size_t d = 0; d < 4; d++)
    for (size_t i = 0; i < 4; i++) check_float_ew(ops[i], dts[d], false, -20, 20, 101 + d * 7 + i);
  g_chain = true;
  for (size_t d = 0; d < 4; d++)
    for (size_t i = 0; i < 4; i++) check_float_ew(ops[i], dts[d], false, -20, 20, 151 + d * 7 + i);
  g_chain = false;
}

Test(interp_ops, float_unary) {
  const tl_opcode ops[] = {TL_OP_exp, TL_OP_exp2, TL_OP_sin, TL_OP_tanh, TL_OP_sigmoid, TL_OP_neg, TL_OP_abs, TL_OP_floor};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
    check_float_ew(ops[i], TL_F32, true, -8, 8, 201 + i);
    check_float_ew(ops[i], TL_BF16, true, -8, 8, 301 + i);
  }
  const tl_opcode pos[] = {TL_OP_log, TL_OP_sqrt, TL_OP_rsqrt};
  for (size_t i = 0; i < 3; i++) {
    check_float_ew(pos[i], TL_F32, true, 0.01, 100, 401 + i);
    check_float_ew(pos[i], TL_F16, true, 0.01, 100, 501 + i);
  }
}

/* ---- integers ----------------------------------------------------------------------- */
static int64_t ref_int_op(tl_opcode opc, tl_dtype dt, int64_t a, int64_t b) {
  int bits = dt == TL_I32 ? 32 : 8;
  int64_t r;
  switch (opc) {
  case TL_OP_add: r = a + b; break;
  case TL_OP_sub: r = a - b; break;
  case TL_OP_mul: r = a * b; break; /* a, b fit in 32 bits: no overflow in 64 */
  case TL_OP_div: r = b == 0 ? 0 : a / b; break;
  case TL_OP_rem: r = b == 0 ? 0 : a % b; break;
  case TL_OP_min: r = a < b ? a : b; break;
  case TL_OP_max: r = a > b ? a : b; break;
  case TL_OP_and: r = a & b; break;
  case TL_OP_xor: r = a ^ b; break;
  case TL_OP_shl: r = (b < 0 || b >= bits) ? 0 : (int64_t)((uint64_t)a << b); break;
  case TL_OP_shr: r = (b < 0 || b >= bits) ? (a < 0 ? -1 : 0) : a >> b; break;
  default: cr_assert_fail("no reference"); return 0;
  }
  return dt == TL_I32 ? (int64_t)(int32_t)(uint32_t)r : (int64_t)(int8_t)(uint8_t)r;
}

static int64_t tget_i(const tl_arg *a, int64_t i) {
  return a->dtype == TL_I32 ? ((int32_t *)a->data)[i] : ((int8_t *)a->data)[i];
}
static void tset_i(tl_arg *a, int64_t i, int64_t v) {
  if (a->dtype == TL_I32) ((int32_t *)a->data)[i] = (int32_t)v;
  else ((int8_t *)a->data)[i] = (int8_t)v;
}

static void check_int_ew(tl_opcode opc, tl_dtype dt, uint64_t seed) {
  const int32_t B = 8;
  kb *k = build_ew1d(opc, dt, B, false);
  rng g = {seed};
  bool shift = opc == TL_OP_shl || opc == TL_OP_shr;
  for (int si = 0; si < NSIZES; si++) {
    int64_t n = ragged_size(si, B);
    tl_arg a[3] = {targ(dt, 1, &n), targ(dt, 1, &n), targ(dt, 1, &n)};
    for (int64_t i = 0; i < n; i++) {
      int64_t x = (int64_t)rng_u64(&g), y = (int64_t)rng_u64(&g);
      if (i % 5 == 0) x = dt == TL_I32 ? INT32_MIN : INT8_MIN; /* edge values */
      if (i % 7 == 3) y = 0;                                   /* division by zero */
      if (i % 7 == 5) y = -1;
      if (shift) y = (int64_t)(rng_u64(&g) % 48) - 4;
      tset_i(&a[0], i, x);
      tset_i(&a[1], i, y);
    }
    run_ok(k, a, 3);
    for (int64_t i = 0; i < n; i++) {
      int64_t x = tget_i(&a[0], i), y = tget_i(&a[1], i);
      cr_assert_eq(tget_i(&a[2], i), ref_int_op(opc, dt, x, y), "%s %s: %lld, %lld", tl_opinfo_table[opc].name,
                   tl_dtype_name(dt), (long long)x, (long long)y);
    }
    for (int j = 0; j < 3; j++) free(a[j].data);
  }
  kb_free(k);
}

Test(interp_ops, integer_binary_wraps_and_never_traps) {
  const tl_opcode ops[] = {TL_OP_add, TL_OP_sub, TL_OP_mul, TL_OP_div, TL_OP_rem, TL_OP_min,
                           TL_OP_max, TL_OP_and, TL_OP_xor, TL_OP_shl, TL_OP_shr};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
    check_int_ew(ops[i], TL_I32, 600 + i);
    check_int_ew(ops[i], TL_I8, 700 + i);
  }
}

/* ---- casts ------------------------------------------------------------------------------- */
/* Z[N] of dst = cast<dst>(X[N] of src) */
static kb *build_cast(tl_dtype src, tl_dtype dst, int32_t B) {
  kb *k = kb_new("cast");
  const char *dn[1] = {"N"};
  int32_t X = kb_tensor(k, "X", src, 1, dn), Z = kb_tensor(k, "Z", dst, 1, dn);
  int32_t g = kb_cdiv_dim(k, kb_gridr(k), X, 0, B);
  kb_yield(k, kb_gridr(k), &g, 1);
  tl_region *b = kb_body(k);
  int32_t off = tl_build_binary(k->f, b, TL_OP_mul, kb_pid(k, b, 0), kb_ci(k, b, B), TL_NOLOC);
  int32_t len = B;
  int32_t x = kb_load(k, b, X, 1, &off, &len, tile1(src, B), -1);
  int32_t z = kb_op(k, b, TL_OP_cast, &x, 1, tile1(dst, B));
  kb_store(k, b, Z, 1, &off, &len, z);
  return k;
}

Test(interp_ops, cast_f32_to_narrow_floats) {
  const tl_dtype dts[] = {TL_BF16, TL_F16, TL_F8E4M3, TL_F8E5M2};
  rng g = {801};
  for (int d = 0; d < 4; d++) {
    kb *k = build_cast(TL_F32, dts[d], 32);
    int64_t n = 32 * 5 + 3;
    tl_arg a[2] = {targ(TL_F32, 1, &n), targ(dts[d], 1, &n)};
    for (int64_t i = 0; i < n; i++) /* wide magnitudes: subnormals to past the max */
      tset_f(&a[0], i, ldexp(rng_uniform(&g, -1, 1), (int)(rng_u64(&g) % 50) - 30));
    tpoison(&a[1]);
    run_ok(k, a, 2);
    for (int64_t i = 0; i < n; i++) {
      float x = tget_f(&a[0], i);
      uint32_t want = dts[d] == TL_BF16 ? tl_f32_to_bf16(x) : dts[d] == TL_F16 ? tl_f32_to_f16(x)
                      : dts[d] == TL_F8E4M3 ? tl_f32_to_e4m3(x) : tl_f32_to_e5m2(x);
      uint32_t got = 0;
      memcpy(&got, (char *)a[1].data + i * tl_dtype_bytes(dts[d]), (size_t)tl_dtype_bytes(dts[d]));
      cr_assert_eq(got, want, "cast %a to %s", (double)x, tl_dtype_name(dts[d]));
    }
    free(a[0].data);
    free(a[1].data);
    kb_free(k);
  }
}

Test(interp_ops, cast_f32_to_int_truncates_saturates) {
  rng g = {802};
  kb *k = build_cast(TL_F32, TL_I8, 16);
  int64_t n = 16 * 3 + 1;
  tl_arg a[2] = {targ(TL_F32, 1, &n), targ(TL_I8, 1, &n)};
  for (int64_t i = 0; i < n; i++) tset_f(&a[0], i, rng_uniform(&g, -400, 400));
  ((float *)a[0].data)[0] = NAN;
  run_ok(k, a, 2);
  for (int64_t i = 0; i < n; i++) {
    float x = ((float *)a[0].data)[i];
    double t = isnan(x) ? 0 : trunc(x);
    int want = t > 127 ? 127 : t < -128 ? -128 : (int)t;
    cr_assert_eq(((int8_t *)a[1].data)[i], want, "cast %g to i8", (double)x);
  }
  free(a[0].data);
  free(a[1].data);
  kb_free(k);
}

Test(interp_ops, cast_i32_to_bf16_and_f32) {
  rng g = {803};
  for (int d = 0; d < 2; d++) {
    tl_dtype dst = d ? TL_BF16 : TL_F32;
    kb *k = build_cast(TL_I32, dst, 16);
    int64_t n = 16 * 2 + 7;
    tl_arg a[2] = {targ(TL_I32, 1, &n), targ(dst, 1, &n)};
    for (int64_t i = 0; i < n; i++) ((int32_t *)a[0].data)[i] = (int32_t)rng_u64(&g) >> (rng_u64(&g) % 31);
    run_ok(k, a, 2);
    for (int64_t i = 0; i < n; i++) {
      int32_t x = ((int32_t *)a[0].data)[i];
      /* an i32 is exact in double, so one rounding from double is the truth */
      float want = tl_round_to_dtype((double)x, dst);
      cr_assert_eq(tget_f(&a[1], i), want, "cast %d to %s", x, tl_dtype_name(dst));
    }
    free(a[0].data);
    free(a[1].data);
    kb_free(k);
  }
}

/* ---- 2-D: reduce, broadcast, trans ------------------------------------------------------ */
/* Y[M] = reduce_kind(X[M, N], axis 1) with tile BM x BN, N <= BN, other = pad */
static void check_reduce_rows(tl_reduce_kind kind, int64_t M, int64_t N, uint64_t seed) {
  const int32_t BM = 8, BN = 16;
  kb *k = kb_new("reduce_rows");
  const char *dx[2] = {"M", "N"}, *dy[1] = {"M"};
  int32_t X = kb_tensor(k, "X", TL_F32, 2, dx), Y = kb_tensor(k, "Y", TL_F32, 1, dy);
  int32_t gv = kb_cdiv_dim(k, kb_gridr(k), X, 0, BM);
  kb_yield(k, kb_gridr(k), &gv, 1);
  tl_region *b = kb_body(k);
  int32_t m0 = tl_build_binary(k->f, b, TL_OP_mul, kb_pid(k, b, 0), kb_ci(k, b, BM), TL_NOLOC);
  double pad = kind == TL_RED_SUM ? 0 : kind == TL_RED_MAX ? -INFINITY : INFINITY;
  int32_t other = tl_build_const_f(k->f, b, tl_scalar_type(TL_F32), pad, TL_NOLOC);
  int32_t idx[2] = {m0, kb_ci(k, b, 0)}, lens[2] = {BM, BN};
  int32_t x = kb_load(k, b, X, 2, idx, lens, tile2(TL_F32, BM, BN), other);
  int32_t r = kb_op(k, b, TL_OP_reduce, &x, 1, tile1(TL_F32, BM));
  kb_def(k, r)->axis = 1;
  kb_def(k, r)->kind = kind;
  int32_t ylen = BM;
  kb_store(k, b, Y, 1, &m0, &ylen, r);
  int64_t xs[2] = {M, N};
  tl_arg a[2] = {targ(TL_F32, 2, xs), targ(TL_F32, 1, &M)};
  rng g = {seed};
  tfill_random(&a[0], &g, -5, 5);
  tpoison(&a[1]);
  run_ok(k, a, 2);
  const float *xv = a[0].data;
  for (int64_t i = 0; i < M; i++) {
    float acc = xv[i * N]; /* index order, f32 */
    for (int64_t j = 1; j < N; j++) {
      float v = xv[i * N + j];
      acc = kind == TL_RED_SUM ? acc + v : kind == TL_RED_MAX ? fmaxf(acc, v) : fminf(acc, v);
    }
    cr_assert_eq(((float *)a[1].data)[i], acc, "reduce kind %d M=%lld N=%lld row %lld", kind, (long long)M,
                 (long long)N, (long long)i);
  }
  free(a[0].data);
  free(a[1].data);
  kb_free(k);
}

Test(interp_ops, reduce_rows_ragged) {
  const int64_t ms[] = {1, 7, 8, 9, 23}, ns[] = {1, 15, 16, 5};
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 4; j++)
      for (int kind = 0; kind < 3; kind++) check_reduce_rows((tl_reduce_kind)kind, ms[i], ns[j], 900 + i * 16 + j * 4 + kind);
}

/* Y[M, N] = X[M, N] + row[N][None, :] * col[M][:, None], then Z[N, M] = trans(Y) */
static void check_broadcast_trans(int64_t M, int64_t N, uint64_t seed) {
  const int32_t BM = 8, BN = 4;
  kb *k = kb_new("bcast");
  const char *dx[2] = {"M", "N"}, *dr[1] = {"N"}, *dc[1] = {"M"}, *dz[2] = {"N", "M"};
  int32_t X = kb_tensor(k, "X", TL_F32, 2, dx), R = kb_tensor(k, "R", TL_F32, 1, dr);
  int32_t C = kb_tensor(k, "C", TL_F32, 1, dc), Y = kb_tensor(k, "Y", TL_F32, 2, dx);
  int32_t Z = kb_tensor(k, "Z", TL_F32, 2, dz);
  int32_t gv[2] = {kb_cdiv_dim(k, kb_gridr(k), X, 0, BM), kb_cdiv_dim(k, kb_gridr(k), X, 1, BN)};
  kb_yield(k, kb_gridr(k), gv, 2);
  tl_region *b = kb_body(k);
  int32_t m0 = tl_build_binary(k->f, b, TL_OP_mul, kb_pid(k, b, 0), kb_ci(k, b, BM), TL_NOLOC);
  int32_t n0 = tl_build_binary(k->f, b, TL_OP_mul, kb_pid(k, b, 1), kb_ci(k, b, BN), TL_NOLOC);
  int32_t idx[2] = {m0, n0}, lens[2] = {BM, BN}, lbn = BN, lbm = BM;
  int32_t x = kb_load(k, b, X, 2, idx, lens, tile2(TL_F32, BM, BN), -1);
  int32_t row = kb_load(k, b, R, 1, &n0, &lbn, tile1(TL_F32, BN), -1);
  int32_t col = kb_load(k, b, C, 1, &m0, &lbm, tile1(TL_F32, BM), -1);
  int32_t row2 = kb_op(k, b, TL_OP_expand_dims, &row, 1, tile2(TL_F32, 1, BN));
  kb_def(k, row2)->axis = 0;
  int32_t col2 = kb_op(k, b, TL_OP_expand_dims, &col, 1, tile2(TL_F32, BM, 1));
  kb_def(k, col2)->axis = 1;
  int32_t rowb = kb_op(k, b, TL_OP_broadcast, &row2, 1, tile2(TL_F32, BM, BN));
  int32_t colb = kb_op(k, b, TL_OP_broadcast, &col2, 1, tile2(TL_F32, BM, BN));
  int32_t prod = tl_build_binary(k->f, b, TL_OP_mul, rowb, colb, TL_NOLOC);
  int32_t y = tl_build_binary(k->f, b, TL_OP_add, x, prod, TL_NOLOC);
  kb_store(k, b, Y, 2, idx, lens, y);
  int32_t yt = kb_op(k, b, TL_OP_trans, &y, 1, tile2(TL_F32, BN, BM));
  int32_t tidx[2] = {n0, m0}, tlens[2] = {BN, BM};
  kb_store(k, b, Z, 2, tidx, tlens, yt);

  int64_t xs[2] = {M, N}, zs[2] = {N, M};
  tl_arg a[5] = {targ(TL_F32, 2, xs), targ(TL_F32, 1, &N), targ(TL_F32, 1, &M), targ(TL_F32, 2, xs),
                 targ(TL_F32, 2, zs)};
  rng g = {seed};
  for (int i = 0; i < 3; i++) tfill_random(&a[i], &g, -3, 3);
  tpoison(&a[3]);
  tpoison(&a[4]);
  run_ok(k, a, 5);
  const float *xv = a[0].data, *rv = a[1].data, *cv = a[2].data, *yv = a[3].data, *zv = a[4].data;
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      float want = xv[i * N + j] + rv[j] * cv[i];
      cr_assert_eq(yv[i * N + j], want, "Y[%lld,%lld] M=%lld N=%lld", (long long)i, (long long)j, (long long)M, (long long)N);
      cr_assert_eq(zv[j * M + i], want, "Z[%lld,%lld]", (long long)j, (long long)i);
    }
  for (int i = 0; i < 5; i++) free(a[i].data);
  kb_free(k);
}

Test(interp_ops, broadcast_expand_trans_ragged) {
  const int64_t ms[] = {1, 7, 9, 17}, ns[] = {1, 3, 5, 13};
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) check_broadcast_trans(ms[i], ns[j], 1000 + i * 4 + j);
}

/* ---- dot in a loop over K -------------------------------------------------------------- */
/* C[M, N] (f32) = A[M, K] @ B[K, N], tiles BM x BN, BK; A/B of dtype ab */
static kb *build_gemm(tl_dtype ab, int32_t BM, int32_t BN, int32_t BK) {
  kb *k = kb_new("gemm");
  const char *da[2] = {"M", "K"}, *db[2] = {"K", "N"}, *dc[2] = {"M", "N"};
  int32_t A = kb_tensor(k, "A", ab, 2, da), Bt = kb_tensor(k, "B", ab, 2, db), C = kb_tensor(k, "C", TL_F32, 2, dc);
  int32_t gv[2] = {kb_cdiv_dim(k, kb_gridr(k), A, 0, BM), kb_cdiv_dim(k, kb_gridr(k), Bt, 1, BN)};
  kb_yield(k, kb_gridr(k), gv, 2);
  tl_region *b = kb_body(k);
  int32_t m0 = tl_build_binary(k->f, b, TL_OP_mul, kb_pid(k, b, 0), kb_ci(k, b, BM), TL_NOLOC);
  int32_t n0 = tl_build_binary(k->f, b, TL_OP_mul, kb_pid(k, b, 1), kb_ci(k, b, BN), TL_NOLOC);
  int32_t acc0 = tl_build_const_f(k->f, b, tile2(TL_F32, BM, BN), 0.0, TL_NOLOC);
  int32_t kdim = kb_op(k, b, TL_OP_dim, &A, 1, tl_scalar_type(TL_I32));
  kb_def(k, kdim)->axis = 1;
  int32_t fopnd[4] = {kb_ci(k, b, 0), kdim, kb_ci(k, b, BK), acc0};
  tl_type acct = tile2(TL_F32, BM, BN);
  int32_t forop = tl_op_new(k->f, b, TL_OP_for, fopnd, 4, &acct, 1, TL_NOLOC);
  tl_op_add_regions(k->f, forop, 1);
  tl_region *lb = &tl_op_at(k->f, forop)->regions[0];
  int32_t k0 = tl_region_add_arg(k->f, lb, forop, tl_scalar_type(TL_I32));
  int32_t acc = tl_region_add_arg(k->f, lb, forop, acct);
  int32_t ia[2] = {m0, k0}, la[2] = {BM, BK}, ib[2] = {k0, n0}, lbb[2] = {BK, BN};
  int32_t av = kb_load(k, lb, A, 2, ia, la, tile2(ab, BM, BK), -1);
  int32_t bv = kb_load(k, lb, Bt, 2, ib, lbb, tile2(ab, BK, BN), -1);
  int32_t dopnd[3] = {av, bv, acc};
  int32_t d = kb_op(k, lb, TL_OP_dot, dopnd, 3, acct);
  kb_yield(k, lb, &d, 1);
  int32_t res = tl_op_result(k->f, forop, 0);
  int32_t ic[2] = {m0, n0}, lc[2] = {BM, BN};
  kb_store(k, b, C, 2, ic, lc, res);
  return k;
}

static void check_gemm(tl_dtype ab, int64_t M, int64_t N, int64_t K, uint64_t seed) {
  kb *k = build_gemm(ab, 16, 8, 8);
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
  tl_arg a[3] = {targ(ab, 2, sa), targ(ab, 2, sb), targ(TL_F32, 2, sc)};
  rng g = {seed};
  tfill_random(&a[0], &g, -1, 1);
  tfill_random(&a[1], &g, -1, 1);
  tpoison(&a[2]);
  run_ok(k, a, 3);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double s = 0, mag = 0;
      for (int64_t q = 0; q < K; q++) {
        double p = (double)tget_f(&a[0], i * K + q) * tget_f(&a[1], q * N + j);
        s += p;
        mag += fabs(p);
      }
      float got = ((float *)a[2].data)[i * N + j];
      /* f32 accumulation: error <= K * 2^-24 * sum|a*b| (loose bound) */
      double tol = (double)(K + 2) * 0x1p-24 * mag + 1e-30;
      cr_assert(fabs(got - s) <= tol, "%s gemm %lldx%lldx%lld C[%lld,%lld] = %g, want %g (tol %g)",
                tl_dtype_name(ab), (long long)M, (long long)N, (long long)K, (long long)i, (long long)j,
                (double)got, s, tol);
    }
  for (int i = 0; i < 3; i++) free(a[i].data);
  kb_free(k);
}

Test(interp_ops, dot_gemm_ragged) {
  const int64_t ms[] = {1, 15, 17}, ns[] = {1, 7, 9}, ks[] = {1, 7, 8, 29};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      for (int q = 0; q < 4; q++) {
        check_gemm(TL_F32, ms[i], ns[j], ks[q], 1100 + i * 16 + j * 4 + q);
        check_gemm(TL_BF16, ms[i], ns[j], ks[q], 1200 + i * 16 + j * 4 + q);
      }
  check_gemm(TL_F8E4M3, 33, 19, 41, 1301);
  check_gemm(TL_F16, 31, 23, 17, 1302);
}

/* One tile, one k-step: the result is exactly acc + (f32 sum in k order). */
Test(interp_ops, dot_exact_order) {
  kb *k = build_gemm(TL_F32, 8, 8, 16);
  int64_t M = 8, N = 8, K = 16, sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
  tl_arg a[3] = {targ(TL_F32, 2, sa), targ(TL_F32, 2, sb), targ(TL_F32, 2, sc)};
  rng g = {1401};
  for (int64_t i = 0; i < M * K; i++) tset_f(&a[0], i, ldexp(rng_uniform(&g, -1, 1), (int)(rng_u64(&g) % 30)));
  for (int64_t i = 0; i < K * N; i++) tset_f(&a[1], i, rng_uniform(&g, -1, 1));
  run_ok(k, a, 3);
  const float *A = a[0].data, *B = a[1].data;
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      float s = 0;
      for (int64_t q = 0; q < K; q++) {
        float p = A[i * K + q] * B[q * N + j];
        s = s + p;
      }
      float want = 0.0f + s;
      cr_assert_eq(((float *)a[2].data)[i * N + j], want, "C[%lld,%lld]", (long long)i, (long long)j);
    }
  for (int i = 0; i < 3; i++) free(a[i].data);
  kb_free(k);
}

/* ---- loads through strides --------------------------------------------------------------- */
Test(interp_ops, load_strided_and_zero_stride) {
  /* Y = X + 1 over a transposed view (strides swapped) and a broadcast (stride 0) view */
  const int32_t BM = 4, BN = 8;
  kb *k = kb_new("strided");
  const char *d2[2] = {"M", "N"};
  int32_t X = kb_tensor(k, "X", TL_F32, 2, d2), Y = kb_tensor(k, "Y", TL_F32, 2, d2);
  int32_t gv[2] = {kb_cdiv_dim(k, kb_gridr(k), X, 0, BM), kb_cdiv_dim(k, kb_gridr(k), X, 1, BN)};
  kb_yield(k, kb_gridr(k), gv, 2);
  tl_region *b = kb_body(k);
  int32_t m0 = tl_build_binary(k->f, b, TL_OP_mul, kb_pid(k, b, 0), kb_ci(k, b, BM), TL_NOLOC);
  int32_t n0 = tl_build_binary(k->f, b, TL_OP_mul, kb_pid(k, b, 1), kb_ci(k, b, BN), TL_NOLOC);
  int32_t idx[2] = {m0, n0}, lens[2] = {BM, BN};
  int32_t x = kb_load(k, b, X, 2, idx, lens, tile2(TL_F32, BM, BN), -1);
  int32_t one = tl_build_const_f(k->f, b, tl_scalar_type(TL_F32), 1.0, TL_NOLOC);
  int32_t y = tl_build_binary(k->f, b, TL_OP_add, x, one, TL_NOLOC);
  kb_store(k, b, Y, 2, idx, lens, y);
  rng g = {1501};
  for (int variant = 0; variant < 2; variant++) {
    int64_t M = 11, N = 13, base_shape[2] = {N, M}, ys[2] = {M, N};
    tl_arg a[2] = {targ(TL_F32, 2, base_shape), targ(TL_F32, 2, ys)};
    tfill_random(&a[0], &g, -2, 2);
    tpoison(&a[1]);
    /* X viewed as [M, N]: variant 0 the transpose of the stored [N, M]; variant 1 row 3 repeated */
    a[0].shape[0] = M;
    a[0].shape[1] = N;
    if (variant == 0) { a[0].strides[0] = 1; a[0].strides[1] = M; }
    else { a[0].strides[0] = 0; a[0].strides[1] = 1; }
    run_ok(k, a, 2);
    const float *xv = a[0].data, *yv = a[1].data;
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        float src = variant == 0 ? xv[j * M + i] : xv[j];
        cr_assert_eq(yv[i * N + j], src + 1.0f, "variant %d [%lld,%lld]", variant, (long long)i, (long long)j);
      }
    free(a[0].data);
    free(a[1].data);
  }
  kb_free(k);
}

/* Indexed (dropped) dimension and negative start: Y[r, :] = X[r, c0 - 3 : c0 - 3 + B] */
Test(interp_ops, load_indexed_dim_negative_start_other) {
  const int32_t B = 8;
  kb *k = kb_new("shifted");
  const char *d2[2] = {"R", "C"};
  int32_t X = kb_tensor(k, "X", TL_F32, 2, d2), Y = kb_tensor(k, "Y", TL_F32, 2, d2);
  int32_t gv[2] = {kb_cdiv_dim(k, kb_gridr(k), X, 0, 1), kb_cdiv_dim(k, kb_gridr(k), X, 1, B)};
  kb_yield(k, kb_gridr(k), gv, 2);
  tl_region *b = kb_body(k);
  int32_t r = kb_pid(k, b, 0);
  int32_t c0 = tl_build_binary(k->f, b, TL_OP_mul, kb_pid(k, b, 1), kb_ci(k, b, B), TL_NOLOC);
  int32_t cs = tl_build_binary(k->f, b, TL_OP_sub, c0, kb_ci(k, b, 3), TL_NOLOC);
  int32_t other = tl_build_const_f(k->f, b, tl_scalar_type(TL_F32), -7.5, TL_NOLOC);
  int32_t li[2] = {r, cs}, ll[2] = {0, B};
  int32_t x = kb_load(k, b, X, 2, li, ll, tile1(TL_F32, B), other);
  int32_t si[2] = {r, c0};
  kb_store(k, b, Y, 2, si, ll, x);
  int64_t s[2] = {5, 19};
  tl_arg a[2] = {targ(TL_F32, 2, s), targ(TL_F32, 2, s)};
  rng g = {1601};
  tfill_random(&a[0], &g, -1, 1);
  tpoison(&a[1]);
  run_ok(k, a, 2);
  for (int64_t i = 0; i < s[0]; i++)
    for (int64_t j = 0; j < s[1]; j++) {
      float want = j - 3 < 0 ? -7.5f : ((float *)a[0].data)[i * s[1] + j - 3];
      cr_assert_eq(((float *)a[1].data)[i * s[1] + j], want, "[%lld,%lld]", (long long)i, (long long)j);
    }
  free(a[0].data);
  free(a[1].data);
  kb_free(k);
}

/* Start indices at the edges of i64: nothing overflows, outside reads `other`
 * and outside stores are dropped.  Y[0 : B] = X[s : s + B]; Z[s : s + B] = X[0 : B] */
Test(interp_ops, extreme_start_indices) {
  const int32_t B = 8;
  kb *k = kb_new("edges");
  const char *dn[1] = {"N"}, *db[1] = {"8"};
  int32_t X = kb_tensor(k, "X", TL_F32, 1, dn), Y = kb_tensor(k, "Y", TL_F32, 1, db);
  int32_t Z = kb_tensor(k, "Z", TL_F32, 1, dn), s = kb_scalar(k, "s", TL_I64);
  kb_grid_consts(k, 1, (const int64_t[]){1});
  tl_region *b = kb_body(k);
  int32_t len = B;
  int32_t zero = kb_ci(k, b, 0);
  int32_t other = tl_build_const_f(k->f, b, tl_scalar_type(TL_F32), 42.0, TL_NOLOC);
  int32_t x = kb_load(k, b, X, 1, &s, &len, tile1(TL_F32, B), other);
  kb_store(k, b, Y, 1, &zero, &len, x);
  int32_t x0 = kb_load(k, b, X, 1, &zero, &len, tile1(TL_F32, B), -1);
  kb_store(k, b, Z, 1, &s, &len, x0);
  const int64_t N = 11;
  const int64_t starts[] = {INT64_MIN, INT64_MIN + 3, -9, -8, -7, -1, 0, 3, N - 1, N, INT64_MAX - 7, INT64_MAX - 3, INT64_MAX};
  rng g = {1701};
  for (size_t si = 0; si < sizeof starts / sizeof *starts; si++) {
    int64_t n8 = B;
    tl_arg a[4] = {targ(TL_F32, 1, &N), targ(TL_F32, 1, &n8), targ(TL_F32, 1, &N), sarg_i(starts[si])};
    tfill_random(&a[0], &g, -1, 1);
    tpoison(&a[1]);
    tpoison(&a[2]);
    run_ok(k, a, 4);
    const float *xv = a[0].data, *yv = a[1].data, *zv = a[2].data;
    for (int64_t i = 0; i < B; i++) {
      int64_t src = starts[si] > INT64_MAX - i ? -1 : starts[si] + i; /* -1: beyond i64, outside */
      float want = src >= 0 && src < N ? xv[src] : 42.0f;
      cr_assert_eq(yv[i], want, "start %lld, element %lld", (long long)starts[si], (long long)i);
    }
    for (int64_t j = 0; j < N; j++) {
      /* Z[j] was written iff j = start + i for some i in [0, B) */
      bool written = starts[si] <= j && starts[si] > j - B;
      if (written) cr_assert_eq(zv[j], xv[j - starts[si]], "start %lld, Z[%lld]", (long long)starts[si], (long long)j);
      else cr_assert(isnan(zv[j]), "start %lld: Z[%lld] written", (long long)starts[si], (long long)j);
    }
    for (int i = 0; i < 3; i++) free(a[i].data);
  }
  kb_free(k);
}
