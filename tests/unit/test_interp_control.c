/* test_interp_control.c: for/if with carried values, argument checks, grid
 * evaluation, limits and speed of the interpreter. */
#include <time.h>

#include "test_interp_helpers.h"

/* kernel(X[N], Y[N], n: i32, lo: i32, step: i32) grid(cdiv(N, B)):
 *   x = load(X[o:+B]); t = zeros; c = 0
 *   for i in range(lo, n, step) carried (t, c) {
 *     t = (i % 2 != 0) ? t * x + 1 : t - x     // an if yielding a tile
 *     c = c + i
 *   }
 *   store(Y[o:+B], t + cast<f32>(c)) */
static kb *build_loop(int32_t B) {
  kb *k = kb_new("loop");
  const char *dn[1] = {"N"};
  int32_t X = kb_tensor(k, "X", TL_F32, 1, dn), Y = kb_tensor(k, "Y", TL_F32, 1, dn);
  int32_t n = kb_scalar(k, "n", TL_I32), lo = kb_scalar(k, "lo", TL_I32), step = kb_scalar(k, "step", TL_I32);
  int32_t g = kb_cdiv_dim(k, kb_gridr(k), X, 0, B);
  kb_yield(k, kb_gridr(k), &g, 1);
  tl_region *b = kb_body(k);
  int32_t off = tl_build_binary(k->f, b, TL_OP_mul, kb_pid(k, b, 0), kb_ci(k, b, B), TL_NOLOC);
  int32_t len = B;
  tl_type tt = tile1(TL_F32, B), it = tl_scalar_type(TL_I32);
  int32_t x = kb_load(k, b, X, 1, &off, &len, tt, -1);
  int32_t t0 = tl_build_const_f(k->f, b, tt, 0.0, TL_NOLOC);
  int32_t c0 = kb_ci(k, b, 0);
  int32_t fopnd[5] = {lo, n, step, t0, c0};
  tl_type rts[2] = {tt, it};
  int32_t forop = tl_op_new(k->f, b, TL_OP_for, fopnd, 5, rts, 2, TL_NOLOC);
  tl_op_add_regions(k->f, forop, 1);
  tl_region *lb = &tl_op_at(k->f, forop)->regions[0];
  int32_t iv = tl_region_add_arg(k->f, lb, forop, it);
  int32_t t = tl_region_add_arg(k->f, lb, forop, tt);
  int32_t c = tl_region_add_arg(k->f, lb, forop, it);
  int32_t par = tl_build_binary(k->f, lb, TL_OP_rem, iv, kb_ci(k, lb, 2), TL_NOLOC);
  int32_t odd = tl_build_binary(k->f, lb, TL_OP_cmp, par, kb_ci(k, lb, 0), TL_NOLOC);
  kb_def(k, odd)->kind = TL_CMP_NE;
  int32_t ifop = tl_op_new(k->f, lb, TL_OP_if, &odd, 1, &tt, 1, TL_NOLOC);
  tl_op_add_regions(k->f, ifop, 2);
  tl_region *then_r = &tl_op_at(k->f, ifop)->regions[0], *else_r = &tl_op_at(k->f, ifop)->regions[1];
  int32_t tx = tl_build_binary(k->f, then_r, TL_OP_mul, t, x, TL_NOLOC);
  int32_t one = tl_build_const_f(k->f, then_r, tl_scalar_type(TL_F32), 1.0, TL_NOLOC);
  int32_t t1 = tl_build_binary(k->f, then_r, TL_OP_add, tx, one, TL_NOLOC);
  kb_yield(k, then_r, &t1, 1);
  int32_t t2 = tl_build_binary(k->f, else_r, TL_OP_sub, t, x, TL_NOLOC);
  kb_yield(k, else_r, &t2, 1);
  int32_t c1 = tl_build_binary(k->f, lb, TL_OP_add, c, iv, TL_NOLOC);
  int32_t ys[2] = {tl_op_result(k->f, ifop, 0), c1};
  kb_yield(k, lb, ys, 2);
  int32_t cf = kb_op(k, b, TL_OP_cast, &(int32_t){tl_op_result(k->f, forop, 1)}, 1, tl_scalar_type(TL_F32));
  int32_t out = tl_build_binary(k->f, b, TL_OP_add, tl_op_result(k->f, forop, 0), cf, TL_NOLOC);
  kb_store(k, b, Y, 1, &off, &len, out);
  return k;
}

