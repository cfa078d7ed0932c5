/* test_lang_memory.c: scalar loads, gathers, scatters, atomics and random
 * numbers of the language, written in .tile source, compiled by the
 * front-end (and, in a second pass, the default pass pipeline) and run by the
 * interpreter on random data at ragged sizes, against plain C references;
 * Philox-4x32-10 against the Random123 known-answer vectors. */
#include <stdio.h>

#include "frontend.h"
#include "philox.h"
#include "test_interp_helpers.h"

typedef struct src_mod {
  tl_ctx ctx;
  tl_module *m;
} src_mod;

static src_mod *compile_src(const char *text, bool passes) {
  src_mod *s = calloc(1, sizeof *s);
  tl_ctx_init(&s->ctx);
  int32_t file = tl_ctx_add_source(&s->ctx, "test.tile", text, strlen(text));
  s->m = tl_frontend(&s->ctx, file, NULL, NULL, 0, NULL);
  cr_assert_not_null(s->m, "does not compile:\n%s", tl_ctx_render_diags(&s->ctx));
  cr_assert(tl_verify_module(s->m), "verifier:\n%s", tl_ctx_render_diags(&s->ctx));
  if (passes) {
    int n = 0;
    const tl_pass *const *p = tl_pipeline_default(&n);
    tl_run_hooks h = {0};
    h.verify_each = true;
    cr_assert(tl_run_passes(s->m, p, n, NULL, &h), "passes:\n%s", tl_ctx_render_diags(&s->ctx));
  }
  return s;
}

static void src_free(src_mod *s) {
  tl_ctx_free(&s->ctx);
  free(s);
}

static void interp(src_mod *s, tl_arg *a, int n) {
  char err[512] = "";
  cr_assert(tl_interpret_func(s->m->funcs.data[0], a, n, err, sizeof err), "interpreter: %s", err);
}

static int32_t iget(const tl_arg *a, int64_t i) { return ((const int32_t *)a->data)[i]; }
static void iset(tl_arg *a, int64_t i, int32_t v) { ((int32_t *)a->data)[i] = v; }

/* ---- Philox ------------------------------------------------------------------------------ */
Test(philox, random123_known_answers) {
  static const uint32_t kat[3][10] = {
      {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6,
       0x6d5451fd},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420,
       0x24126ea1}};
  for (int t = 0; t < 3; t++) {
    uint32_t out[4];
    tl_philox4x32_10(kat[t], kat[t] + 4, out);
    for (int i = 0; i < 4; i++) cr_assert_eq(out[i], kat[t][6 + i], "vector %d word %d: %08x", t, i, out[i]);
  }
}

Test(philox, log_and_cos_polynomials_against_libm) {
  double worst_log = 0, worst_cos = 0;
  for (uint32_t i = 0; i < (1u << 24); i += 97) {
    float u = (float)(i + 1) * 0x1p-24f; /* (0, 1], as randn draws it */
    double e = fabs((double)tl_rand_log(u) - log((double)u));
    if (e > worst_log) worst_log = e;
    float v = (float)i * 0x1p-24f;
    e = fabs((double)tl_rand_cos2pi(v) - cos(2 * M_PI * (double)v));
    if (e > worst_cos) worst_cos = e;
  }
  cr_log_info("log abs error %.3g, cos abs error %.3g", worst_log, worst_cos);
  cr_assert(worst_log < 4e-6, "log error %g", worst_log); /* |log u| <= 16.7: a few f32 ulp */
  cr_assert(worst_cos < 4e-7, "cos error %g", worst_cos);
}

Test(philox, uniform_and_normal_moments) {
  uint32_t key[2] = {12345, 0};
  double s1 = 0, s2 = 0, n1 = 0, n2 = 0, n4 = 0;
  const int N = 1 << 18;
  for (int i = 0; i < N; i++) {
    uint32_t c[4] = {(uint32_t)i, 0, 0, 0}, o[4];
    tl_philox4x32_10(c, key, o);
    float u = tl_rand_uniform(o[0]), z = tl_rand_normal(o[0], o[1]);
    cr_assert(u >= 0 && u < 1);
    s1 += u;
    s2 += (double)u * u;
    n1 += z;
    n2 += (double)z * z;
    n4 += (double)z * z * z * z;
  }
  s1 /= N, s2 /= N, n1 /= N, n2 /= N, n4 /= N;
  /* 6-sigma bounds of the sample moments */
  cr_assert(fabs(s1 - 0.5) < 6 * sqrt(1.0 / 12 / N), "uniform mean %g", s1);
  cr_assert(fabs(s2 - 1.0 / 3) < 6 * sqrt(4.0 / 45 / N), "uniform E[u^2] %g", s2);
  cr_assert(fabs(n1) < 6 / sqrt(N), "normal mean %g", n1);
  cr_assert(fabs(n2 - 1) < 6 * sqrt(2.0 / N), "normal variance %g", n2);
  cr_assert(fabs(n4 - 3) < 6 * sqrt(96.0 / N), "normal kurtosis %g", n4);
}

/* ---- rand in a kernel: the counter is the offset, the key the seed's halves ------------------- */
static const char *rand_src =
    "kernel k(U: tensor<f32>[N], G: tensor<f32>[N], I: tensor<i32>[N], seed: i64)\n"
    "    tiles(B = 64) grid(cdiv(N, B))\n"
    "{\n"
    "    n0 = program_id(0) * B;\n"
    "    o = n0 + iota<i32>[B];\n"
    "    store(U[n0 : n0 + B], rand(seed, o));\n"
    "    store(G[n0 : n0 + B], randn(seed, o));\n"
    "    store(I[n0 : n0 + B], randint(seed, o));\n"
    "}\n";

static void check_rand(bool passes) {
  src_mod *s = compile_src(rand_src, passes);
  const int64_t seeds[3] = {0, 0x1234567887654321LL, -1};
  for (int si = 0; si < 3; si++)
    for (int64_t n = 1; n < 300; n += 97) {
      tl_arg a[4] = {targ(TL_F32, 1, &n), targ(TL_F32, 1, &n), targ(TL_I32, 1, &n), sarg_i(seeds[si])};
      for (int i = 0; i < 3; i++) tpoison(&a[i]);
      interp(s, a, 4);
      uint32_t key[2] = {(uint32_t)(uint64_t)seeds[si], (uint32_t)((uint64_t)seeds[si] >> 32)};
      for (int64_t i = 0; i < n; i++) {
        /* docs/language.md 8.5: rand / randint word i % 4 of block (i / 4, 0, 0, 0); randn words
         * 2 (i % 2), 2 (i % 2) + 1 of block (i / 2, 1, 0, 0) */
        uint32_t c[4] = {(uint32_t)i / 4, 0, 0, 0}, o[4], cn[4] = {(uint32_t)i / 2, 1, 0, 0}, on[4];
        tl_philox4x32_10(c, key, o);
        tl_philox4x32_10(cn, key, on);
        uint32_t w = o[i % 4];
        cr_assert_eq((uint32_t)iget(&a[2], i), w);
        float u = tget_f(&a[0], i), z = tget_f(&a[1], i);
        cr_assert(u == (float)(w >> 8) * 0x1p-24f, "uniform %lld", (long long)i);
        cr_assert(z == tl_rand_normal(on[2 * (i % 2)], on[2 * (i % 2) + 1]), "normal %lld", (long long)i);
      }
      if (seeds[si] == 0) cr_assert_eq((uint32_t)iget(&a[2], 0), 0x6627e8d5u); /* KAT: ctr 0, key 0 */
      for (int i = 0; i < 3; i++) free(a[i].data);
    }
  src_free(s);
}
Test(lang_rand, matches_philox_reference) { check_rand(false); }
Test(lang_rand, matches_philox_reference_after_passes) { check_rand(true); }

/* ---- scalar loads ------------------------------------------------------------------------------ */
Test(lang_scalar, load_of_every_index_view) {
  src_mod *s = compile_src("kernel k(T: tensor<f32>[B, P], J: tensor<i32>[B], Y: tensor<f32>[B])\n"
                           "    grid(B)\n"
                           "{\n"
                           "    b = program_id(0);\n"
                           "    j = load(J[b]);\n"
                           "    store(Y[b], load(T[b, j], other = -2.5) * 2.0);\n"
                           "}\n",
                           false);
  rng g = {7};
  for (int64_t B = 1; B < 40; B += 13) {
    int64_t P = B + 3, st[2] = {B, P};
    tl_arg a[3] = {targ(TL_F32, 2, st), targ(TL_I32, 1, &B), targ(TL_F32, 1, &B)};
    tfill_random(&a[0], &g, -1, 1);
    for (int64_t b = 0; b < B; b++) iset(&a[1], b, (int32_t)(rng_u64(&g) % (uint64_t)(P + 4)) - 2); /* some outside */
    tpoison(&a[2]);
    interp(s, a, 3);
    for (int64_t b = 0; b < B; b++) {
      int32_t j = iget(&a[1], b);
      float want = (j >= 0 && j < P ? tget_f(&a[0], b * P + j) : -2.5f) * 2.0f;
      cr_assert(tget_f(&a[2], b) == want, "b %lld j %d: %g, want %g", (long long)b, j, tget_f(&a[2], b), want);
    }
    for (int i = 0; i < 3; i++) free(a[i].data);
  }
  src_free(s);
}