Test(interp_control, for_if_carried_values) {
  const int32_t B = 8;
  kb *k = build_loop(B);
  const int64_t sizes[] = {1, 7, 9, 23};
  const int64_t loops[][3] = {{0, 0, 1}, {0, 1, 1}, {0, 6, 1}, {3, 20, 4}, {5, 2, 1}, {-3, 4, 2}};
  rng g = {2001};
  for (size_t si = 0; si < 4; si++)
    for (size_t li = 0; li < 6; li++) {
      int64_t N = sizes[si];
      tl_arg a[5] = {targ(TL_F32, 1, &N), targ(TL_F32, 1, &N), sarg_i(loops[li][1]), sarg_i(loops[li][0]),
                     sarg_i(loops[li][2])};
      tfill_random(&a[0], &g, -2, 2);
      tpoison(&a[1]);
      run_ok(k, a, 5);
      for (int64_t e = 0; e < N; e++) {
        float x = ((float *)a[0].data)[e], t = 0;
        int32_t c = 0;
        for (int64_t i = loops[li][0]; i < loops[li][1]; i += loops[li][2]) {
          t = (i % 2 != 0) ? t * x + 1.0f : t - x;
          c += (int32_t)i;
        }
        float want = t + (float)c;
        cr_assert_eq(((float *)a[1].data)[e], want, "N=%lld loop %zu element %lld", (long long)N, li, (long long)e);
      }
      free(a[0].data);
      free(a[1].data);
    }
  kb_free(k);
}

Test(interp_control, non_positive_step_is_an_error) {
  kb *k = build_loop(8);
  int64_t N = 5;
  tl_arg a[5] = {targ(TL_F32, 1, &N), targ(TL_F32, 1, &N), sarg_i(10), sarg_i(0), sarg_i(0)};
  char err[256] = "";
  cr_assert_not(tl_interpret_func(k->f, a, 5, err, sizeof err));
  cr_assert(strstr(err, "step"), "message: %s", err);
  free(a[0].data);
  free(a[1].data);
  kb_free(k);
}

/* ---- argument checks ------------------------------------------------------------------- */
/* kernel(A: f32[M, 16], B: bf16[16, N], C: f32[M, N], s: f32) */
static kb *build_sig(void) {
  kb *k = kb_new("sig");
  const char *da[2] = {"M", "16"}, *db[2] = {"16", "N"}, *dc[2] = {"M", "N"};
  kb_tensor(k, "A", TL_F32, 2, da);
  kb_tensor(k, "B", TL_BF16, 2, db);
  kb_tensor(k, "C", TL_F32, 2, dc);
  kb_scalar(k, "s", TL_F32);
  kb_grid_consts(k, 1, (const int64_t[]){1});
  return k;
}

static void expect_reject(kb *k, tl_arg *a, int n, const char *const *needles) {
  char err[512] = "";
  cr_assert_not(tl_check_args(k->f, a, n, err, sizeof err), "accepted bad arguments");
  cr_assert_null(strchr(err, '\n'), "message is not one line: %s", err);
  for (int i = 0; needles[i]; i++) cr_assert(strstr(err, needles[i]), "'%s' not in: %s", needles[i], err);
  char err2[512] = "";
  cr_assert_not(tl_interpret_func(k->f, a, n, err2, sizeof err2));
  cr_assert_str_eq(err, err2);
}