/* ---- gathers and scatters ------------------------------------------------------------------- */
static const char *gather_src =
    "kernel k(T: tensor<bf16>[V, D], I: tensor<i32>[M], Y: tensor<bf16>[M, D], Z: tensor<bf16>[R, D])\n"
    "    tiles(BM = 8, BD = 32) grid(cdiv(M, BM), cdiv(D, BD))\n"
    "{\n"
    "    m0 = program_id(0) * BM;\n"
    "    d0 = program_id(1) * BD;\n"
    "    idx = load(I[m0 : m0 + BM], other = -1);\n"
    "    rows = load(T[idx, d0 : d0 + BD], other = 3.0);\n"
    "    store(Y[m0 : m0 + BM, d0 : d0 + BD], rows);\n"
    "    store(Z[idx, d0 : d0 + BD], load(Y[m0 : m0 + BM, d0 : d0 + BD]));\n"
    "}\n";

static void check_gather(bool passes) {
  src_mod *s = compile_src(gather_src, passes);
  rng g = {11};
  const int64_t Ms[4] = {1, 7, 8, 45}, Ds[3] = {1, 31, 70};
  for (int mi = 0; mi < 4; mi++)
    for (int di = 0; di < 3; di++) {
      int64_t M = Ms[mi], D = Ds[di], V = M + 5, R = 2 * M + 3;
      int64_t st[2] = {V, D}, sy[2] = {M, D}, sz[2] = {R, D};
      tl_arg a[4] = {targ(TL_BF16, 2, st), targ(TL_I32, 1, &M), targ(TL_BF16, 2, sy), targ(TL_BF16, 2, sz)};
      tfill_random(&a[0], &g, -4, 4);
      /* the scatter's indices are distinct: a permutation of 0..R-1 (R > M), some made outside */
      int32_t *perm = calloc((size_t)R, sizeof *perm);
      for (int64_t i = 0; i < R; i++) perm[i] = (int32_t)i;
      for (int64_t i = R - 1; i > 0; i--) {
        int64_t j = (int64_t)(rng_u64(&g) % (uint64_t)(i + 1));
        int32_t t = perm[i];
        perm[i] = perm[j], perm[j] = t;
      }
      for (int64_t m = 0; m < M; m++) {
        int32_t ix = perm[m] % (int32_t)V; /* gather rows: repeats allowed */
        if (m % 5 == 3) ix = -1 - m;       /* outside, negative */
        if (m % 7 == 5) ix = (int32_t)(R + m);
        iset(&a[1], m, ix);
      }
      tpoison(&a[2]);
      tpoison(&a[3]);
      interp(s, a, 4);
      for (int64_t m = 0; m < M; m++)
        for (int64_t d = 0; d < D; d++) {
          int32_t ix = iget(&a[1], m);
          float want = ix >= 0 && ix < V ? tget_f(&a[0], ix * D + d) : 3.0f;
          cr_assert(tget_f(&a[2], m * D + d) == want, "gather M %lld D %lld at (%lld, %lld)", (long long)M,
                    (long long)D, (long long)m, (long long)d);
        }
      /* the scatter wrote row Y[m] to Z[idx[m]] where idx[m] is in [0, R); every other row keeps its poison */
      for (int64_t r = 0; r < R; r++) {
        int64_t src = -1;
        for (int64_t m = 0; m < M; m++)
          if (iget(&a[1], m) == r) src = m;
        for (int64_t d = 0; d < D; d++) {
          float got = tget_f(&a[3], r * D + d);
          if (src < 0) cr_assert(isnan(got), "scatter wrote row %lld, which no index names", (long long)r);
          else cr_assert(got == tget_f(&a[2], src * D + d), "scatter row %lld col %lld", (long long)r, (long long)d);
        }
      }
      free(perm);
      for (int i = 0; i < 4; i++) free(a[i].data);
    }
  src_free(s);
}
Test(lang_gather, rows_against_c) { check_gather(false); }
Test(lang_gather, rows_against_c_after_passes) { check_gather(true); }

Test(lang_gather, columns_and_two_gathers) {
  /* a gather along the last dim, and one along both dims (the outer product of two index tiles) */
  src_mod *s = compile_src("kernel k(T: tensor<f32>[R, C], I: tensor<i32>[N], J: tensor<i32>[K], Y: tensor<f32>[N, K])\n"
                           "    tiles(BN = 16, BK = 8) grid(1)\n"
                           "{\n"
                           "    i = load(I[0 : BN], other = -1);\n"
                           "    j = load(J[0 : BK], other = -1);\n"
                           "    store(Y[0 : BN, 0 : BK], load(T[i, j]) + load(T[0 : BN, j]));\n"
                           "}\n",
                           true);
  rng g = {5};
  int64_t R = 19, C = 9, N = 13, K = 6, st[2] = {R, C}, sy[2] = {N, K};
  tl_arg a[4] = {targ(TL_F32, 2, st), targ(TL_I32, 1, &N), targ(TL_I32, 1, &K), targ(TL_F32, 2, sy)};
  tfill_random(&a[0], &g, -1, 1);
  for (int64_t i = 0; i < N; i++) iset(&a[1], i, (int32_t)(rng_u64(&g) % 22) - 1);
  for (int64_t j = 0; j < K; j++) iset(&a[2], j, (int32_t)(rng_u64(&g) % 11) - 1);
  tpoison(&a[3]);
  interp(s, a, 4);
  for (int64_t n = 0; n < N; n++)
    for (int64_t k = 0; k < K; k++) {
      int32_t i = iget(&a[1], n), j = iget(&a[2], k);
      float x = i >= 0 && i < R && j >= 0 && j < C ? tget_f(&a[0], i * C + j) : 0;
      float y = n < R && j >= 0 && j < C ? tget_f(&a[0], n * C + j) : 0;
      cr_assert(tget_f(&a[3], n * K + k) == x + y, "(%lld, %lld)", (long long)n, (long long)k);
    }
  for (int i = 0; i < 4; i++) free(a[i].data);
  src_free(s);
}

/* ---- atomics -------------------------------------------------------------------------------------- */
static const char *atomic_src =
    "kernel k(X: tensor<f32>[R, C], L: tensor<i32>[R], S: tensor<f32>[C], H: tensor<i32>[NB], MX: tensor<f32>[C],\n"
    "         MN: tensor<i32>[C], HS: tensor<f16>[C])\n"
    "    tiles(BR = 8, BC = 16) grid(cdiv(R, BR), cdiv(C, BC))\n"
    "{\n"
    "    r0 = program_id(0) * BR;\n"
    "    c0 = program_id(1) * BC;\n"
    "    x = load(X[r0 : r0 + BR, c0 : c0 + BC]);\n"
    "    atomic_add(S[c0 : c0 + BC], reduce_sum(x, 0));\n"
    "    atomic_max(MX[c0 : c0 + BC], reduce_max(load(X[r0 : r0 + BR, c0 : c0 + BC], other = -inf), 0));\n"
    "    atomic_min(MN[c0 : c0 + BC], reduce_min(cast<i32>(load(X[r0 : r0 + BR, c0 : c0 + BC], other = 100.0) * 100.0), 0));\n"
    "    atomic_add(HS[c0 : c0 + BC], cast<f16>(reduce_sum(x, 0)));\n"
    "    if program_id(1) == 0 {\n"
    "        atomic_add(H[load(L[r0 : r0 + BR], other = -1)], 1);\n"
    "    }\n"
    "}\n";

static void check_atomics(bool passes) {
  src_mod *s = compile_src(atomic_src, passes);
  rng g = {3};
  const int64_t Rs[3] = {1, 9, 37}, Cs[3] = {1, 16, 23};
  for (int ri = 0; ri < 3; ri++)
    for (int ci = 0; ci < 3; ci++) {
      int64_t R = Rs[ri], C = Cs[ci], NB = 5, sx[2] = {R, C};
      tl_arg a[7] = {targ(TL_F32, 2, sx), targ(TL_I32, 1, &R), targ(TL_F32, 1, &C), targ(TL_I32, 1, &NB),
                     targ(TL_F32, 1, &C), targ(TL_I32, 1, &C), targ(TL_F16, 1, &C)};
      tfill_random(&a[0], &g, -2, 2);
      for (int64_t r = 0; r < R; r++) iset(&a[1], r, (int32_t)(rng_u64(&g) % 7) - 1); /* -1 and 5 outside */
      double *s0 = calloc((size_t)C, sizeof(double));
      for (int64_t c = 0; c < C; c++) {
        tset_f(&a[2], c, rng_uniform(&g, -1, 1));
        tset_f(&a[4], c, rng_uniform(&g, -1, 1));
        iset(&a[5], c, (int32_t)(rng_u64(&g) % 100));
        tset_f(&a[6], c, 0.5);
        s0[c] = tget_f(&a[2], c);
      }
      int32_t h0[5], mn0[64];
      float mx0[64];
      for (int b = 0; b < NB; b++) iset(&a[3], b, h0[b] = (int32_t)b * 3);
      for (int64_t c = 0; c < C; c++) mx0[c] = tget_f(&a[4], c), mn0[c] = iget(&a[5], c);
      interp(s, a, 7);
      for (int64_t c = 0; c < C; c++) {
        double sum = s0[c], mag = fabs(s0[c]), hsum = 0.5;
        float mx = mx0[c];
        int32_t mn = mn0[c];
        for (int64_t r = 0; r < R; r++) {
          float x = tget_f(&a[0], r * C + c);
          sum += x, mag += fabs(x), hsum += x;
          mx = x > mx ? x : mx;
          int32_t q = (int32_t)(x * 100.0f);
          mn = q < mn ? q : mn;
        }
        /* floats: any order of the additions (f32 each) */
        cr_assert(fabs(tget_f(&a[2], c) - sum) <= (double)(R + 1) * 0x1p-23 * mag, "sum col %lld", (long long)c);
        cr_assert(tget_f(&a[4], c) == mx, "max col %lld: %g want %g", (long long)c, tget_f(&a[4], c), mx);
        cr_assert_eq(iget(&a[5], c), mn, "min col %lld", (long long)c);
        /* f16: each program's add rounds to f16 once */
        int64_t progs = (R + 7) / 8;
        cr_assert(fabs(tget_f(&a[6], c) - hsum) <= (double)progs * 0x1p-11 * (mag + 1) + 1e-3, "f16 sum col %lld",
                  (long long)c);
      }
      int32_t h[5];
      memcpy(h, h0, sizeof h);
      for (int64_t r = 0; r < R; r++) {
        int32_t b = iget(&a[1], r);
        if (b >= 0 && b < NB) h[b]++;
      }
      for (int b = 0; b < NB; b++) cr_assert_eq(iget(&a[3], b), h[b], "histogram bin %d", b);
      free(s0);
      for (int i = 0; i < 7; i++) free(a[i].data);
    }
  src_free(s);
}
Test(lang_atomic, against_c) { check_atomics(false); }
Test(lang_atomic, against_c_after_passes) { check_atomics(true); }