Test(interp_control, check_args_messages) {
  kb *k = build_sig();
  int64_t sa[2] = {5, 16}, sb[2] = {16, 7}, sc[2] = {5, 7};
  tl_arg a[4] = {targ(TL_F32, 2, sa), targ(TL_BF16, 2, sb), targ(TL_F32, 2, sc), sarg_f(1.5)};
  char err[256];
  cr_assert(tl_check_args(k->f, a, 4, err, sizeof err), "%s", err);

  expect_reject(k, a, 3, (const char *[]){"4 arguments", "3", NULL});
  a[1].dtype = TL_F16;
  expect_reject(k, a, 4, (const char *[]){"B", "f16", "bf16", NULL});
  a[1].dtype = TL_BF16;
  a[0].rank = 3;
  expect_reject(k, a, 4, (const char *[]){"A", "rank 3", NULL});
  a[0].rank = 2;
  a[0].shape[1] = 17;
  expect_reject(k, a, 4, (const char *[]){"A", "dimension 1", "17", "16", NULL});
  a[0].shape[1] = 16;
  a[2].shape[1] = 8;
  expect_reject(k, a, 4, (const char *[]){"C", "dimension 1", "(N)", "8", "7", "B", NULL});
  a[2].shape[1] = 7;
  a[2].shape[0] = 4;
  expect_reject(k, a, 4, (const char *[]){"C", "dimension 0", "(M)", "A", NULL});
  a[2].shape[0] = 5;
  tl_arg keep = a[3];
  a[3] = a[0];
  expect_reject(k, a, 4, (const char *[]){"s", "scalar", NULL});
  a[3] = keep;
  a[2].strides[0] = INT64_MAX / 2;
  expect_reject(k, a, 4, (const char *[]){"C", "overflow", NULL});
  a[2].strides[0] = 7;
  a[0].shape[0] = (int64_t)1 << 32;
  expect_reject(k, a, 4, (const char *[]){"A", "dimension 0", NULL});
  a[0].shape[0] = 5;
  cr_assert(tl_check_args(k->f, a, 4, err, sizeof err), "%s", err);
  for (int i = 0; i < 3; i++) free(a[i].data);
  kb_free(k);
}

/* ---- grid ---------------------------------------------------------------------------------- */
Test(interp_control, eval_grid_from_sizes) {
  kb *k = kb_new("grid");
  const char *d[2] = {"M", "N"};
  int32_t X = kb_tensor(k, "X", TL_F32, 2, d);
  int32_t gv[2] = {kb_cdiv_dim(k, kb_gridr(k), X, 1, 16), kb_cdiv_dim(k, kb_gridr(k), X, 0, 4)};
  kb_yield(k, kb_gridr(k), gv, 2);
  rng g = {2101};
  for (int i = 0; i < 50; i++) {
    int64_t s[2] = {(int64_t)(rng_u64(&g) % 1000), (int64_t)(rng_u64(&g) % 1000)};
    tl_arg a = targ(TL_F32, 2, s);
    int64_t grid[3];
    char err[256];
    cr_assert(tl_eval_grid(k->f, &a, 1, grid, err, sizeof err), "%s", err);
    cr_assert_eq(grid[0], (s[1] + 15) / 16);
    cr_assert_eq(grid[1], (s[0] + 3) / 4);
    cr_assert_eq(grid[2], 1);
    free(a.data);
  }
  kb_free(k);
}

Test(interp_control, grid_limits) {
  const int64_t too_big[3] = {65536, 65536, 2}, negative[2] = {4, -1}, fine[3] = {65536, 32768, 1};
  const int64_t *grids[3] = {too_big, negative, fine};
  const int ns[3] = {3, 2, 3};
  for (int i = 0; i < 3; i++) {
    kb *k = kb_new("g");
    kb_grid_consts(k, ns[i], grids[i]);
    int64_t grid[3];
    char err[256] = "";
    bool ok = tl_eval_grid(k->f, NULL, 0, grid, err, sizeof err);
    if (i == 2) {
      cr_assert(ok, "%s", err);
      cr_assert_eq(grid[0] * grid[1] * grid[2], INT64_C(1) << 31);
    } else {
      cr_assert_not(ok);
      cr_assert(strstr(err, i == 0 ? "2^31" : "negative"), "message: %s", err);
      cr_assert_not(tl_interpret_func(k->f, NULL, 0, err, sizeof err));
    }
    kb_free(k);
  }
}

Test(interp_control, tile_limit) {
  kb *k = kb_new("huge");
  kb_grid_consts(k, 1, (const int64_t[]){1});
  tl_build_const_f(k->f, kb_body(k), tile2(TL_F32, 2048, 1024), 1.0, TL_NOLOC);
  char err[256] = "";
  cr_assert_not(tl_interpret_func(k->f, NULL, 0, err, sizeof err));
  cr_assert(strstr(err, "limit"), "message: %s", err);
  kb_free(k);
}