/* ---- scans and argmax / argmin ---------------------------------------------------------------------- */
static const char *scan_src =
    "kernel k(X: tensor<f32>[R, C], S: tensor<f32>[R, C], M: tensor<f32>[R, C], AX: tensor<i32>[R], AN: tensor<i32>[C],\n"
    "         Q: tensor<i32>[R, C], H: tensor<bf16>[R, C])\n"
    "    tiles(BR = 8, BC = 16) grid(cdiv(R, BR))\n"
    "{\n"
    "    r0 = program_id(0) * BR;\n"
    "    x = load(X[r0 : r0 + BR, 0 : BC], other = -inf);\n"
    "    store(S[r0 : r0 + BR, 0 : BC], cumsum(load(X[r0 : r0 + BR, 0 : BC]), 1));\n"
    "    store(M[r0 : r0 + BR, 0 : BC], cummax(x, 0));\n"
    "    store(AX[r0 : r0 + BR], argmax(x, 1));\n"
    "    store(AN[0 : BC], argmin(load(X[r0 : r0 + BR, 0 : BC], other = inf), -2));\n"
    "    store(Q[r0 : r0 + BR, 0 : BC], cumsum(cast<i32>(x * 4.0), 1));\n"
    "    store(H[r0 : r0 + BR, 0 : BC], cumsum(cast<bf16>(load(X[r0 : r0 + BR, 0 : BC])), 1));\n"
    "}\n";

static void check_scans(bool passes) {
  src_mod *s = compile_src(scan_src, passes);
  rng g = {21};
  const int64_t Rs[3] = {1, 7, 8}, Cs[3] = {1, 13, 16};
  for (int ri = 0; ri < 3; ri++)
    for (int ci = 0; ci < 3; ci++) {
      int64_t R = Rs[ri], C = Cs[ci], sx[2] = {R, C};
      tl_arg a[7] = {targ(TL_F32, 2, sx), targ(TL_F32, 2, sx), targ(TL_F32, 2, sx), targ(TL_I32, 1, &R),
                     targ(TL_I32, 1, &C), targ(TL_I32, 2, sx), targ(TL_BF16, 2, sx)};
      for (int64_t i = 0; i < R * C; i++) tset_f(&a[0], i, (double)((int64_t)(rng_u64(&g) % 9) - 4) * 0.25);
      if (R * C > 5) tset_f(&a[0], 5, NAN); /* a NaN: propagates through cummax, wins argmax */
      for (int i = 1; i < 7; i++) tpoison(&a[i]);
      interp(s, a, 7);
      for (int64_t r = 0; r < R; r++) {
        float acc = 0, bacc = 0;
        int32_t q = 0, best = 0;
        for (int64_t c = 0; c < C; c++) {
          float x = tget_f(&a[0], r * C + c), xb = tl_round_to_dtype(x, TL_BF16);
          acc = c ? acc + x : x;
          bacc = c ? bacc + xb : xb;
          q += isnan(x) ? 0 : (int32_t)(x * 4.0f);
          cr_assert(memcmp(&acc, (float *)a[1].data + r * C + c, 4) == 0 || (isnan(acc) && isnan(tget_f(&a[1], r * C + c))),
                    "cumsum (%lld, %lld)", (long long)r, (long long)c);
          cr_assert_eq(iget(&a[5], r * C + c), q, "int cumsum (%lld, %lld)", (long long)r, (long long)c);
          float hb = tl_round_to_dtype(bacc, TL_BF16), got = tget_f(&a[6], r * C + c);
          cr_assert(got == hb || (isnan(got) && isnan(hb)), "bf16 cumsum (%lld, %lld)", (long long)r, (long long)c);
          float b = tget_f(&a[0], r * C + best);
          if ((x > b) || (isnan(x) && !isnan(b))) best = (int32_t)c;
        }
        cr_assert_eq(iget(&a[3], r), best, "argmax row %lld", (long long)r);
      }
      for (int64_t c = 0; c < C; c++) {
        float m = 0;
        int32_t best = 0;
        for (int64_t r = 0; r < R; r++) {
          float x = tget_f(&a[0], r * C + c);
          m = r == 0 ? x : (isnan(m) || isnan(x)) ? NAN : fmaxf(m, x);
          float got = tget_f(&a[2], r * C + c);
          cr_assert(got == m || (isnan(got) && isnan(m)), "cummax (%lld, %lld)", (long long)r, (long long)c);
          float b = tget_f(&a[0], best * C + c);
          if ((x < b) || (isnan(x) && !isnan(b))) best = (int32_t)r;
        }
        /* programs overwrite AN with their own rows' argmin: the last program's */
        int64_t r0 = (R - 1) / 8 * 8;
        int32_t lb = 0;
        for (int64_t r = r0; r < R; r++) {
          float x = tget_f(&a[0], r * C + c), b = tget_f(&a[0], (r0 + lb) * C + c);
          if ((x < b) || (isnan(x) && !isnan(b))) lb = (int32_t)(r - r0);
        }
        (void)best;
        cr_assert_eq(iget(&a[4], c), lb, "argmin col %lld", (long long)c);
      }
      for (int i = 0; i < 7; i++) free(a[i].data);
    }
  src_free(s);
}
Test(lang_scan, against_c) { check_scans(false); }
Test(lang_scan, against_c_after_passes) { check_scans(true); }

/* ---- tile slices and cat ---------------------------------------------------------------------------- */
Test(lang_shape, rotate_halves_with_slices_and_cat) {
  /* RoPE's rotate_half: cat(-x[:, D/2 : D], x[:, 0 : D/2]), and a slice of rows; ragged R */
  src_mod *s = compile_src("kernel k(X: tensor<f32>[R, D], Y: tensor<f32>[R, D], Z: tensor<f32>[R, 8])\n"
                           "    tiles(BR = 8, BD = 32) grid(cdiv(R, BR))\n"
                           "{\n"
                           "    r0 = program_id(0) * BR;\n"
                           "    x = load(X[r0 : r0 + BR, 0 : BD]);\n"
                           "    store(Y[r0 : r0 + BR, 0 : BD], cat(-x[:, BD / 2 : BD], x[:, 0 : BD / 2], 1));\n"
                           "    top = x[0 : 4, 8 : 16];\n"
                           "    store(Z[r0 : r0 + BR, 0 : 8], cat(top, x[4 : 8, 0 : 8] * 2.0, 0));\n"
                           "}\n",
                           true);
  rng g = {9};
  for (int64_t R = 1; R < 30; R += 7) {
    int64_t D = 32, sx[2] = {R, D}, sz[2] = {R, 8};
    tl_arg a[3] = {targ(TL_F32, 2, sx), targ(TL_F32, 2, sx), targ(TL_F32, 2, sz)};
    tfill_random(&a[0], &g, -1, 1);
    tpoison(&a[1]);
    tpoison(&a[2]);
    interp(s, a, 3);
    for (int64_t r = 0; r < R; r++) {
      for (int64_t d = 0; d < D; d++) {
        float want = d < 16 ? -tget_f(&a[0], r * D + d + 16) : tget_f(&a[0], r * D + d - 16);
        cr_assert(tget_f(&a[1], r * D + d) == want, "Y (%lld, %lld)", (long long)r, (long long)d);
      }
      int64_t r0 = r / 8 * 8, i = r - r0;
      for (int64_t d = 0; d < 8; d++) {
        int64_t sr = i < 4 ? r0 + i : r0 + i, sd = i < 4 ? d + 8 : d;
        float x = sr < R ? tget_f(&a[0], sr * D + sd) : 0;
        float want = i < 4 ? x : x * 2.0f;
        cr_assert(tget_f(&a[2], r * 8 + d) == want, "Z (%lld, %lld)", (long long)r, (long long)d);
      }
    }
    for (int i = 0; i < 3; i++) free(a[i].data);
  }
  src_free(s);
}