/* program_id / num_programs over a 3-D grid: every program writes its id. */
Test(interp_control, every_program_runs_once) {
  kb *k = kb_new("ids");
  const char *d[1] = {"N"};
  int32_t Y = kb_tensor(k, "Y", TL_I32, 1, d);
  kb_grid_consts(k, 3, (const int64_t[]){3, 5, 2});
  tl_region *b = kb_body(k);
  int32_t nx = kb_op(k, b, TL_OP_num_programs, NULL, 0, tl_scalar_type(TL_I32));
  kb_def(k, nx)->axis = 0;
  int32_t ny = kb_op(k, b, TL_OP_num_programs, NULL, 0, tl_scalar_type(TL_I32));
  kb_def(k, ny)->axis = 1;
  int32_t z = kb_pid(k, b, 2), y = kb_pid(k, b, 1), x = kb_pid(k, b, 0);
  int32_t lin = tl_build_binary(k->f, b, TL_OP_add,
                                tl_build_binary(k->f, b, TL_OP_mul,
                                                tl_build_binary(k->f, b, TL_OP_add,
                                                                tl_build_binary(k->f, b, TL_OP_mul, z, ny, TL_NOLOC), y,
                                                                TL_NOLOC),
                                                nx, TL_NOLOC),
                                x, TL_NOLOC);
  /* Y[lin] = Y[lin] + lin + 1 (a second visit would show) */
  int32_t len = 1;
  int32_t old = kb_load(k, b, Y, 1, &lin, &len, tile1(TL_I32, 1), -1);
  int32_t inc = tl_build_binary(k->f, b, TL_OP_add, lin, kb_ci(k, b, 1), TL_NOLOC);
  int32_t nv = tl_build_binary(k->f, b, TL_OP_add, old, inc, TL_NOLOC);
  kb_store(k, b, Y, 1, &lin, &len, nv);
  int64_t n = 30;
  tl_arg a = targ(TL_I32, 1, &n);
  run_ok(k, &a, 1);
  for (int i = 0; i < 30; i++) cr_assert_eq(((int32_t *)a.data)[i], i + 1, "program %d", i);
  free(a.data);
  kb_free(k);
}

/* ---- speed ------------------------------------------------------------------------------------ */
Test(interp_control, dot_64x64x64_over_200_programs) {
  kb *k = kb_new("dot64");
  const char *d[2] = {"64", "64"}, *dc[2] = {"P", "64"};
  int32_t A = kb_tensor(k, "A", TL_BF16, 2, d), B = kb_tensor(k, "B", TL_BF16, 2, d);
  int32_t C = kb_tensor(k, "C", TL_F32, 2, dc);
  int32_t gv = kb_cdiv_dim(k, kb_gridr(k), C, 0, 64);
  kb_yield(k, kb_gridr(k), &gv, 1);
  tl_region *b = kb_body(k);
  int32_t zero = kb_ci(k, b, 0);
  int32_t idx[2] = {zero, zero}, lens[2] = {64, 64};
  int32_t av = kb_load(k, b, A, 2, idx, lens, tile2(TL_BF16, 64, 64), -1);
  int32_t bv = kb_load(k, b, B, 2, idx, lens, tile2(TL_BF16, 64, 64), -1);
  int32_t acc = tl_build_const_f(k->f, b, tile2(TL_F32, 64, 64), 0.0, TL_NOLOC);
  int32_t dv = kb_op(k, b, TL_OP_dot, (int32_t[]){av, bv, acc}, 3, tile2(TL_F32, 64, 64));
  int32_t m0 = tl_build_binary(k->f, b, TL_OP_mul, kb_pid(k, b, 0), kb_ci(k, b, 64), TL_NOLOC);
  int32_t cidx[2] = {m0, zero};
  kb_store(k, b, C, 2, cidx, lens, dv);
  const int programs = 200;
  int64_t s[2] = {64, 64}, sc[2] = {64 * programs, 64};
  tl_arg a[3] = {targ(TL_BF16, 2, s), targ(TL_BF16, 2, s), targ(TL_F32, 2, sc)};
  rng g = {2201};
  tfill_random(&a[0], &g, -1, 1);
  tfill_random(&a[1], &g, -1, 1);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  run_ok(k, a, 3);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  cr_log_info("64x64x64 bf16 dot program: %.3f ms", ms / programs);
  /* Speed is measured in bench/, not asserted here (sanitizer builds are slow). */
  /* and the last program's output is the product */
  const float *cv = (const float *)a[2].data + (int64_t)(programs - 1) * 64 * 64;
  double s01 = 0;
  for (int q = 0; q < 64; q++) s01 += (double)tget_f(&a[0], 0 * 64 + q) * tget_f(&a[1], q * 64 + 1);
  cr_assert(fabs(cv[1] - s01) < 1e-4, "%g vs %g", (double)cv[1], s01);
  for (int i = 0; i < 3; i++) free(a[i].data);
  kb_free(k);
}