/* ---- integer bit operations and bitcast -------------------------------------------------------------- */
Test(lang_bits, operators_and_bitcast_against_c) {
  src_mod *s = compile_src("kernel k(X: tensor<f32>[N], A: tensor<i32>[N], Y: tensor<i32>[N], Z: tensor<f32>[N],\n"
                           "         U: tensor<u8>[N], H: tensor<bf16>[N], G: tensor<i16>[N])\n"
                           "    tiles(B = 32) grid(cdiv(N, B))\n"
                           "{\n"
                           "    n0 = program_id(0) * B;\n"
                           "    x = load(X[n0 : n0 + B]);\n"
                           "    a = load(A[n0 : n0 + B]);\n"
                           "    b = bitcast<i32>(x);\n"
                           "    store(Y[n0 : n0 + B], (b >> 23 & 0xff) - 127 + (a << 3 | 1) ^ a >> 2 & 0x0f0f);\n"
                           "    store(Z[n0 : n0 + B], bitcast<f32>(b & 0x7fffffff));\n"
                           "    store(U[n0 : n0 + B], cast<u8>(a) >> 3 | cast<u8>(a) << 5);\n"
                           "    store(G[n0 : n0 + B], bitcast<i16>(load(H[n0 : n0 + B])) ^ -32768);\n"
                           "}\n",
                           true);
  rng g = {13};
  for (int64_t N = 1; N < 100; N += 33) {
    tl_arg a[7] = {targ(TL_F32, 1, &N), targ(TL_I32, 1, &N), targ(TL_I32, 1, &N), targ(TL_F32, 1, &N),
                   targ(TL_U8, 1, &N),  targ(TL_BF16, 1, &N), targ(TL_I16, 1, &N)};
    tfill_random(&a[0], &g, -100, 100);
    tfill_random(&a[5], &g, -100, 100);
    for (int64_t i = 0; i < N; i++) iset(&a[1], i, (int32_t)rng_u64(&g));
    for (int i = 2; i < 7; i++)
      if (i != 5) tpoison(&a[i]);
    interp(s, a, 7);
    for (int64_t i = 0; i < N; i++) {
      float x = tget_f(&a[0], i);
      int32_t b, av = iget(&a[1], i);
      memcpy(&b, &x, 4);
      int32_t want = (int32_t)(((uint32_t)((b >> 23 & 0xff) - 127) + ((uint32_t)av << 3 | 1)) ^ (uint32_t)(av >> 2 & 0x0f0f));
      cr_assert_eq(iget(&a[2], i), want, "Y[%lld]", (long long)i);
      cr_assert(tget_f(&a[3], i) == fabsf(x), "Z[%lld]", (long long)i);
      uint8_t u = (uint8_t)av, wu = (uint8_t)(u >> 3 | (uint8_t)(u << 5));
      cr_assert_eq(((uint8_t *)a[4].data)[i], wu, "U[%lld]", (long long)i);
      uint16_t hb;
      memcpy(&hb, (char *)a[5].data + 2 * i, 2);
      int16_t gw;
      memcpy(&gw, (char *)a[6].data + 2 * i, 2);
      cr_assert_eq((uint16_t)gw, (uint16_t)(hb ^ 0x8000), "G[%lld]: %04x for bf16 bits %04x", (long long)i, (unsigned)(uint16_t)gw, (unsigned)hb);
    }
    for (int i = 0; i < 7; i++) free(a[i].data);
  }
  src_free(s);
}

/* ---- sort ------------------------------------------------------------------------------------------- */
static int cmp_ref_f(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  if (isnan(x) || isnan(y)) return (isnan(x) != 0) - (isnan(y) != 0); /* NaN last */
  if (x == y) return (signbit(y) != 0) - (signbit(x) != 0);        /* -0.0 first */
  return x < y ? -1 : 1;
}

Test(lang_sort, rows_and_columns_against_qsort) {
  src_mod *s = compile_src("kernel k(X: tensor<f32>[R, C], A: tensor<f32>[R, C], D: tensor<bf16>[R, C], I: tensor<i32>[R, C])\n"
                           "    tiles(BR = 8, BC = 32) grid(cdiv(R, BR))\n"
                           "{\n"
                           "    r0 = program_id(0) * BR;\n"
                           "    x = load(X[r0 : r0 + BR, 0 : BC], other = inf);\n"
                           "    store(A[r0 : r0 + BR, 0 : BC], sort(x, 1));\n"
                           "    store(D[r0 : r0 + BR, 0 : BC], sort(cast<bf16>(load(X[r0 : r0 + BR, 0 : BC], other = -inf)), -1, descending = true));\n"
                           "    store(I[r0 : r0 + BR, 0 : BC], sort(cast<i32>(x * 8.0), 0));\n"
                           "}\n",
                           true);
  rng g = {17};
  for (int64_t R = 1; R <= 17; R += 8)
    for (int64_t C = 1; C <= 32; C += 15) {
      int64_t sx[2] = {R, C};
      tl_arg a[4] = {targ(TL_F32, 2, sx), targ(TL_F32, 2, sx), targ(TL_BF16, 2, sx), targ(TL_I32, 2, sx)};
      for (int64_t i = 0; i < R * C; i++) tset_f(&a[0], i, (double)((int64_t)(rng_u64(&g) % 17) - 8) * 0.5);
      if (R * C > 3) tset_f(&a[0], 3, NAN), tset_f(&a[0], 2, -0.0);
      for (int i = 1; i < 4; i++) tpoison(&a[i]);
      interp(s, a, 4);
      float row[32];
      for (int64_t r = 0; r < R; r++) {
        for (int64_t c = 0; c < 32; c++) row[c] = c < C ? tget_f(&a[0], r * C + c) : INFINITY;
        qsort(row, 32, sizeof(float), cmp_ref_f);
        for (int64_t c = 0; c < C; c++) {
          float got = tget_f(&a[1], r * C + c);
          cr_assert(memcmp(&got, &row[c], 4) == 0 || (isnan(got) && isnan(row[c])), "ascending (%lld, %lld): %g want %g",
                    (long long)r, (long long)c, got, row[c]);
        }
        for (int64_t c = 0; c < 32; c++) row[c] = c < C ? tl_round_to_dtype(tget_f(&a[0], r * C + c), TL_BF16) : -INFINITY;
        qsort(row, 32, sizeof(float), cmp_ref_f);
        for (int64_t c = 0; c < C; c++) {
          float got = tget_f(&a[2], r * C + c), want = row[31 - c];
          cr_assert(memcmp(&got, &want, 4) == 0 || (isnan(got) && isnan(want)), "descending (%lld, %lld): %g want %g",
                    (long long)r, (long long)c, got, want);
        }
      }
      /* integer sort along the rows of each program's block (padding rows: cast<i32>(inf * 8) = INT_MAX) */
      for (int64_t c = 0; c < C; c++)
        for (int64_t r0 = 0; r0 < R; r0 += 8) {
          int32_t col[8];
          for (int64_t i = 0; i < 8; i++) {
            float x = r0 + i < R ? tget_f(&a[0], (r0 + i) * C + c) : INFINITY;
            col[i] = isnan(x) ? 0 : x * 8.0f >= 2147483648.0f ? INT32_MAX : (int32_t)(x * 8.0f);
          }
          for (int i = 1; i < 8; i++)
            for (int j = i; j > 0 && col[j - 1] > col[j]; j--) {
              int32_t t = col[j];
              col[j] = col[j - 1], col[j - 1] = t;
            }
          for (int64_t i = 0; i < 8 && r0 + i < R; i++)
            cr_assert_eq(iget(&a[3], (r0 + i) * C + c), col[i], "int sort (%lld, %lld)", (long long)(r0 + i), (long long)c);
        }
      for (int i = 0; i < 4; i++) free(a[i].data);
    }
  src_free(s);
}

/* ---- reshape and permute --------------------------------------------------------------------------- */
Test(lang_shape, reshape_and_permute_against_c) {
  src_mod *s = compile_src("kernel k(X: tensor<f32>[A, B, C], Y: tensor<f32>[C, A, B], Z: tensor<f32>[N], W: tensor<f32>[B, A])\n"
                           "    tiles(TA = 4, TB = 8, TC = 16) grid(1)\n"
                           "{\n"
                           "    x = load(X[0 : TA, 0 : TB, 0 : TC]);\n"
                           "    store(Y[0 : TC, 0 : TA, 0 : TB], permute(x, [2, 0, 1]));\n"
                           "    store(Z[0 : 512], reshape(x, [512]));\n"
                           "    store(W[0 : TB, 0 : TA], permute(reduce_sum(x, 2), [1, 0]));\n"
                           "}\n",
                           true);
  rng g = {19};
  int64_t A = 3, B = 8, C = 13, N = 600, sx[3] = {A, B, C}, sy[3] = {C, A, B}, sw[2] = {B, A};
  tl_arg a[4] = {targ(TL_F32, 3, sx), targ(TL_F32, 3, sy), targ(TL_F32, 1, &N), targ(TL_F32, 2, sw)};
  tfill_random(&a[0], &g, -1, 1);
  for (int i = 1; i < 4; i++) tpoison(&a[i]);
  interp(s, a, 4);
  for (int64_t i = 0; i < A; i++)
    for (int64_t j = 0; j < B; j++) {
      float sum = 0;
      for (int64_t k = 0; k < C; k++) {
        float x = tget_f(&a[0], (i * B + j) * C + k);
        sum += x;
        cr_assert(tget_f(&a[1], (k * A + i) * B + j) == x, "permute (%lld, %lld, %lld)", (long long)k, (long long)i,
                  (long long)j);
      }
      (void)sum;
      cr_assert(!isnan(tget_f(&a[3], j * A + i)), "trans written");
    }
  /* reshape: the tile's row-major order (4 x 8 x 16, the padding zeros included) */
  for (int64_t e = 0; e < 512; e++) {
    int64_t i = e / 128, j = e / 16 % 8, k = e % 16;
    float want = i < A && j < B && k < C ? tget_f(&a[0], (i * B + j) * C + k) : 0;
    cr_assert(tget_f(&a[2], e) == want, "reshape %lld", (long long)e);
  }
  for (int i = 0; i < 4; i++) free(a[i].data);
  src_free(s);
}
