/* test_examples.c: every examples/NAME.tile, compiled by the front-end and run
 * by the interpreter on random inputs at ragged sizes, against a plain C
 * double-precision reference.  Outputs are poisoned (NaN) first and must be
 * fully written.  Tolerances (docs/interpreter.md): an output element passes
 * when |got - ref| <= rtol * |ref| + atol * scale, where scale is the sum of
 * the magnitudes of the terms that produced it (so cancellation is allowed
 * for), rtol covers the final rounding to the output dtype (bf16: its unit
 * roundoff 2^-8, plus 2^-18 for a few f32 operations before it) and atol the
 * f32 arithmetic on the way (K * 2^-23 for a K-long f32 sum, and 2^-8 where an
 * intermediate is rounded to bf16). */
#include <setjmp.h>
#include <stdio.h>

#include "frontend.h"
#include "philox.h"
#include "example_source.h"
#include "test_interp_helpers.h"

#define BF16_RTOL (0x1p-8 + 0x1p-18)


/* When set, the default pass pipeline (verifier after each pass) runs before
 * interpreting: the same references then check the passes too. */
static bool g_after_passes;

static void run_default_pipeline(compiled *c, const char *file) {
  int npasses = 0;
  const tl_pass *const *passes = tl_pipeline_default(&npasses);
  tl_run_hooks hooks = {0};
  hooks.verify_each = true;
  jmp_buf on_fatal;
  c->ctx.on_fatal = &on_fatal;
  if (setjmp(on_fatal)) {
    c->ctx.on_fatal = NULL;
    cr_assert_fail("%s: internal error in the pass pipeline:\n%s", file, tl_ctx_render_diags(&c->ctx));
  }
  bool ok = tl_run_passes(c->m, passes, npasses, NULL, &hooks);
  c->ctx.on_fatal = NULL;
  cr_assert(ok, "%s: pass pipeline failed:\n%s", file, tl_ctx_render_diags(&c->ctx));
}

static compiled *compile_example(const char *file, const tl_define *defs, int ndefs) {
  compiled *c = example_compile(file, defs, ndefs);
  if (g_after_passes) run_default_pipeline(c, file);
  return c;
}

static tl_func *kernel(compiled *c, const char *name) {
  for (int i = 0; i < c->m->funcs.len; i++)
    if (!strcmp(c->m->funcs.data[i]->name, name)) return c->m->funcs.data[i];
  cr_assert_fail("no kernel %s", name);
  return NULL;
}

static void interpret(tl_func *f, tl_arg *args, int n) {
  char err[512] = "";
  cr_assert(tl_interpret_func(f, args, n, err, sizeof err), "%s: %s", f->name, err);
}

/* |got - ref| <= rtol |ref| + atol * scale[i] (scale NULL: |ref|), everywhere written */
static void check_close(const char *what, const tl_arg *out, const double *ref, const double *scale, double rtol,
                        double atol) {
  int64_t n = targ_numel(out);
  double worst = 0; /* largest error / tolerance, logged to show the margin */
  for (int64_t i = 0; i < n; i++) {
    double got = tget_f(out, i), s = scale ? scale[i] : fabs(ref[i]);
    double tol = rtol * fabs(ref[i]) + atol * s + 1e-37;
    if (fabs(got - ref[i]) / tol > worst) worst = fabs(got - ref[i]) / tol;
    cr_assert(!isnan(got), "%s: element %lld not written (or NaN); want %g", what, (long long)i, ref[i]);
    cr_assert(fabs(got - ref[i]) <= tol, "%s: element %lld is %.9g, want %.9g (tol %.3g)", what, (long long)i, got,
              ref[i], tol);
  }
  cr_log_info("%s: worst error / tolerance = %.3f", what, worst);
}

static double *dalloc(int64_t n) { return calloc((size_t)(n ? n : 1), sizeof(double)); }

/* ---- gemm (bf16) ---------------------------------------------------------------------------- */
/* kernel `name` of c: C = A @ B, or with `residual` C = A @ B + R (R a fourth bf16 [M, N] operand) */
static void run_gemm_named(compiled *c, const char *name, bool residual, int64_t M, int64_t N, int64_t K,
                           uint64_t seed) {
  tl_func *f = kernel(c, name);
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
  tl_arg a[4] = {targ(TL_BF16, 2, sa), targ(TL_BF16, 2, sb), targ(TL_BF16, 2, sc), targ(TL_BF16, 2, sc)};
  rng g = {seed};
  tfill_random(&a[0], &g, -1, 1);
  tfill_random(&a[1], &g, -1, 1);
  tfill_random(&a[2], &g, -1, 1);
  int out = residual ? 3 : 2;
  tpoison(&a[out]);
  interpret(f, a, residual ? 4 : 3);
  double *ref = dalloc(M * N), *scale = dalloc(M * N);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      if (residual) ref[i * N + j] = scale[i * N + j] = tget_f(&a[2], i * N + j);
      scale[i * N + j] = fabs(scale[i * N + j]);
      for (int64_t k = 0; k < K; k++) {
        double p = (double)tget_f(&a[0], i * K + k) * tget_f(&a[1], k * N + j);
        ref[i * N + j] += p;
        scale[i * N + j] += fabs(p);
      }
    }
  char what[128];
  snprintf(what, sizeof what, "%s %lldx%lldx%lld", name, (long long)M, (long long)N, (long long)K);
  check_close(what, &a[out], ref, scale, BF16_RTOL, (double)(K + 1) * 0x1p-23);
  free(ref);
  free(scale);
  for (int i = 0; i < 4; i++) free(a[i].data);
}

static void run_gemm(compiled *c, int64_t M, int64_t N, int64_t K, uint64_t seed) {
  run_gemm_named(c, "cutlass_gemm", false, M, N, K, seed);
}

static void example_gemm_small_m(void) {
  compiled *c = compile_example("gemm_small_m.tile", NULL, 0);
  const int64_t sizes[][3] = {{1, 33, 257}, {16, 31, 511}, {17, 65, 300}, {5, 1, 1}};
  for (int i = 0; i < 4; i++) {
    run_gemm_named(c, "gemm_small_m", false, sizes[i][0], sizes[i][1], sizes[i][2], 3200 + i);
    run_gemm_named(c, "gemm_small_m_residual", true, sizes[i][0], sizes[i][1], sizes[i][2], 3300 + i);
  }
  compiled_free(c);
}

/* ---- gemm_bias_gelu: Y = gelu_tanh(X W^T + b), W [N, K] (nn.Linear) -------------------------- */
static void run_linear_bias_gelu(compiled *c, int64_t M, int64_t N, int64_t K, uint64_t seed) {
  tl_func *f = kernel(c, "cutlass_linear_bias_gelu");
  int64_t sx[2] = {M, K}, sw[2] = {N, K}, sb[1] = {N}, sy[2] = {M, N};
  tl_arg a[4] = {targ(TL_BF16, 2, sx), targ(TL_BF16, 2, sw), targ(TL_BF16, 1, sb), targ(TL_BF16, 2, sy)};
  rng g = {seed};
  for (int i = 0; i < 3; i++) tfill_random(&a[i], &g, -1, 1);
  tpoison(&a[3]);
  interpret(f, a, 4);
  double *ref = dalloc(M * N), *scale = dalloc(M * N);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double x = tget_f(&a[2], j), s = fabs(x);
      for (int64_t k = 0; k < K; k++) {
        double p = (double)tget_f(&a[0], i * K + k) * tget_f(&a[1], j * K + k);
        x += p;
        s += fabs(p);
      }
      ref[i * N + j] = 0.5 * x * (1.0 + tanh(0.7978845608 * (x + 0.044715 * x * x * x)));
      /* gelu_tanh's slope is below 1.13: the sum's f32 error passes through
       * scaled by at most that; plus a few f32 operations of the activation */
      scale[i * N + j] = 1.13 * s + 4 * fabs(x) + 1;
    }
  char what[128];
  snprintf(what, sizeof what, "cutlass_linear_bias_gelu %lldx%lldx%lld", (long long)M, (long long)N, (long long)K);
  check_close(what, &a[3], ref, scale, BF16_RTOL, (double)(K + 8) * 0x1p-23);
  free(ref);
  free(scale);
  for (int i = 0; i < 4; i++) free(a[i].data);
}

static void example_gemm_bias_gelu(void) {
  compiled *c = compile_example("gemm_bias_gelu.tile", NULL, 0);
  const int64_t sizes[][3] = {{1, 1, 1}, {127, 257, 63}, {129, 255, 65}, {37, 131, 97}};
  for (int i = 0; i < 4; i++) run_linear_bias_gelu(c, sizes[i][0], sizes[i][1], sizes[i][2], 3400 + i);
  compiled_free(c);
}

static void example_gemm(void) {
  compiled *c = compile_example("gemm.tile", NULL, 0);
  const int64_t sizes[][3] = {{1, 1, 1}, {127, 129, 63}, {129, 127, 65}, {37, 131, 97}};
  for (int i = 0; i < 4; i++) run_gemm(c, sizes[i][0], sizes[i][1], sizes[i][2], 3000 + i);
  compiled_free(c);
  const tl_define small[] = {{"BM", 32}, {"BN", 16}, {"BK", 16}};
  c = compile_example("gemm.tile", small, 3);
  const int64_t sizes2[][3] = {{31, 17, 15}, {33, 15, 17}, {67, 41, 53}};
  for (int i = 0; i < 3; i++) run_gemm(c, sizes2[i][0], sizes2[i][1], sizes2[i][2], 3100 + i);
  compiled_free(c);
}

/* ---- gemm_fp8 --------------------------------------------------------------------------------- */
/* variant 0: gemm_fp8_tensor (B [K, N], scalar scales); 1: gemm_fp8_rowcol (B [K, N], per-row / per-column
 * scales); 2: cutlass_gemm_fp8_tn (B given as BT [N, K], scalar scales; wgmma on sm_90a). */
static void run_gemm_fp8(compiled *c, int variant, int64_t M, int64_t N, int64_t K, uint64_t seed) {
  static const char *names[] = {"gemm_fp8_tensor", "gemm_fp8_rowcol", "cutlass_gemm_fp8_tn"};
  bool rowcol = variant == 1, tn = variant == 2;
  tl_func *f = kernel(c, names[variant]);
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sbt[2] = {N, K}, sc[2] = {M, N};
  tl_arg a[5] = {targ(TL_F8E4M3, 2, sa), targ(TL_F8E4M3, 2, tn ? sbt : sb), targ(TL_BF16, 2, sc)};
  rng g = {seed};
  tfill_random(&a[0], &g, -8, 8);
  tfill_random(&a[1], &g, -8, 8);
  tpoison(&a[2]);
  double s_a = rng_uniform(&g, 0.01, 0.1), s_b = rng_uniform(&g, 0.01, 0.1);
  if (rowcol) {
    a[3] = targ(TL_F32, 1, &M);
    a[4] = targ(TL_F32, 1, &N);
    tfill_random(&a[3], &g, 0.01, 0.1);
    tfill_random(&a[4], &g, 0.01, 0.1);
  } else {
    a[3] = sarg_f(s_a);
    a[4] = sarg_f(s_b);
  }
  interpret(f, a, 5);
  double *ref = dalloc(M * N), *scale = dalloc(M * N);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double fa = rowcol ? tget_f(&a[3], i) : (double)(float)s_a, fb = rowcol ? tget_f(&a[4], j) : (double)(float)s_b;
      for (int64_t k = 0; k < K; k++) {
        double b = tget_f(&a[1], tn ? j * K + k : k * N + j);
        double p = (double)tget_f(&a[0], i * K + k) * b * fa * fb;
        ref[i * N + j] += p;
        scale[i * N + j] += fabs(p);
      }
    }
  char what[128];
  snprintf(what, sizeof what, "%s %lldx%lldx%lld", names[variant], (long long)M, (long long)N, (long long)K);
  check_close(what, &a[2], ref, scale, BF16_RTOL, (double)(K + 4) * 0x1p-23);
  free(ref);
  free(scale);
  for (int i = 0; i < 3; i++) free(a[i].data);
  if (rowcol) { free(a[3].data); free(a[4].data); }
}

static void example_gemm_fp8(void) {
  compiled *c = compile_example("gemm_fp8.tile", NULL, 0);
  const int64_t sizes[][3] = {{1, 1, 1}, {129, 127, 129}, {37, 131, 257}};
  for (int i = 0; i < 3; i++)
    for (int v = 0; v < 3; v++) run_gemm_fp8(c, v, sizes[i][0], sizes[i][1], sizes[i][2], 3200 + i * 3 + v);
  compiled_free(c);
}

/* ---- attention ------------------------------------------------------------------------------------ */
/* The attention reference in double: ref = softmax(q k^T * scale (causal: keys <= the query)) v over
 * ZH heads of [S, D], and sc the scale of each output's rounding error (the largest |v| it sums). */
static void attn_ref(const double *q, const double *k, const tl_arg *vt, bool causal, int64_t ZH, int64_t S, int64_t D,
                     double scale, double *ref, double *sc) {
  double *p = dalloc(S);
  for (int64_t zh = 0; zh < ZH; zh++)
    for (int64_t i = 0; i < S; i++) {
      int64_t base = zh * S * D, jmax = causal ? i + 1 : S;
      double mx = -INFINITY, l = 0;
      for (int64_t j = 0; j < jmax; j++) {
        double s = 0;
        for (int64_t d = 0; d < D; d++) s += q[base + i * D + d] * k[base + j * D + d];
        p[j] = s * (double)(float)scale;
        if (p[j] > mx) mx = p[j];
      }
      for (int64_t j = 0; j < jmax; j++) l += (p[j] = exp(p[j] - mx));
      for (int64_t d = 0; d < D; d++) {
        double o = 0, vmax = 0;
        for (int64_t j = 0; j < jmax; j++) {
          double v = tget_f(vt, base + j * D + d);
          o += p[j] * v;
          if (fabs(v) > vmax) vmax = fabs(v);
        }
        ref[base + i * D + d] = o / l;
        sc[base + i * D + d] = vmax; /* p is rounded to bf16 before the second dot */
      }
    }
  free(p);
}

static void run_attn(compiled *c, bool causal, int64_t Z, int64_t H, int64_t S, int64_t D, uint64_t seed) {
  tl_func *f = kernel(c, "attn_fwd");
  int64_t shape[4] = {Z, H, S, D};
  tl_arg a[5] = {targ(TL_BF16, 4, shape), targ(TL_BF16, 4, shape), targ(TL_BF16, 4, shape), targ(TL_BF16, 4, shape)};
  rng g = {seed};
  for (int i = 0; i < 3; i++) tfill_random(&a[i], &g, -1, 1);
  tpoison(&a[3]);
  double scale = 1.0 / sqrt((double)D);
  a[4] = sarg_f(scale);
  interpret(f, a, 5);
  int64_t n = Z * H * S * D;
  double *ref = dalloc(n), *sc = dalloc(n);
  double *q = dalloc(n), *k = dalloc(n);
  for (int64_t i = 0; i < n; i++) q[i] = tget_f(&a[0], i), k[i] = tget_f(&a[1], i);
  attn_ref(q, k, &a[2], causal, Z * H, S, D, scale, ref, sc);
  free(q);
  free(k);
  char what[128];
  snprintf(what, sizeof what, "attn causal=%d Z=%lld H=%lld S=%lld", causal, (long long)Z, (long long)H, (long long)S);
  check_close(what, &a[3], ref, sc, BF16_RTOL, 0x1p-8);
  free(ref);
  free(sc);
  for (int i = 0; i < 4; i++) free(a[i].data);
}

static void example_attn(void) {
  for (int causal = 0; causal < 2; causal++) {
    const tl_define defs[] = {{"CAUSAL", causal}};
    compiled *c = compile_example("attn.tile", defs, 1);
    const int64_t ss[] = {1, 63, 65, 131};
    for (int i = 0; i < 4; i++) run_attn(c, causal, i == 3 ? 1 : 2, 3, ss[i], 64, 3300 + causal * 8 + i);
    compiled_free(c);
    /* smaller tiles: several key blocks per query block, and BM > BN */
    const tl_define small[] = {{"CAUSAL", causal}, {"BM", 32}, {"BN", 16}, {"D", 16}};
    c = compile_example("attn.tile", small, 4);
    const int64_t ss2[] = {15, 17, 47, 97};
    for (int i = 0; i < 4; i++) run_attn(c, causal, 1, 2, ss2[i], 16, 3400 + causal * 8 + i);
    compiled_free(c);
  }
}

/* ---- attn_rope: RoPE (rotate halves) fused into attention ---------------------------------------- */
/* x rotated as the kernel does it: x1 c - x2 s and x2 c + x1 s in f32 (each product and the sum
 * rounded), then to bf16 */
static double rope_elem(const tl_arg *x, const tl_arg *cs, const tl_arg *sn, int64_t row, int64_t pos, int64_t d,
                        int64_t D) {
  int64_t H2 = D / 2, j = d % H2;
  float x1 = tget_f(x, row * D + j), x2 = tget_f(x, row * D + H2 + j);
  float c = tget_f(cs, pos * H2 + j), s = tget_f(sn, pos * H2 + j);
  float r = d < H2 ? (float)(x1 * c) - (float)(x2 * s) : (float)(x2 * c) + (float)(x1 * s);
  return tl_bits_to_float(tl_float_to_bits(r, TL_BF16), TL_BF16);
}

static void run_attn_rope(compiled *c, bool causal, int64_t Z, int64_t H, int64_t S, int64_t D, uint64_t seed) {
  tl_func *f = kernel(c, "attn_rope_fwd");
  int64_t shape[4] = {Z, H, S, D}, ts[2] = {S, D / 2};
  tl_arg a[7] = {targ(TL_BF16, 4, shape), targ(TL_BF16, 4, shape), targ(TL_BF16, 4, shape),
                 targ(TL_F32, 2, ts), targ(TL_F32, 2, ts), targ(TL_BF16, 4, shape)};
  rng g = {seed};
  for (int i = 0; i < 3; i++) tfill_random(&a[i], &g, -1, 1);
  /* the tables as RoPE makes them: cos and sin of position * frequency */
  for (int64_t t = 0; t < S; t++)
    for (int64_t j = 0; j < D / 2; j++) {
      double th = (double)t * pow(10000.0, -2.0 * (double)j / (double)D);
      ((float *)a[3].data)[t * (D / 2) + j] = (float)cos(th);
      ((float *)a[4].data)[t * (D / 2) + j] = (float)sin(th);
    }
  tpoison(&a[5]);
  double scale = 1.0 / sqrt((double)D);
  a[6] = sarg_f(scale);
  interpret(f, a, 7);
  int64_t n = Z * H * S * D;
  double *ref = dalloc(n), *sc = dalloc(n), *qr = dalloc(n), *kr = dalloc(n);
  for (int64_t r = 0; r < Z * H * S; r++)
    for (int64_t d = 0; d < D; d++) {
      qr[r * D + d] = rope_elem(&a[0], &a[3], &a[4], r, r % S, d, D);
      kr[r * D + d] = rope_elem(&a[1], &a[3], &a[4], r, r % S, d, D);
    }
  attn_ref(qr, kr, &a[2], causal, Z * H, S, D, scale, ref, sc);
  char what[128];
  snprintf(what, sizeof what, "attn_rope causal=%d Z=%lld H=%lld S=%lld D=%lld", causal, (long long)Z, (long long)H,
           (long long)S, (long long)D);
  check_close(what, &a[5], ref, sc, BF16_RTOL, 0x1p-8);
  free(ref);
  free(sc);
  free(qr);
  free(kr);
  for (int i = 0; i < 6; i++) free(a[i].data);
}

static void example_attn_rope(void) {
  for (int causal = 0; causal < 2; causal++) {
    const tl_define defs[] = {{"CAUSAL", causal}};
    compiled *c = compile_example("attn_rope.tile", defs, 1);
    const int64_t ss[] = {1, 63, 65, 131};
    for (int i = 0; i < 4; i++) run_attn_rope(c, causal, i == 3 ? 1 : 2, 2, ss[i], 64, 4600 + causal * 8 + i);
    compiled_free(c);
    /* smaller tiles: several key blocks per query block */
    const tl_define small[] = {{"CAUSAL", causal}, {"BM", 32}, {"BN", 16}, {"D", 32}};
    c = compile_example("attn_rope.tile", small, 4);
    const int64_t ss2[] = {15, 17, 47, 97};
    for (int i = 0; i < 4; i++) run_attn_rope(c, causal, 1, 2, ss2[i], 32, 4700 + causal * 8 + i);
    compiled_free(c);
  }
}

/* ---- row norms ---------------------------------------------------------------------------------- */
static void run_rmsnorm_named(compiled *c, const char *name, int64_t R, int64_t C, uint64_t seed) {
  tl_func *f = kernel(c, name);
  int64_t s2[2] = {R, C};
  tl_arg a[4] = {targ(TL_BF16, 2, s2), targ(TL_BF16, 1, &C), targ(TL_BF16, 2, s2)};
  rng g = {seed};
  tfill_random(&a[0], &g, -3, 3);
  tfill_random(&a[1], &g, 0.5, 1.5);
  tpoison(&a[2]);
  double eps = 1e-5;
  a[3] = sarg_f(eps);
  interpret(f, a, 4);
  double *ref = dalloc(R * C);
  for (int64_t r = 0; r < R; r++) {
    double ss = 0;
    for (int64_t j = 0; j < C; j++) ss += (double)tget_f(&a[0], r * C + j) * tget_f(&a[0], r * C + j);
    double inv = 1 / sqrt(ss / (double)C + (double)(float)eps);
    for (int64_t j = 0; j < C; j++) ref[r * C + j] = tget_f(&a[0], r * C + j) * inv * tget_f(&a[1], j);
  }
  char what[64];
  snprintf(what, sizeof what, "%s R=%lld C=%lld", name, (long long)R, (long long)C);
  /* f32 sum of C squares: relative C * 2^-24 in inv; the bf16 output 2^-9 */
  check_close(what, &a[2], ref, NULL, BF16_RTOL + (double)C * 0x1p-24, 0);
  free(ref);
  for (int i = 0; i < 3; i++) free(a[i].data);
}

static void run_rmsnorm(compiled *c, int64_t R, int64_t C, uint64_t seed) { run_rmsnorm_named(c, "rmsnorm", R, C, seed); }

static void example_rmsnorm_rows(void) {
  const tl_define defs[] = {{"BR", 4}, {"BC", 256}};
  compiled *c = compile_example("rmsnorm.tile", defs, 2);
  const int64_t sizes[][2] = {{1, 1}, {3, 255}, {9, 256}, {17, 100}};
  for (int i = 0; i < 4; i++) run_rmsnorm_named(c, "rmsnorm_rows", sizes[i][0], sizes[i][1], 3600 + i);
  compiled_free(c);
}

static void example_rmsnorm(void) {
  compiled *c = compile_example("rmsnorm.tile", NULL, 0);
  const int64_t cs[] = {1, 127, 129, 4093, 4096};
  for (int i = 0; i < 5; i++) run_rmsnorm(c, i % 2 ? 5 : 1, cs[i], 3500 + i);
  compiled_free(c);
  const tl_define small[] = {{"BC", 128}};
  c = compile_example("rmsnorm.tile", small, 1);
  run_rmsnorm(c, 3, 127, 3510);
  run_rmsnorm(c, 2, 128, 3511);
  compiled_free(c);
}

static void run_add_rmsnorm(compiled *c, int64_t R, int64_t C, uint64_t seed) {
  tl_func *f = kernel(c, "add_rmsnorm");
  int64_t s2[2] = {R, C};
  tl_arg a[6] = {targ(TL_BF16, 2, s2), targ(TL_BF16, 2, s2), targ(TL_BF16, 1, &C), targ(TL_BF16, 2, s2),
                 targ(TL_BF16, 2, s2)};
  rng g = {seed};
  tfill_random(&a[0], &g, -3, 3);
  tfill_random(&a[1], &g, -3, 3);
  tfill_random(&a[2], &g, 0.5, 1.5);
  tpoison(&a[3]);
  tpoison(&a[4]);
  a[5] = sarg_f(1e-6);
  interpret(f, a, 6);
  double *sref = dalloc(R * C), *yref = dalloc(R * C), *sscale = dalloc(R * C);
  for (int64_t i = 0; i < R * C; i++) {
    double x = tget_f(&a[0], i), res = tget_f(&a[1], i);
    sref[i] = x + res;
    sscale[i] = fabs(x) + fabs(res);
  }
  char what[64];
  snprintf(what, sizeof what, "add_rmsnorm S R=%lld C=%lld", (long long)R, (long long)C);
  check_close(what, &a[3], sref, sscale, BF16_RTOL, 0x1p-24);
  /* the norm is of the rounded sum, as the kernel documents: use S as written */
  for (int64_t r = 0; r < R; r++) {
    double ss = 0;
    for (int64_t j = 0; j < C; j++) ss += (double)tget_f(&a[3], r * C + j) * tget_f(&a[3], r * C + j);
    double inv = 1 / sqrt(ss / (double)C + (double)1e-6f);
    for (int64_t j = 0; j < C; j++) yref[r * C + j] = tget_f(&a[3], r * C + j) * inv * tget_f(&a[2], j);
  }
  snprintf(what, sizeof what, "add_rmsnorm Y R=%lld C=%lld", (long long)R, (long long)C);
  check_close(what, &a[4], yref, NULL, BF16_RTOL + (double)C * 0x1p-24, 0);
  free(sref);
  free(yref);
  free(sscale);
  for (int i = 0; i < 5; i++) free(a[i].data);
}

/* A row example's run at the ragged row lengths C = 1, 255, 257, 4093 (R = 1 or 3 rows), seeds from seed0. */
static void run_ragged_rows(const char *file, void (*run)(compiled *, int64_t, int64_t, uint64_t), uint64_t seed0) {
  compiled *c = compile_example(file, NULL, 0);
  const int64_t cs[] = {1, 255, 257, 4093};
  for (int i = 0; i < 4; i++) run(c, i % 2 ? 3 : 1, cs[i], seed0 + (uint64_t)i);
  compiled_free(c);
}

static void example_add_rmsnorm(void) { run_ragged_rows("add_rmsnorm.tile", run_add_rmsnorm, 3600); }

static void run_layernorm(compiled *c, int64_t R, int64_t C, uint64_t seed) {
  tl_func *f = kernel(c, "layernorm");
  int64_t s2[2] = {R, C};
  tl_arg a[5] = {targ(TL_BF16, 2, s2), targ(TL_BF16, 1, &C), targ(TL_BF16, 1, &C), targ(TL_BF16, 2, s2)};
  rng g = {seed};
  tfill_random(&a[0], &g, -2, 4);
  tfill_random(&a[1], &g, 0.5, 1.5);
  tfill_random(&a[2], &g, -1, 1);
  tpoison(&a[3]);
  a[4] = sarg_f(1e-5);
  interpret(f, a, 5);
  double *ref = dalloc(R * C), *sc = dalloc(R * C);
  for (int64_t r = 0; r < R; r++) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < C; j++) mean += tget_f(&a[0], r * C + j);
    mean /= (double)C;
    for (int64_t j = 0; j < C; j++) {
      double d = tget_f(&a[0], r * C + j) - mean;
      var += d * d;
    }
    var /= (double)C;
    double rstd = 1 / sqrt(var + (double)1e-5f);
    for (int64_t j = 0; j < C; j++) {
      double t = (tget_f(&a[0], r * C + j) - mean) * rstd * tget_f(&a[1], j), b = tget_f(&a[2], j);
      ref[r * C + j] = t + b;
      sc[r * C + j] = fabs(t) + fabs(b);
    }
  }
  char what[64];
  snprintf(what, sizeof what, "layernorm R=%lld C=%lld", (long long)R, (long long)C);
  /* mean and variance are f32 sums of C terms: C * 2^-23 relative on the normalized part */
  check_close(what, &a[3], ref, sc, BF16_RTOL, (double)(C + 8) * 0x1p-23);
  free(ref);
  free(sc);
  for (int i = 0; i < 4; i++) free(a[i].data);
}

static void example_layernorm(void) {
  compiled *c = compile_example("layernorm.tile", NULL, 0);
  const int64_t cs[] = {1, 2, 1999, 2047, 2048};
  for (int i = 0; i < 5; i++) run_layernorm(c, i % 2 ? 3 : 1, cs[i], 3700 + i);
  compiled_free(c);
}

/* ---- softmax (f32) ------------------------------------------------------------------------------ */
static void run_softmax(compiled *c, int64_t R, int64_t C, uint64_t seed) {
  tl_func *f = kernel(c, "softmax");
  int64_t s2[2] = {R, C};
  tl_arg a[2] = {targ(TL_F32, 2, s2), targ(TL_F32, 2, s2)};
  rng g = {seed};
  tfill_random(&a[0], &g, -6, 6);
  tpoison(&a[1]);
  interpret(f, a, 2);
  double *ref = dalloc(R * C);
  const float *x = a[0].data;
  for (int64_t r = 0; r < R; r++) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < C; j++) mx = fmax(mx, x[r * C + j]);
    for (int64_t j = 0; j < C; j++) sum += exp(x[r * C + j] - mx);
    for (int64_t j = 0; j < C; j++) ref[r * C + j] = exp(x[r * C + j] - mx) / sum;
  }
  char what[64];
  snprintf(what, sizeof what, "softmax R=%lld C=%lld", (long long)R, (long long)C);
  /* f32: exp of an argument up to 12 off by 2^-24 relative, a C-term f32 sum, one division */
  check_close(what, &a[1], ref, NULL, (double)(C + 32) * 0x1p-24, 0);
  free(ref);
  free(a[0].data);
  free(a[1].data);
}

static void example_softmax(void) {
  compiled *c = compile_example("softmax.tile", NULL, 0);
  const int64_t cs[] = {1, 2, 997, 1023, 1024};
  for (int i = 0; i < 5; i++) run_softmax(c, i % 2 ? 4 : 1, cs[i], 3800 + i);
  compiled_free(c);
}

/* ---- rope ------------------------------------------------------------------------------------------ */
static void run_rope(compiled *c, int64_t T, int64_t H, int64_t D, uint64_t seed) {
  tl_func *f = kernel(c, "rope");
  int64_t half = D / 2, sx[3] = {T, H, D}, st[2] = {T, half};
  tl_arg a[4] = {targ(TL_BF16, 3, sx), targ(TL_F32, 2, st), targ(TL_F32, 2, st), targ(TL_BF16, 3, sx)};
  rng g = {seed};
  tfill_random(&a[0], &g, -2, 2);
  for (int64_t t = 0; t < T; t++)
    for (int64_t i = 0; i < half; i++) {
      double ang = (double)t * pow(10000.0, -2.0 * (double)i / (double)D) + rng_uniform(&g, 0, 0.1);
      tset_f(&a[1], t * half + i, cos(ang));
      tset_f(&a[2], t * half + i, sin(ang));
    }
  tpoison(&a[3]);
  interpret(f, a, 4);
  double *ref = dalloc(T * H * D), *sc = dalloc(T * H * D);
  for (int64_t t = 0; t < T; t++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t i = 0; i < half; i++) {
        int64_t base = (t * H + h) * D;
        double x1 = tget_f(&a[0], base + i), x2 = tget_f(&a[0], base + half + i);
        double cs = tget_f(&a[1], t * half + i), sn = tget_f(&a[2], t * half + i);
        ref[base + i] = x1 * cs - x2 * sn;
        ref[base + half + i] = x2 * cs + x1 * sn;
        sc[base + i] = sc[base + half + i] = fabs(x1 * cs) + fabs(x2 * sn) + fabs(x1 * sn) + fabs(x2 * cs);
      }
  char what[64];
  snprintf(what, sizeof what, "rope T=%lld H=%lld D=%lld", (long long)T, (long long)H, (long long)D);
  check_close(what, &a[3], ref, sc, BF16_RTOL, 0x1p-22);
  free(ref);
  free(sc);
  for (int i = 0; i < 4; i++) free(a[i].data);
}

static void example_rope(void) {
  compiled *c = compile_example("rope.tile", NULL, 0);
  const int64_t ts[] = {1, 15, 17, 37};
  for (int i = 0; i < 4; i++) run_rope(c, ts[i], i % 2 ? 3 : 1, 128, 3900 + i);
  compiled_free(c);
  const tl_define small[] = {{"BT", 4}, {"D", 16}, {"HALF", 8}};
  c = compile_example("rope.tile", small, 3);
  run_rope(c, 13, 2, 16, 3910);
  compiled_free(c);
}

/* ---- swiglu ------------------------------------------------------------------------------------------ */
static void run_swiglu(compiled *c, int64_t R, int64_t C, uint64_t seed) {
  tl_func *f = kernel(c, "swiglu");
  int64_t s2[2] = {R, C};
  tl_arg a[3] = {targ(TL_BF16, 2, s2), targ(TL_BF16, 2, s2), targ(TL_BF16, 2, s2)};
  rng g = {seed};
  tfill_random(&a[0], &g, -6, 6);
  tfill_random(&a[1], &g, -2, 2);
  tpoison(&a[2]);
  interpret(f, a, 3);
  double *ref = dalloc(R * C);
  for (int64_t i = 0; i < R * C; i++) {
    double x = tget_f(&a[0], i);
    ref[i] = x / (1 + exp(-x)) * tget_f(&a[1], i);
  }
  char what[64];
  snprintf(what, sizeof what, "swiglu R=%lld C=%lld", (long long)R, (long long)C);
  check_close(what, &a[2], ref, NULL, BF16_RTOL, 0);
  free(ref);
  for (int i = 0; i < 3; i++) free(a[i].data);
}

static void example_swiglu(void) {
  compiled *c = compile_example("swiglu.tile", NULL, 0);
  const int64_t sizes[][2] = {{1, 1}, {15, 255}, {17, 257}, {31, 600}};
  for (int i = 0; i < 4; i++) run_swiglu(c, sizes[i][0], sizes[i][1], 4000 + i);
  compiled_free(c);
}

/* ---- decode attention over a paged cache, split-KV (attn_decode.tile) ------------------------ */
/* Pages placed in a scrambled order; rows of a page past the sequence's end and a spare page hold
 * NaN (a read without masking shows); the two kernels run in sequence (the scratch poisoned). */
static void run_decode(compiled *c, int64_t B, int64_t HKV, int64_t G, int64_t PAGE, int64_t BT, const int64_t *lens,
                       int64_t NS, uint64_t seed) {
  const int64_t D = 16;
  int64_t maxlen = 0, MAXP = 1, NP = 1;
  for (int64_t b = 0; b < B; b++) {
    if (lens[b] > maxlen) maxlen = lens[b];
    int64_t np = (lens[b] + PAGE - 1) / PAGE;
    if (np > MAXP) MAXP = np;
    NP += np;
  }
  int64_t chunk = ((maxlen + NS - 1) / NS + BT - 1) / BT * BT;
  if (chunk < BT) chunk = BT;
  int64_t sq[4] = {B, HKV, G, D}, sk[4] = {NP, HKV, PAGE, D}, st[2] = {B, MAXP}, so[4] = {B * HKV, NS, G, D},
          sl[3] = {B * HKV, NS, G};
  tl_arg a[9] = {targ(TL_BF16, 4, sq), targ(TL_BF16, 4, sk), targ(TL_BF16, 4, sk), targ(TL_I32, 2, st),
                 targ(TL_I32, 1, &B), targ(TL_F32, 4, so), targ(TL_F32, 3, sl)};
  rng g = {seed};
  tfill_random(&a[0], &g, -1, 1);
  tpoison(&a[1]);
  tpoison(&a[2]);
  int32_t *table = a[3].data, *len = a[4].data;
  for (int64_t i = 0; i < B * MAXP; i++) table[i] = -1;
  int64_t next = 0;
  for (int64_t b = 0; b < B; b++) {
    len[b] = (int32_t)lens[b];
    for (int64_t j = 0; j * PAGE < lens[b]; j++, next++) {
      int64_t pg = (next * 7 + 3) % NP; /* NP - 1 pages used, 7 coprime with NP below: scrambled */
      table[b * MAXP + j] = (int32_t)pg;
      for (int64_t h = 0; h < HKV; h++)
        for (int64_t t = 0; t < PAGE && j * PAGE + t < lens[b]; t++)
          for (int64_t d = 0; d < D; d++) {
            int64_t i = ((pg * HKV + h) * PAGE + t) * D + d;
            tset_f(&a[1], i, rng_uniform(&g, -1, 1));
            tset_f(&a[2], i, rng_uniform(&g, -1, 1));
          }
    }
  }
  tpoison(&a[5]);
  tpoison(&a[6]);
  double scale = 0.25;
  a[7] = sarg_f(scale);
  a[8] = sarg_i(chunk);
  interpret(kernel(c, "attn_decode_paged"), a, 9);
  tl_arg o = targ(TL_BF16, 4, sq);
  tpoison(&o);
  tl_arg ca[3] = {a[5], a[6], o};
  interpret(kernel(c, "attn_decode_combine"), ca, 3);
  int64_t n = B * HKV * G * D;
  double *ref = dalloc(n), *sc = dalloc(n), *p = dalloc(maxlen);
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < HKV; h++)
      for (int64_t gq = 0; gq < G; gq++) {
        int64_t qi = ((b * HKV + h) * G + gq) * D;
        double mx = -INFINITY, l = 0;
        for (int64_t t = 0; t < lens[b]; t++) {
          int64_t kbase = (((int64_t)table[b * MAXP + t / PAGE] * HKV + h) * PAGE + t % PAGE) * D;
          double s = 0;
          for (int64_t d = 0; d < D; d++) s += (double)tget_f(&a[0], qi + d) * tget_f(&a[1], kbase + d);
          p[t] = s * (double)(float)scale;
          if (p[t] > mx) mx = p[t];
        }
        for (int64_t t = 0; t < lens[b]; t++) l += (p[t] = exp(p[t] - mx));
        for (int64_t d = 0; d < D; d++) {
          double acc = 0, vmax = 0;
          for (int64_t t = 0; t < lens[b]; t++) {
            double v = tget_f(&a[2], (((int64_t)table[b * MAXP + t / PAGE] * HKV + h) * PAGE + t % PAGE) * D + d);
            acc += p[t] * v;
            if (fabs(v) > vmax) vmax = fabs(v);
          }
          ref[qi + d] = lens[b] ? acc / l : 0; /* an empty sequence gives 0 */
          sc[qi + d] = vmax;                   /* p is rounded to bf16 before the second dot */
        }
      }
  char what[160];
  snprintf(what, sizeof what, "attn_decode B=%lld HKV=%lld G=%lld PAGE=%lld BT=%lld NS=%lld", (long long)B,
           (long long)HKV, (long long)G, (long long)PAGE, (long long)BT, (long long)NS);
  check_close(what, &o, ref, sc, BF16_RTOL, 0x1p-7);
  /* the contiguous-cache kernel on the same keys and values, laid out [B, HKV, S, D], NaN past the ends */
  int64_t S = maxlen + 3, sc4[4] = {B, HKV, S, D};
  tl_arg kc = targ(TL_BF16, 4, sc4), vc = targ(TL_BF16, 4, sc4);
  tpoison(&kc);
  tpoison(&vc);
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < HKV; h++)
      for (int64_t t = 0; t < lens[b]; t++)
        for (int64_t d = 0; d < D; d++) {
          int64_t from = (((int64_t)table[b * MAXP + t / PAGE] * HKV + h) * PAGE + t % PAGE) * D + d;
          tset_f(&kc, ((b * HKV + h) * S + t) * D + d, tget_f(&a[1], from));
          tset_f(&vc, ((b * HKV + h) * S + t) * D + d, tget_f(&a[2], from));
        }
  tpoison(&a[5]);
  tpoison(&a[6]);
  tpoison(&o);
  tl_arg ka[8] = {a[0], kc, vc, a[4], a[5], a[6], a[7], a[8]};
  interpret(kernel(c, "attn_decode_contig"), ka, 8);
  interpret(kernel(c, "attn_decode_combine"), ca, 3);
  strcat(what, " contig");
  check_close(what, &o, ref, sc, BF16_RTOL, 0x1p-7);
  /* attn_decode_fused: the same split in one launch, the last program of a head merging (the
   * interpreter runs programs in grid order: split NS - 1 is last); its scratch poisoned,
   * the counts zero before, and zero again after (run twice: the second launch reuses them) */
  int64_t sc1 = B * HKV;
  tl_func *fused = kernel(c, "attn_decode_fused");
  cr_assert(!strcmp(fused->params.data[8].name, "Count") && fused->params.data[8].zeroed, "@zeroed(Count)");
  for (int i = 0; i < fused->params.len; i++) cr_assert(i == 8 || !fused->params.data[i].zeroed);
  tl_arg op2 = targ(TL_F32, 4, so), lse2 = targ(TL_F32, 3, sl), cnt = targ(TL_I32, 1, &sc1);
  for (int rep = 0; rep < 2; rep++) {
    tpoison(&op2);
    tpoison(&lse2);
    tpoison(&o);
    tl_arg fa[11] = {a[0], a[1], a[2], a[3], a[4], op2, lse2, o, cnt, a[7], a[8]};
    interpret(kernel(c, "attn_decode_fused"), fa, 11);
    what[strlen(what) - 7] = 0;
    strcat(what, rep ? " fused2" : " fused1");
    check_close(what, &o, ref, sc, BF16_RTOL, 0x1p-7);
    for (int64_t i = 0; i < B * HKV; i++)
      cr_assert_eq(((int32_t *)cnt.data)[i], 0, "%s: count %lld is %d after the launch", what, (long long)i,
                   ((int32_t *)cnt.data)[i]);
  }
  free(op2.data);
  free(lse2.data);
  free(cnt.data);
  free(kc.data);
  free(vc.data);
  free(ref);
  free(sc);
  free(p);
  free(o.data);
  for (int i = 0; i < 7; i++) free(a[i].data);
}

static void example_attn_decode(void) {
  const tl_define defs[] = {{"D", 16}, {"BT", 16}};
  compiled *c = compile_example("attn_decode.tile", defs, 2);
  const int64_t l1[] = {1, 15, 17, 100}, l2[] = {0, 33}, l3[] = {131, 64, 5}, l4[] = {300, 1, 47};
  run_decode(c, 4, 2, 4, 16, 16, l1, 3, 4100);  /* GQA 4, page = tile */
  run_decode(c, 2, 1, 8, 32, 16, l2, 4, 4101);  /* MQA-like, an empty sequence, empty splits */
  run_decode(c, 3, 3, 1, 64, 16, l3, 2, 4102);  /* MHA, pages of 4 tiles */
  run_decode(c, 3, 2, 6, 16, 16, l4, 19, 4103); /* G 6 > GC (two merge rounds), NS 19 > BS (two), 1-tile splits */
  compiled_free(c);
}

/* ---- embedding_rmsnorm (a gather) ---------------------------------------------------------------- */
static void run_embedding_rmsnorm(compiled *c, int64_t T, int64_t V, int64_t D, uint64_t seed) {
  tl_func *f = kernel(c, "embedding_rmsnorm");
  int64_t se[2] = {V, D}, sy[2] = {T, D};
  tl_arg a[5] = {targ(TL_I32, 1, &T), targ(TL_BF16, 2, se), targ(TL_BF16, 1, &D), targ(TL_BF16, 2, sy)};
  rng g = {seed};
  int32_t *ids = a[0].data;
  for (int64_t t = 0; t < T; t++) ids[t] = (int32_t)(rng_u64(&g) % (uint64_t)(V + 4)) - 2; /* some outside [0, V) */
  tfill_random(&a[1], &g, -3, 3);
  tfill_random(&a[2], &g, 0.5, 1.5);
  tpoison(&a[3]);
  double eps = 1e-5;
  a[4] = sarg_f(eps);
  interpret(f, a, 5);
  double *ref = dalloc(T * D);
  for (int64_t t = 0; t < T; t++) {
    int32_t id = ids[t];
    if (id < 0 || id >= V) continue; /* a zero row: the reference stays 0 */
    double ss = 0;
    for (int64_t j = 0; j < D; j++) ss += (double)tget_f(&a[1], id * D + j) * tget_f(&a[1], id * D + j);
    double inv = 1 / sqrt(ss / (double)D + (double)(float)eps);
    for (int64_t j = 0; j < D; j++) ref[t * D + j] = tget_f(&a[1], id * D + j) * inv * tget_f(&a[2], j);
  }
  char what[96];
  snprintf(what, sizeof what, "embedding_rmsnorm T=%lld V=%lld D=%lld", (long long)T, (long long)V, (long long)D);
  check_close(what, &a[3], ref, NULL, BF16_RTOL + (double)D * 0x1p-24, 0);
  free(ref);
  for (int i = 0; i < 4; i++) free(a[i].data);
}

static void example_embedding_rmsnorm(void) {
  compiled *c = compile_example("embedding_rmsnorm.tile", NULL, 0);
  const int64_t sizes[][3] = {{1, 1, 1}, {3, 7, 127}, {17, 5, 4096}, {40, 100, 1000}};
  for (int i = 0; i < 4; i++) run_embedding_rmsnorm(c, sizes[i][0], sizes[i][1], sizes[i][2], 4100 + i);
  compiled_free(c);
}

/* ---- cross_entropy (online logsumexp over chunks, a scalar gather) ------------------------------------ */
static void run_cross_entropy(compiled *c, int64_t R, int64_t V, uint64_t seed) {
  tl_func *f = kernel(c, "cross_entropy");
  int64_t sx[2] = {R, V};
  tl_arg a[3] = {targ(TL_BF16, 2, sx), targ(TL_I32, 1, &R), targ(TL_F32, 1, &R)};
  rng g = {seed};
  tfill_random(&a[0], &g, -8, 8);
  int32_t *t = a[1].data;
  for (int64_t r = 0; r < R; r++) {
    uint64_t u = rng_u64(&g);
    t[r] = u % 7 == 0 ? -100 : u % 7 == 1 ? (int32_t)V : (int32_t)(u % (uint64_t)V); /* some ignored */
  }
  tpoison(&a[2]);
  interpret(f, a, 3);
  double *ref = dalloc(R), *mag = dalloc(R);
  for (int64_t r = 0; r < R; r++) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < V; j++) mx = fmax(mx, tget_f(&a[0], r * V + j));
    for (int64_t j = 0; j < V; j++) sum += exp(tget_f(&a[0], r * V + j) - mx);
    bool ok = t[r] >= 0 && t[r] < V;
    ref[r] = ok ? mx + log(sum) - tget_f(&a[0], r * V + t[r]) : 0;
    mag[r] = 1 + fabs(mx) + log(sum) + (ok ? fabs(tget_f(&a[0], r * V + t[r])) : 0);
  }
  char what[64];
  snprintf(what, sizeof what, "cross_entropy R=%lld V=%lld", (long long)R, (long long)V);
  /* f32: a V-term sum of exp (each within 2^-22 relative), its log, two additions */
  check_close(what, &a[2], ref, mag, 0, (double)(V + 64) * 0x1p-24);
  free(ref);
  free(mag);
  for (int i = 0; i < 3; i++) free(a[i].data);
}

static void example_cross_entropy(void) {
  compiled *c = compile_example("cross_entropy.tile", NULL, 0);
  const int64_t sizes[][2] = {{1, 1}, {3, 4095}, {9, 4097}, {2, 128256}};
  for (int i = 0; i < 4; i++) run_cross_entropy(c, sizes[i][0], sizes[i][1], 4300 + i);
  compiled_free(c);
}

/* ---- dropout_residual (rand) ------------------------------------------------------------------------ */
static void run_dropout_residual(compiled *c, int64_t R, int64_t C, double p, int64_t seed) {
  tl_func *f = kernel(c, "dropout_residual");
  int64_t s2[2] = {R, C};
  tl_arg a[5] = {targ(TL_BF16, 2, s2), targ(TL_BF16, 2, s2), targ(TL_BF16, 2, s2)};
  rng g = {(uint64_t)seed ^ 0x9e37};
  tfill_random(&a[0], &g, -3, 3);
  tfill_random(&a[1], &g, -3, 3);
  tpoison(&a[2]);
  a[3] = sarg_f(p);
  a[4] = sarg_i(seed);
  interpret(f, a, 5);
  float pf = (float)p;
  double scale = 1.0 / (1.0 - (double)pf);
  double *ref = dalloc(R * C), *mag = dalloc(R * C);
  uint32_t key[2] = {(uint32_t)(uint64_t)seed, (uint32_t)((uint64_t)seed >> 32)};
  int64_t kept = 0;
  for (int64_t i = 0; i < R * C; i++) {
    /* the mask by its definition (docs/language.md "Random numbers") */
    uint32_t ctr[4] = {(uint32_t)i / 4, 0, 0, 0}, w[4];
    tl_philox4x32_10(ctr, key, w);
    bool keep = (double)(w[i % 4] >> 8) * 0x1p-24 >= pf;
    double x = tget_f(&a[0], i), res = tget_f(&a[1], i);
    ref[i] = res + (keep ? x * scale : 0);
    mag[i] = fabs(res) + (keep ? fabs(x * scale) : 0);
    kept += keep;
    if (!keep) cr_assert(tget_f(&a[2], i) == (float)res, "dropped element %lld is not Res exactly", (long long)i);
  }
  char what[96];
  snprintf(what, sizeof what, "dropout_residual R=%lld C=%lld p=%g (kept %lld)", (long long)R, (long long)C, p,
           (long long)kept);
  check_close(what, &a[2], ref, mag, BF16_RTOL, 0x1p-21);
  if (R * C >= 4096) /* the keep rate: 6 sigma of a binomial */
    cr_assert(fabs((double)kept - (1 - pf) * (double)(R * C)) < 6 * sqrt((double)(R * C) * pf * (1 - pf)) + 1,
              "%s: keep rate off", what);
  free(ref);
  free(mag);
  for (int i = 0; i < 3; i++) free(a[i].data);
}

static void example_dropout_residual(void) {
  compiled *c = compile_example("dropout_residual.tile", NULL, 0);
  run_dropout_residual(c, 1, 1, 0.5, 0);
  run_dropout_residual(c, 5, 513, 0.1, 42);
  run_dropout_residual(c, 37, 1000, 0.5, -3);
  run_dropout_residual(c, 9, 2049, 0.9, 0x1234567890LL);
  compiled_free(c);
}

/* ---- splitk_gemm (atomics) -------------------------------------------------------------------------- */
static void run_splitk_gemm(compiled *c, int64_t M, int64_t N, int64_t K, int64_t split, uint64_t seed) {
  tl_func *f = kernel(c, "splitk_gemm");
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
  tl_arg a[3] = {targ(TL_BF16, 2, sa), targ(TL_BF16, 2, sb), targ(TL_F32, 2, sc)};
  rng g = {seed};
  tfill_random(&a[0], &g, -1, 1);
  tfill_random(&a[1], &g, -1, 1);
  tfill_random(&a[2], &g, -1, 1); /* the bias C holds on entry */
  double *ref = dalloc(M * N), *scale = dalloc(M * N);
  for (int64_t i = 0; i < M * N; i++) ref[i] = tget_f(&a[2], i), scale[i] = fabs(ref[i]);
  interpret(f, a, 3);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++)
      for (int64_t k = 0; k < K; k++) {
        double p = (double)tget_f(&a[0], i * K + k) * tget_f(&a[1], k * N + j);
        ref[i * N + j] += p;
        scale[i * N + j] += fabs(p);
      }
  char what[128];
  snprintf(what, sizeof what, "splitk_gemm M=%lld N=%lld K=%lld SPLIT=%lld", (long long)M, (long long)N, (long long)K,
           (long long)split);
  /* f32 sums: K products per chunk chain, then SPLIT atomic adds */
  check_close(what, &a[2], ref, scale, 0, (double)(K + split + 1) * 0x1p-23);
  free(ref);
  free(scale);
  for (int i = 0; i < 3; i++) free(a[i].data);
}

static void example_splitk_gemm(void) {
  compiled *c = compile_example("splitk_gemm.tile", NULL, 0);
  const int64_t sizes[][3] = {{1, 1, 1}, {16, 65, 257}, {70, 33, 1000}, {5, 130, 96}};
  for (int i = 0; i < 4; i++) run_splitk_gemm(c, sizes[i][0], sizes[i][1], sizes[i][2], 4, 4200 + i);
  compiled_free(c);
  const tl_define d[] = {{"SPLIT", 3}, {"BM", 16}, {"BN", 32}};
  c = compile_example("splitk_gemm.tile", d, 3);
  run_splitk_gemm(c, 17, 31, 301, 3, 4210);
  compiled_free(c);
}

/* ---- attention backward (attn_bwd.tile): the four kernels in sequence against a double reference ---- */
/* every output written and ||got - ref|| / ||ref|| within tol (P and dS are rounded to bf16 before
 * their products, as in FlashAttention-2: about 2^-8 relative each) */
static void check_norm(const char *what, const tl_arg *out, const double *ref, double tol) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < targ_numel(out); i++) {
    double got = tget_f(out, i);
    cr_assert(!isnan(got), "%s: element %lld not written (or NaN)", what, (long long)i);
    num += (got - ref[i]) * (got - ref[i]);
    den += ref[i] * ref[i];
  }
  double e = sqrt(num / (den > 0 ? den : 1));
  cr_assert(e <= tol, "%s: relative error %.3g > %.3g", what, e, tol);
  cr_log_info("%s: relative error %.3g (tolerance %.3g)", what, e, tol);
}

/* cf != NULL: the backward in one pass (bench/variants/attn_bwd_fused.tile: pre with the f32 dQ
 * accumulator zeroed, dK / dV with dQ's partials added by atomic_add, the cast) after c's forward */
static void run_attn_bwd(compiled *c, compiled *cf, int causal, int64_t Z, int64_t H, int64_t S, int64_t D,
                         uint64_t seed) {
  int64_t sh[4] = {Z, H, S, D}, sl[3] = {Z, H, S};
  enum { Q, K, V, O, DO, LSE, DL, DQ, DK, DV, NT };
  tl_arg t[NT];
  for (int i = 0; i < NT; i++) t[i] = i == LSE || i == DL ? targ(TL_F32, 3, sl) : targ(TL_BF16, 4, sh);
  rng g = {seed};
  for (int i = Q; i <= V; i++) tfill_random(&t[i], &g, -1, 1);
  tfill_random(&t[DO], &g, -1, 1);
  for (int i = O; i < NT; i++)
    if (i != DO) tpoison(&t[i]);
  double scale = 1.0 / sqrt((double)D);
  tl_arg fa[6] = {t[Q], t[K], t[V], t[O], t[LSE], sarg_f(scale)};
  interpret(kernel(c, "attn_fwd_lse"), fa, 6);
  tl_arg acc = {0};
  if (cf) {
    acc = targ(TL_F32, 4, sh);
    tpoison(&acc);
    tl_arg pa[4] = {t[O], t[DO], t[DL], acc};
    interpret(kernel(cf, "attn_bwd_pre_dq"), pa, 4);
    tl_arg ka[10] = {t[Q], t[K], t[V], t[DO], t[LSE], t[DL], t[DK], t[DV], acc, sarg_f(scale)};
    interpret(kernel(cf, "attn_bwd_fused"), ka, 10);
    tl_arg qa[2] = {acc, t[DQ]};
    interpret(kernel(cf, "attn_bwd_dq_cast"), qa, 2);
  } else {
    tl_arg pa[3] = {t[O], t[DO], t[DL]};
    interpret(kernel(c, "attn_bwd_pre"), pa, 3);
    tl_arg ka[9] = {t[Q], t[K], t[V], t[DO], t[LSE], t[DL], t[DK], t[DV], sarg_f(scale)};
    interpret(kernel(c, "attn_bwd_dkdv"), ka, 9);
    tl_arg qa[8] = {t[Q], t[K], t[V], t[DO], t[LSE], t[DL], t[DQ], sarg_f(scale)};
    interpret(kernel(c, "attn_bwd_dq"), qa, 8);
  }
  int64_t n = Z * H * S * D;
  double *rq = dalloc(n), *rk = dalloc(n), *rv = dalloc(n), *ro = dalloc(n), *P = dalloc(S * S), *dS = dalloc(S * S);
  double sc = (double)(float)scale;
  for (int64_t zh = 0; zh < Z * H; zh++) {
    int64_t b = zh * S * D;
#define E(T, i, d) ((double)tget_f(&t[T], b + (i) * D + (d)))
    for (int64_t i = 0; i < S; i++) {
      int64_t jmax = causal ? i + 1 : S;
      double mx = -INFINITY, l = 0;
      for (int64_t j = 0; j < jmax; j++) {
        double x = 0;
        for (int64_t d = 0; d < D; d++) x += E(Q, i, d) * E(K, j, d);
        P[i * S + j] = x * sc;
        if (P[i * S + j] > mx) mx = P[i * S + j];
      }
      for (int64_t j = 0; j < jmax; j++) l += (P[i * S + j] = exp(P[i * S + j] - mx));
      for (int64_t j = 0; j < S; j++) P[i * S + j] = j < jmax ? P[i * S + j] / l : 0;
      for (int64_t d = 0; d < D; d++) {
        double o = 0;
        for (int64_t j = 0; j < jmax; j++) o += P[i * S + j] * E(V, j, d);
        ro[b + i * D + d] = o;
      }
    }
    for (int64_t i = 0; i < S; i++) {
      double Di = 0;
      for (int64_t d = 0; d < D; d++) Di += E(DO, i, d) * ro[b + i * D + d];
      for (int64_t j = 0; j < S; j++) {
        double dp = 0;
        for (int64_t d = 0; d < D; d++) dp += E(DO, i, d) * E(V, j, d);
        dS[i * S + j] = P[i * S + j] * (dp - Di);
      }
    }
    for (int64_t i = 0; i < S; i++)
      for (int64_t d = 0; d < D; d++) {
        double aq = 0, ak = 0, av = 0;
        for (int64_t j = 0; j < S; j++) {
          aq += dS[i * S + j] * E(K, j, d);
          ak += dS[j * S + i] * E(Q, j, d);
          av += P[j * S + i] * E(DO, j, d);
        }
        rq[b + i * D + d] = aq * sc;
        rk[b + i * D + d] = ak * sc;
        rv[b + i * D + d] = av;
      }
#undef E
  }
  char what[128];
  snprintf(what, sizeof what, "attn_bwd%s causal=%d Z=%lld H=%lld S=%lld D=%lld", cf ? " (one pass)" : "", causal,
           (long long)Z, (long long)H, (long long)S, (long long)D);
  char w2[160];
  snprintf(w2, sizeof w2, "%s O", what);
  check_norm(w2, &t[O], ro, 5e-3);
  snprintf(w2, sizeof w2, "%s dV", what);
  check_norm(w2, &t[DV], rv, 1e-2);
  snprintf(w2, sizeof w2, "%s dK", what);
  check_norm(w2, &t[DK], rk, 1e-2);
  snprintf(w2, sizeof w2, "%s dQ", what);
  check_norm(w2, &t[DQ], rq, 1e-2);
  free(rq); free(rk); free(rv); free(ro); free(P); free(dS);
  for (int i = 0; i < NT; i++) free(t[i].data);
  free(acc.data);
}

static void example_attn_bwd(void) {
  for (int causal = 0; causal < 2; causal++) {
    const tl_define defs[] = {{"CAUSAL", causal}, {"BM", 16}, {"BN", 16}, {"D", 16}};
    compiled *c = compile_example("attn_bwd.tile", defs, 4);
    const int64_t ss[] = {1, 15, 17, 47};
    for (int i = 0; i < 4; i++) run_attn_bwd(c, NULL, causal, 1, 2, ss[i], 16, 5000 + causal * 8 + i);
    /* the one-pass form (bench/variants/attn_bwd_fused.tile), key blocks of 32 over query blocks of
     * 16 as its D128 tiles (128 keys, 64 queries) */
    const tl_define fdefs[] = {{"CAUSAL", causal}, {"BM", 16}, {"BN", 32}, {"D", 16}};
    compiled *cf = compile_example("../bench/variants/attn_bwd_fused.tile", fdefs, 4);
    for (int i = 0; i < 4; i++) run_attn_bwd(c, cf, causal, 2, 2, ss[i], 16, 5100 + causal * 8 + i);
    compiled_free(cf);
    compiled_free(c);
  }
}

/* ---- rmsnorm_bwd: dX per row, dW reduced across programs with atomics ------------------------- */
static void run_rmsnorm_bwd(compiled *c, int64_t R, int64_t C, uint64_t seed) {
  int64_t s2[2] = {R, C};
  tl_arg a[6] = {targ(TL_BF16, 2, s2), targ(TL_BF16, 1, &C), targ(TL_BF16, 2, s2), targ(TL_BF16, 2, s2),
                 targ(TL_F32, 1, &C)};
  rng g = {seed};
  tfill_random(&a[0], &g, -2, 2);
  tfill_random(&a[1], &g, 0.5, 1.5);
  tfill_random(&a[2], &g, -1, 1);
  tpoison(&a[3]);
  memset(a[4].data, 0, sizeof(float) * (size_t)C); /* dW accumulates into zeros */
  double eps = 1e-5;
  a[5] = sarg_f(eps);
  interpret(kernel(c, "rmsnorm_bwd"), a, 6);
  double *rdx = dalloc(R * C), *sdx = dalloc(R * C), *rdw = dalloc(C), *sdw = dalloc(C);
  for (int64_t r = 0; r < R; r++) {
    double ss = 0, gx = 0, sgx = 0;
    for (int64_t j = 0; j < C; j++) {
      double x = tget_f(&a[0], r * C + j), gj = (double)tget_f(&a[2], r * C + j) * tget_f(&a[1], j);
      ss += x * x;
      gx += gj * x;
      sgx += fabs(gj * x);
    }
    double inv = 1 / sqrt(ss / (double)C + (double)(float)eps);
    for (int64_t j = 0; j < C; j++) {
      double x = tget_f(&a[0], r * C + j), dy = tget_f(&a[2], r * C + j), gj = dy * tget_f(&a[1], j);
      rdx[r * C + j] = inv * (gj - x * inv * inv * gx / (double)C);
      sdx[r * C + j] = inv * (fabs(gj) + fabs(x) * inv * inv * sgx / (double)C);
      rdw[j] += dy * x * inv;
      sdw[j] += fabs(dy * x * inv);
    }
  }
  char what[96];
  snprintf(what, sizeof what, "rmsnorm_bwd dX R=%lld C=%lld", (long long)R, (long long)C);
  check_close(what, &a[3], rdx, sdx, BF16_RTOL, (double)C * 0x1p-22);
  snprintf(what, sizeof what, "rmsnorm_bwd dW R=%lld C=%lld", (long long)R, (long long)C);
  check_close(what, &a[4], rdw, sdw, 0x1p-20, (double)(R + C) * 0x1p-22);
  free(rdx); free(sdx); free(rdw); free(sdw);
  for (int i = 0; i < 5; i++) free(a[i].data);
}

static void example_rmsnorm_bwd(void) {
  const tl_define defs[] = {{"BR", 4}, {"BC", 256}};
  compiled *c = compile_example("rmsnorm_bwd.tile", defs, 2);
  const int64_t sizes[][2] = {{1, 1}, {3, 255}, {9, 256}, {37, 100}};
  for (int i = 0; i < 4; i++) run_rmsnorm_bwd(c, sizes[i][0], sizes[i][1], 3700 + i);
  compiled_free(c);
}

/* ---- moe_permute / moe_unpermute: gathers into expert order and back with routing weights ------- */
static void run_moe(compiled *c, int64_t T, int64_t K, int64_t D, uint64_t seed) {
  int64_t N = T * K + 3; /* three padding slots (Src = -1) */
  int64_t sx[2] = {T, D}, sy[2] = {N, D}, sk[2] = {T, K};
  tl_arg a[3] = {targ(TL_BF16, 2, sx), targ(TL_I32, 1, &N), targ(TL_BF16, 2, sy)};
  rng g = {seed};
  tfill_random(&a[0], &g, -2, 2);
  int32_t *src = a[1].data;
  for (int64_t j = 0; j < N; j++) src[j] = -1;
  tl_arg slot = targ(TL_I32, 2, sk), wt = targ(TL_F32, 2, sk), o = targ(TL_BF16, 2, sx);
  int32_t *sl = slot.data;
  /* token t's k-th choice goes to slot (t * K + k) * 5 % (T * K) (5 coprime with T * K below) */
  for (int64_t t = 0; t < T; t++)
    for (int64_t k = 0; k < K; k++) {
      int64_t j = (t * K + k) * 5 % (T * K);
      src[j] = (int32_t)t;
      sl[t * K + k] = (int32_t)j;
      tset_f(&wt, t * K + k, rng_uniform(&g, 0, 1));
    }
  tpoison(&a[2]);
  interpret(kernel(c, "moe_permute"), a, 3);
  for (int64_t j = 0; j < N; j++)
    for (int64_t d = 0; d < D; d++) {
      float want = src[j] < 0 ? 0.0f : tget_f(&a[0], src[j] * D + d), got = tget_f(&a[2], j * D + d);
      cr_assert(got == want, "moe_permute T=%lld K=%lld: Y[%lld, %lld] = %g, want %g", (long long)T, (long long)K,
                (long long)j, (long long)d, got, want);
    }
  tpoison(&o);
  tl_arg ua[4] = {a[2], slot, wt, o};
  interpret(kernel(c, "moe_unpermute"), ua, 4);
  double *ref = dalloc(T * D), *sc = dalloc(T * D);
  for (int64_t t = 0; t < T; t++)
    for (int64_t k = 0; k < K; k++)
      for (int64_t d = 0; d < D; d++) {
        double p = (double)tget_f(&wt, t * K + k) * tget_f(&a[2], sl[t * K + k] * D + d);
        ref[t * D + d] += p;
        sc[t * D + d] += fabs(p);
      }
  char what[96];
  snprintf(what, sizeof what, "moe_unpermute T=%lld K=%lld D=%lld", (long long)T, (long long)K, (long long)D);
  check_close(what, &o, ref, sc, BF16_RTOL, (double)(K + 1) * 0x1p-23);
  free(ref); free(sc); free(slot.data); free(wt.data); free(o.data);
  for (int i = 0; i < 3; i++) free(a[i].data);
}

static void example_moe_permute(void) {
  const tl_define defs[] = {{"BD", 128}};
  compiled *c = compile_example("moe_permute.tile", defs, 1);
  run_moe(c, 7, 2, 100, 3800);  /* T * K = 14 */
  run_moe(c, 3, 1, 128, 3801);  /* top-1 */
  run_moe(c, 9, 4, 33, 3802);   /* T * K = 36 */
  compiled_free(c);
}

/* ---- llama/qkv_split_rope: QKV heads split, q and k rotated, v copied ----------------------------- */
static void run_qkv_split_rope(compiled *c, int64_t T, int64_t HQ, int64_t HKV, uint64_t seed) {
  const int64_t D = 16, HALF = 8, NH = HQ + 2 * HKV;
  int64_t sx[3] = {T, NH, D}, st[2] = {T, HALF}, sq[3] = {T, HQ, D}, sk[3] = {T, HKV, D};
  tl_arg a[6] = {targ(TL_BF16, 3, sx), targ(TL_F32, 2, st), targ(TL_F32, 2, st), targ(TL_BF16, 3, sq),
                 targ(TL_BF16, 3, sk), targ(TL_BF16, 3, sk)};
  rng g = {seed};
  tfill_random(&a[0], &g, -2, 2);
  for (int64_t i = 0; i < T * HALF; i++) {
    double ang = rng_uniform(&g, -3.14, 3.14);
    tset_f(&a[1], i, cos(ang));
    tset_f(&a[2], i, sin(ang));
  }
  for (int i = 3; i < 6; i++) tpoison(&a[i]);
  interpret(kernel(c, "qkv_split_rope"), a, 6);
  for (int64_t t = 0; t < T; t++)
    for (int64_t j = 0; j < NH; j++)
      for (int64_t d = 0; d < D; d++) {
        double x = tget_f(&a[0], (t * NH + j) * D + d), want;
        if (j < HQ + HKV) {
          int64_t h = d % HALF;
          double cs = tget_f(&a[1], t * HALF + h), sn = tget_f(&a[2], t * HALF + h);
          double x1 = tget_f(&a[0], (t * NH + j) * D + h), x2 = tget_f(&a[0], (t * NH + j) * D + HALF + h);
          want = d < HALF ? x1 * cs - x2 * sn : x2 * cs + x1 * sn;
        } else {
          want = x;
        }
        const tl_arg *out = j < HQ ? &a[3] : j < HQ + HKV ? &a[4] : &a[5];
        int64_t hh = j < HQ ? j : j < HQ + HKV ? j - HQ : j - HQ - HKV, nh = j < HQ ? HQ : HKV;
        double got = tget_f(out, (t * nh + hh) * D + d);
        double tol = j < HQ + HKV ? BF16_RTOL * fabs(want) + 0x1p-20 * (fabs(x) + 4) : 0;
        cr_assert(fabs(got - want) <= tol, "qkv_split_rope T=%lld: token %lld head %lld d %lld: %g, want %g",
                  (long long)T, (long long)t, (long long)j, (long long)d, got, want);
      }
  for (int i = 0; i < 6; i++) free(a[i].data);
}

static void example_qkv_split_rope(void) {
  const tl_define defs[] = {{"D", 16}, {"HALF", 8}};
  compiled *c = compile_example("llama/qkv_split_rope.tile", defs, 2);
  run_qkv_split_rope(c, 37, 4, 2, 3900);  /* GQA 2 */
  run_qkv_split_rope(c, 16, 2, 2, 3901);  /* MHA, one token block */
  run_qkv_split_rope(c, 1, 8, 1, 3902);   /* MQA, one token */
  compiled_free(c);
}

/* ---- moe_gemm: grouped GEMM over expert segments padded to BM rows ------------------------------ */
/* E experts with seg[e] tokens each (some zero); X holds the segments in expert order, each padded
 * with zero rows to a multiple of BM; tiles past the last segment get expert -1 (zero weights). */
static void run_moe_gemm(compiled *c, int64_t BM, int64_t E, const int64_t *seg, int64_t extra_tiles, int64_t N,
                         int64_t K, uint64_t seed) {
  int64_t M = 0;
  for (int64_t e = 0; e < E; e++) M += (seg[e] + BM - 1) / BM * BM;
  int64_t T = M / BM + extra_tiles;
  M += extra_tiles * BM;
  int64_t sx[2] = {M, K}, sw[3] = {E, N, K}, sy[2] = {M, N};
  tl_arg a[4] = {targ(TL_BF16, 2, sx), targ(TL_BF16, 3, sw), targ(TL_I32, 1, &T), targ(TL_BF16, 2, sy)};
  rng g = {seed};
  tfill_random(&a[0], &g, -1, 1);
  tfill_random(&a[1], &g, -1, 1);
  int32_t *te = a[2].data;
  int64_t row = 0, t = 0;
  for (int64_t e = 0; e < E; e++) {
    int64_t padded = (seg[e] + BM - 1) / BM * BM;
    for (int64_t r = seg[e]; r < padded; r++)
      for (int64_t k = 0; k < K; k++) tset_f(&a[0], (row + r) * K + k, 0.0); /* padding rows */
    for (int64_t i = 0; i < padded / BM; i++) te[t++] = (int32_t)e;
    row += padded;
  }
  for (; t < T; t++) te[t] = -1;
  tpoison(&a[3]);
  interpret(kernel(c, "cutlass_moe_gemm"), a, 4);
  double *ref = dalloc(M * N), *scale = dalloc(M * N);
  for (int64_t i = 0; i < M; i++) {
    int32_t e = te[i / BM];
    for (int64_t j = 0; e >= 0 && j < N; j++)
      for (int64_t k = 0; k < K; k++) {
        double p = (double)tget_f(&a[0], i * K + k) * tget_f(&a[1], (e * N + j) * K + k);
        ref[i * N + j] += p;
        scale[i * N + j] += fabs(p);
      }
  }
  char what[128];
  snprintf(what, sizeof what, "cutlass_moe_gemm E=%lld M=%lld N=%lld K=%lld", (long long)E, (long long)M,
           (long long)N, (long long)K);
  check_close(what, &a[3], ref, scale, BF16_RTOL, (double)(K + 1) * 0x1p-23);
  free(ref);
  free(scale);
  for (int i = 0; i < 4; i++) free(a[i].data);
}

static void example_moe_gemm(void) {
  const tl_define small[] = {{"BM", 16}, {"BN", 32}, {"BK", 16}};
  compiled *c = compile_example("moe_gemm.tile", small, 3);
  const int64_t seg1[] = {5, 0, 33, 16}, seg2[] = {1}, seg3[] = {17, 31, 2};
  run_moe_gemm(c, 16, 4, seg1, 1, 37, 53, 4300);  /* an empty expert, a tile of padding only */
  run_moe_gemm(c, 16, 1, seg2, 0, 1, 1, 4301);
  run_moe_gemm(c, 16, 3, seg3, 2, 65, 40, 4302);
  compiled_free(c);
  c = compile_example("moe_gemm.tile", NULL, 0);    /* the shipped tiles: 128 x 256 x 64 */
  const int64_t seg4[] = {130, 7};
  run_moe_gemm(c, 128, 2, seg4, 0, 257, 65, 4303);
  compiled_free(c);
}

/* ---- topk_sample: top-k candidates per chunk (a 64-bit key sort), then top-k / top-p sampling ---- */
typedef struct vi { float v; int32_t i; } vi;
static int vi_desc(const void *x, const void *y) { /* the kernel's key order: value, then index, descending */
  const vi *a = x, *b = y;
  if (a->v != b->v) return a->v < b->v ? 1 : -1;
  return a->i < b->i ? 1 : a->i > b->i ? -1 : 0;
}
static void run_topk_sample(compiled *c, int64_t BV, int64_t KC, int64_t B, int64_t V, int32_t top_k, double top_p,
                            double temp, int64_t seed, uint64_t rseed) {
  int64_t NC = (V + BV - 1) / BV * KC;
  int64_t sl[2] = {B, V}, sc[2] = {B, NC};
  tl_arg a[2] = {targ(TL_F32, 2, sl), targ(TL_I64, 2, sc)};
  rng g = {rseed};
  tfill_random(&a[0], &g, -4, 4);
  memset(a[1].data, 0xAB, (size_t)(B * NC) * 8); /* poison */
  interpret(kernel(c, "topk_candidates"), a, 2);
  const float *lg = a[0].data;
  const int64_t *cand = a[1].data;
  vi *row = malloc(sizeof(vi) * (size_t)V);
  /* 1. every chunk's KC keys decode to that chunk's largest KC (value, index), in order */
  for (int64_t b = 0; b < B; b++)
    for (int64_t ch = 0; ch * BV < V; ch++) {
      int64_t n = V - ch * BV < BV ? V - ch * BV : BV;
      for (int64_t j = 0; j < n; j++) row[j] = (vi){lg[b * V + ch * BV + j], (int32_t)(ch * BV + j)};
      qsort(row, (size_t)n, sizeof(vi), vi_desc);
      for (int64_t j = 0; j < n && j < KC; j++) {
        int64_t key = cand[b * NC + ch * KC + j];
        int32_t hi = (int32_t)(key >> 32), bits = hi >= 0 ? hi : hi ^ 0x7fffffff;
        float v;
        memcpy(&v, &bits, 4);
        cr_assert(v == row[j].v && (int32_t)(key & 0xffffffff) == row[j].i,
                  "topk_candidates V=%lld row %lld chunk %lld rank %lld: (%g, %d), want (%g, %d)", (long long)V,
                  (long long)b, (long long)ch, (long long)j, v, (int)(key & 0xffffffff), row[j].v, row[j].i);
      }
    }
  /* 2. the sample against the same steps in double */
  tl_arg o[3] = {targ(TL_I32, 1, &B), targ(TL_F32, 1, &B)};
  tpoison(&o[0]);
  tpoison(&o[1]);
  tl_arg sa[7] = {a[1], o[0], o[1], sarg_i(top_k), sarg_f(top_p), sarg_f(temp), sarg_i(seed)};
  interpret(kernel(c, "topk_sample"), sa, 7);
  const int32_t *out = o[0].data;
  int64_t near = 0;
  uint32_t key[2] = {(uint32_t)(uint64_t)seed, (uint32_t)((uint64_t)seed >> 32)};
  for (int64_t b = 0; b < B; b++) {
    for (int64_t j = 0; j < V; j++) row[j] = (vi){lg[b * V + j], (int32_t)j};
    qsort(row, (size_t)V, sizeof(vi), vi_desc);
    int64_t k = top_k < KC ? top_k : KC;
    if (k > V) k = V;
    double e[64], sum = 0, cum = 0, kept[64], ksum = 0;
    for (int64_t j = 0; j < k; j++) sum += e[j] = exp(((double)row[j].v - row[0].v) / (float)temp);
    for (int64_t j = 0; j < k; j++) {
      double p = e[j] / sum;
      kept[j] = cum < (float)top_p ? e[j] : 0;
      cum += p;
      ksum += kept[j];
    }
    uint32_t ctr[4] = {(uint32_t)b / 4, 0, 0, 0}, w[4];
    tl_philox4x32_10(ctr, key, w);
    double u = (double)tl_rand_uniform(w[b % 4]) * ksum, acc = 0;
    int64_t pick = 0;
    bool close = false;
    for (int64_t j = 0; j < k; j++) {
      acc += kept[j];
      if (fabs(acc - u) < 1e-5 * ksum) close = true; /* f32 vs double may pick the neighbour */
      if (acc > u) { pick = j; break; }
    }
    if (close) { near++; continue; }
    cr_assert(out[b] == row[pick].i, "topk_sample V=%lld k=%d p=%g row %lld: token %d, want %d (rank %lld)",
              (long long)V, top_k, top_p, (long long)b, out[b], row[pick].i, (long long)pick);
    double pr = tget_f(&o[1], b);
    cr_assert(fabs(pr - kept[pick] / ksum) <= 1e-5, "topk_sample V=%lld row %lld pick %lld: prob %.7g, want %.7g", (long long)V, (long long)b, (long long)pick, pr,
              kept[pick] / ksum);
  }
  cr_assert(near <= B / 8 + 1, "topk_sample: %lld of %lld rows too close to call", (long long)near, (long long)B);
  free(row);
  for (int i = 0; i < 2; i++) free(a[i].data), free(o[i].data);
}

static void example_topk_sample(void) {
  const tl_define small[] = {{"BV", 256}, {"KC", 16}, {"BC", 1024}};
  compiled *c = compile_example("topk_sample.tile", small, 3);
  run_topk_sample(c, 256, 16, 5, 1000, 16, 0.9, 1.0, 7, 4400);   /* a ragged last chunk */
  run_topk_sample(c, 256, 16, 3, 9000, 5, 0.5, 0.7, -3, 4401);    /* 36 chunks */
  run_topk_sample(c, 256, 16, 4, 17, 16, 1.0, 2.0, 99, 4402);     /* fewer logits than KC */
  run_topk_sample(c, 256, 16, 9, 4096, 1, 0.8, 1.0, 5, 4403);     /* top_k = 1: greedy */
  compiled_free(c);
  c = compile_example("topk_sample.tile", NULL, 0);                /* the shipped tiles */
  run_topk_sample(c, 4096, 64, 2, 128256, 50, 0.95, 0.8, 1234, 4404);
  compiled_free(c);
}

/* ---- gemm_w4a16: int4 weights packed 8 to an i32 along K, group-wise scale and zero ---------------- */
/* The fp64 product A W (ref) and |A| |W| (scale), both zeroed M x N, of A = a[0] [M, K] and the GPTQ
 * words wq [K / 8, N] with scale a[2] and zero a[3] [K / G, N]: W = bf16(q s - z), as the kernels round
 * the dequantized weight to bf16 before the dot. */
static void w4a16_reference(const tl_arg *a, const int32_t *wq, int64_t G, int64_t M, int64_t N, int64_t K, double *ref,
                            double *scale) {
  for (int64_t k = 0; k < K; k++)
    for (int64_t j = 0; j < N; j++) {
      double q = (double)((uint32_t)wq[(k / 8) * N + j] >> (4 * (k % 8)) & 15);
      float w = tl_bits_to_float(tl_float_to_bits(tl_f64_to_f32((float)(q * tget_f(&a[2], (k / G) * N + j)) -
                                                                 tget_f(&a[3], (k / G) * N + j)), TL_BF16), TL_BF16);
      for (int64_t i = 0; i < M; i++) {
        double p = (double)tget_f(&a[0], i * K + k) * w;
        ref[i * N + j] += p;
        scale[i * N + j] += fabs(p);
      }
    }
}

/* split: gemm_w4a16_splitk (C f32, zeroed, atomically accumulated over the K splits) */
static void run_w4a16(compiled *c, int64_t G, int64_t M, int64_t N, int64_t K, uint64_t seed, bool split) {
  int64_t KW = K / 8, NG = K / G;
  int64_t sa[2] = {M, K}, sw[2] = {KW, N}, sg[2] = {NG, N}, sc[2] = {M, N};
  tl_arg a[5] = {targ(TL_BF16, 2, sa), targ(TL_I32, 2, sw), targ(TL_BF16, 2, sg), targ(TL_BF16, 2, sg),
                 targ(split ? TL_F32 : TL_BF16, 2, sc)};
  rng g = {seed};
  tfill_random(&a[0], &g, -1, 1);
  int32_t *wq = a[1].data;
  for (int64_t i = 0; i < KW * N; i++) wq[i] = (int32_t)(uint32_t)rng_u64(&g); /* every nibble 0..15 */
  tfill_random(&a[2], &g, 0.01, 0.1);
  tfill_random(&a[3], &g, -0.5, 0.5);
  if (split) memset(a[4].data, 0, (size_t)(M * N) * sizeof(float));
  else tpoison(&a[4]);
  interpret(kernel(c, split ? "gemm_w4a16_splitk" : "gemm_w4a16"), a, 5);
  double *ref = dalloc(M * N), *scale = dalloc(M * N);
  w4a16_reference(a, wq, G, M, N, K, ref, scale);
  char what[128];
  snprintf(what, sizeof what, "gemm_w4a16%s G=%lld %lldx%lldx%lld", split ? "_splitk" : "", (long long)G, (long long)M,
           (long long)N, (long long)K);
  check_close(what, &a[4], ref, scale, split ? 0 : BF16_RTOL, (double)(K + 1) * 0x1p-23);
  free(ref);
  free(scale);
  for (int i = 0; i < 5; i++) free(a[i].data);
}

static void example_gemm_w4a16(void) {
  const tl_define small[] = {{"BM", 16}, {"BN", 16}, {"BK", 32}, {"G", 64}};
  compiled *c = compile_example("gemm_w4a16.tile", small, 4);
  run_w4a16(c, 64, 1, 37, 128, 4500, false);
  run_w4a16(c, 64, 17, 15, 192, 4501, false);
  run_w4a16(c, 64, 5, 64, 64, 4502, false);
  run_w4a16(c, 64, 1, 37, 128, 4504, true);   /* SPLIT 4 of one K step each */
  run_w4a16(c, 64, 17, 15, 448, 4505, true);  /* 14 K steps: splits of 4, 4, 4, 2 */
  run_w4a16(c, 64, 5, 64, 64, 4506, true);    /* two splits without a K step */
  compiled_free(c);
  c = compile_example("gemm_w4a16.tile", NULL, 0);
  run_w4a16(c, 128, 3, 130, 512, 4503, false);
  run_w4a16(c, 128, 3, 130, 1536, 4507, true);
  compiled_free(c);
  /* the bench's split-K tile (BN 128 x8; tests/gpu/test_w4a16.py runs it with and without
   * TILEC_RING_IN_RANGE=1): programs of 0, 1 and 2 K steps, N not a multiple of BN */
  const tl_define sk8[] = {{"BN", 128}, {"SPLIT", 8}};
  c = compile_example("gemm_w4a16.tile", sk8, 2);
  run_w4a16(c, 128, 5, 200, 640, 4508, true);   /* 5 K steps: 5 splits of one, 3 without */
  run_w4a16(c, 128, 1, 130, 1408, 4509, true);  /* 11 K steps: splits of 2, 2, 2, 2, 2, 1, 0, 0 */
  compiled_free(c);
}

/* ---- w4a16_dequant.tile: the int4 weights dequantized once into a bf16 [K, N] buffer (viewed [K / 8, 8,
 * N]) for a bf16 GEMM at large M.  Checked bit for bit: ROUND 1 against the bf16 nearest to the exact
 * q s - z (tl_f64_to_bf16 of the f64 value q s - z, exact: 12 and 8 significant bits less than 53 apart),
 * what gemm_w4a16's bf16x2 dequantization feeds its mma; ROUND 0 against q s - z rounded to f32, then to
 * bf16 (the interpreter's gemm_w4a16).  Columns 3 and 4 (mod 32) hold crafted ties: q = 3, s = 1 + 2^-7
 * (3 s = 3 + 3 2^-7, halfway between two bf16), z = +-2^-40, so the exact value lies just below / above
 * the tie and the two roundings differ in column 3 (the self-test: ROUND 0 must differ there) ------- */
static void run_w4a16_dequant(compiled *c, int64_t G, int64_t KW, int64_t N, uint64_t seed, bool round_once) {
  int64_t K = KW * 8, NG = (K + G - 1) / G;
  int64_t sw[2] = {KW, N}, sg[2] = {NG, N}, so[3] = {KW, 8, N};
  tl_arg a[4] = {targ(TL_I32, 2, sw), targ(TL_BF16, 2, sg), targ(TL_BF16, 2, sg), targ(TL_BF16, 3, so)};
  rng g = {seed};
  int32_t *wq = a[0].data;
  for (int64_t i = 0; i < KW * N; i++) wq[i] = (int32_t)(uint32_t)rng_u64(&g); /* every nibble 0..15 */
  tfill_random(&a[1], &g, 0.01, 0.1);
  tfill_random(&a[2], &g, -0.5, 0.5);
  for (int64_t j = 3; j < N; j += 32)
    for (int64_t t = 0; t < 2 && j + t < N; t++) {
      for (int64_t i = 0; i < NG; i++) {
        tset_f(&a[1], i * N + j + t, 1.0078125);
        tset_f(&a[2], i * N + j + t, t ? -0x1p-40 : 0x1p-40);
      }
      for (int64_t i = 0; i < KW; i++) wq[i * N + j + t] = 0x33333333;
    }
  tpoison(&a[3]);
  interpret(kernel(c, "w4a16_dequant"), a, 4);
  int64_t differ = 0;
  const uint16_t *w = a[3].data;
  for (int64_t k = 0; k < K; k++)
    for (int64_t j = 0; j < N; j++) {
      double q = (double)((uint32_t)wq[(k / 8) * N + j] >> (4 * (k % 8)) & 15);
      double s = tget_f(&a[1], (k / G) * N + j), z = tget_f(&a[2], (k / G) * N + j);
      uint16_t once = tl_f64_to_bf16(q * s - z);
      uint16_t twice = (uint16_t)tl_float_to_bits(tl_f64_to_f32(q * s - z), TL_BF16);
      differ += once != twice;
      uint16_t want = round_once ? once : twice;
      cr_assert(w[k * N + j] == want, "w4a16_dequant G=%lld K=%lld N=%lld ROUND=%d: W[%lld, %lld] = 0x%04x, want 0x%04x "
                "(q %g s %g z %g)", (long long)G, (long long)K, (long long)N, round_once, (long long)k, (long long)j,
                w[k * N + j], want, q, s, z);
    }
  /* the crafted column 3 has a tie in every row: the two roundings must differ there (else the data test nothing) */
  cr_assert(N <= 3 || differ >= K, "w4a16_dequant: only %lld elements where the roundings differ", (long long)differ);
  for (int i = 0; i < 4; i++) free(a[i].data);
}

static void example_w4a16_dequant(void) {
  for (int r = 0; r < 2; r++) {
    const tl_define small[] = {{"BN", 64}, {"G", 64}, {"ROUND", r}};
    compiled *c = compile_example("w4a16_dequant.tile", small, 3);
    run_w4a16_dequant(c, 64, 17, 37, 4700 + r, r);   /* K 136: a last group of one word row; N < BN */
    run_w4a16_dequant(c, 64, 24, 130, 4702 + r, r);  /* K 192 = 3 groups; N = 2 BN + 2 */
    run_w4a16_dequant(c, 64, 3, 1, 4704 + r, r);     /* one column */
    compiled_free(c);
    const tl_define shipped[] = {{"ROUND", r}};
    c = compile_example("w4a16_dequant.tile", shipped, 1); /* BN 512, G 128 */
    run_w4a16_dequant(c, 128, 53, 130, 4706 + r, r); /* K 424 = 3 groups + 5 word rows */
    run_w4a16_dequant(c, 128, 32, 515, 4708 + r, r); /* N = BN + 3 */
    compiled_free(c);
  }
}

/* ---- gemm_w4a16_packed.tile: the int4 words repacked into the fragment order, split-K merged by the
 * last program (no zeroed C) ---------------------------------------------------------------------------- */
/* GPTQ row k of word (k / 8) at bits 4 (k % 8) -> packed word 4 (k / 32) + (k % 8) / 2 at bits
 * 4 ((k / 8) % 4) + 16 (k % 2) (the file's header) */
static uint32_t w4_packed_nibble(const int32_t *wp, int64_t N, int64_t k, int64_t j) {
  uint32_t word = (uint32_t)wp[(4 * (k / 32) + (k % 8) / 2) * N + j];
  return word >> (4 * ((k / 8) % 4) + 16 * (k % 2)) & 15;
}

/* split: gemm_w4a16_packed_merge with SPLIT splits (P scratch poisoned, Count zeros; C bf16); sz: its
 * _sz form, S and Z packed into one word by w4a16_pack_sz (checked bit for bit) */
static void run_w4a16_packed(compiled *c, int64_t G, int64_t M, int64_t N, int64_t K, uint64_t seed, int64_t split,
                             int64_t bm, int64_t bn, bool sz) {
  int64_t KW = K / 8, NG = K / G, T = ((M + bm - 1) / bm) * ((N + bn - 1) / bn) + 3;
  int64_t sa[2] = {M, K}, sw[2] = {KW, N}, sg[2] = {NG, N}, sc[2] = {M, N}, sp[3] = {split ? split : 1, M, N}, st[1] = {T};
  tl_arg q = targ(TL_I32, 2, sw), r[2];
  rng g = {seed};
  int32_t *wq = q.data;
  for (int64_t i = 0; i < KW * N; i++) wq[i] = (int32_t)(uint32_t)rng_u64(&g); /* every nibble 0..15 */
  r[0] = q, r[1] = targ(TL_I32, 2, sw);
  memset(r[1].data, 0xA5, (size_t)(KW * N) * 4);
  interpret(kernel(c, "w4a16_repack"), r, 2);
  for (int64_t k = 0; k < K; k++)
    for (int64_t j = 0; j < N; j++)
      cr_assert(w4_packed_nibble(r[1].data, N, k, j) == ((uint32_t)wq[(k / 8) * N + j] >> (4 * (k % 8)) & 15),
                "w4a16_repack %lldx%lld: row %lld column %lld", (long long)K, (long long)N, (long long)k, (long long)j);
  tl_arg a[7] = {targ(TL_BF16, 2, sa), r[1], targ(TL_BF16, 2, sg), targ(TL_BF16, 2, sg), targ(TL_F32, 3, sp),
                 targ(TL_BF16, 2, sc), targ(TL_I32, 1, st)};
  tfill_random(&a[0], &g, -1, 1);
  tfill_random(&a[2], &g, 0.01, 0.1);
  tfill_random(&a[3], &g, -0.5, 0.5);
  tpoison(&a[4]);
  tpoison(&a[5]);
  if (split && sz) {
    tl_arg zz[3] = {a[2], a[3], targ(TL_I32, 2, sg)};
    interpret(kernel(c, "w4a16_pack_sz"), zz, 3);
    for (int64_t i = 0; i < NG * N; i++) {
      uint32_t want = tl_float_to_bits(tget_f(&a[2], i), TL_BF16) | tl_float_to_bits(tget_f(&a[3], i), TL_BF16) << 16;
      cr_assert(((uint32_t *)zz[2].data)[i] == want, "w4a16_pack_sz: element %lld", (long long)i);
    }
    tl_arg u[6] = {a[0], a[1], zz[2], a[4], a[5], a[6]};
    interpret(kernel(c, "gemm_w4a16_packed_merge_sz"), u, 6);
    free(zz[2].data);
    for (int64_t i = 0; i < T; i++) cr_assert(((int32_t *)a[6].data)[i] == 0, "merge_sz: Count[%lld] left nonzero", (long long)i);
  } else if (split) {
    interpret(kernel(c, "gemm_w4a16_packed_merge"), a, 7);
    for (int64_t i = 0; i < T; i++) cr_assert(((int32_t *)a[6].data)[i] == 0, "merge: Count[%lld] left nonzero", (long long)i);
  } else {
    tl_arg u[5] = {a[0], a[1], a[2], a[3], a[5]};
    interpret(kernel(c, "gemm_w4a16_packed"), u, 5);
  }
  double *ref = dalloc(M * N), *scale = dalloc(M * N);
  w4a16_reference(a, wq, G, M, N, K, ref, scale); /* (from the GPTQ words, before the repack) */
  char what[128];
  snprintf(what, sizeof what, "gemm_w4a16_packed%s G=%lld %lldx%lldx%lld split %lld", split ? (sz ? "_merge_sz" : "_merge") : "", (long long)G,
           (long long)M, (long long)N, (long long)K, (long long)split);
  check_close(what, &a[5], ref, scale, BF16_RTOL, (double)(K + 1) * 0x1p-23);
  free(ref);
  free(scale);
  free(wq);
  for (int i = 0; i < 7; i++) free(a[i].data);
}

static void example_gemm_w4a16_packed(void) {
  const tl_define small[] = {{"BM", 16}, {"BN", 16}, {"BK", 32}, {"G", 64}, {"SPLIT", 4}, {"BR", 8}};
  compiled *c = compile_example("gemm_w4a16_packed.tile", small, 6);
  run_w4a16_packed(c, 64, 1, 37, 128, 4600, 0, 16, 16, false);
  run_w4a16_packed(c, 64, 17, 15, 192, 4601, 0, 16, 16, false);
  for (int z = 0; z < 2; z++) { /* the merge, S and Z apart and as one word */
    run_w4a16_packed(c, 64, 1, 37, 128, 4602, 4, 16, 16, z);   /* SPLIT 4 of one K step each */
    run_w4a16_packed(c, 64, 17, 15, 448, 4603, 4, 16, 16, z);  /* 14 K steps: splits of 4, 4, 4, 2 */
    run_w4a16_packed(c, 64, 5, 64, 64, 4604, 4, 16, 16, z);    /* two splits without a K step: zeros merged */
  }
  compiled_free(c);
  {
    const tl_define two[] = {{"BM", 16}, {"BN", 16}, {"BK", 32}, {"G", 64}, {"SPLIT", 2}, {"BR", 8}};
    c = compile_example("gemm_w4a16_packed.tile", two, 6); /* SPLIT 2: the merge's one pair */
    run_w4a16_packed(c, 64, 17, 15, 448, 4608, 2, 16, 16, false);
    compiled_free(c);
  }
  c = compile_example("gemm_w4a16_packed.tile", NULL, 0);  /* the shipped tiles (merge: BN 128, SPLIT 8) */
  run_w4a16_packed(c, 128, 3, 130, 512, 4605, 0, 16, 64, false);
  run_w4a16_packed(c, 128, 3, 130, 1536, 4606, 8, 16, 128, false); /* 12 K steps: splits of 2 x 6, two empty */
  run_w4a16_packed(c, 128, 3, 130, 1536, 4609, 8, 16, 128, true);
  compiled_free(c);
}

/* ---- gemm_fp8_blockscale.tile: C = sum over k-blocks kb of (A_kb W_kb^T) SA[:, kb] SW[n / 128, kb] -- */
/* blockscale_128: bench/variants/gemm_fp8_blockscale_128.tile, the 128x128 spelling (the example until the
 * twenty-fifth session; a tile's columns share one weight scale, a scalar load); ahead: compiled under TILEC_LOAD_AHEAD=1 (passes/load_ahead.c: the scales of k-block kb + 1 loaded
 * during k-step kb and carried, the last k-step's copy reading column KB, outside SA / SW); in
 * examples_after_passes the interpreter then runs the rewritten loop against the same reference. */
static void run_gemm_fp8_blockscale(compiled *c, int64_t M, int64_t N, int64_t K, uint64_t seed) {
  tl_func *f = kernel(c, "cutlass_gemm_fp8_blockscale");
  int64_t KB = (K + 127) / 128, NB = (N + 127) / 128;
  int64_t sa[2] = {M, K}, sw[2] = {N, K}, ssa[2] = {M, KB}, ssw[2] = {NB, KB}, sc[2] = {M, N};
  tl_arg a[5] = {targ(TL_F8E4M3, 2, sa), targ(TL_F8E4M3, 2, sw), targ(TL_F32, 2, ssa), targ(TL_F32, 2, ssw),
                 targ(TL_BF16, 2, sc)};
  rng g = {seed};
  tfill_random(&a[0], &g, -8, 8);
  tfill_random(&a[1], &g, -8, 8);
  tfill_random(&a[2], &g, 0.5, 1.5);
  tfill_random(&a[3], &g, 0.5, 1.5);
  tpoison(&a[4]);
  interpret(f, a, 5);
  double *ref = dalloc(M * N), *scale = dalloc(M * N);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++)
      for (int64_t kb = 0; kb < KB; kb++) {
        double blk = 0, mag = 0;
        for (int64_t k = kb * 128; k < K && k < kb * 128 + 128; k++) {
          double p = (double)tget_f(&a[0], i * K + k) * tget_f(&a[1], j * K + k);
          blk += p;
          mag += fabs(p);
        }
        double s = (double)tget_f(&a[2], i * KB + kb) * tget_f(&a[3], (j / 128) * KB + kb);
        ref[i * N + j] += blk * s;
        scale[i * N + j] += mag * fabs(s);
      }
  char what[128];
  snprintf(what, sizeof what, "cutlass_gemm_fp8_blockscale%s%s %lldx%lldx%lld", getenv("TILEC_LOAD_AHEAD") ? " ahead" : "",
           getenv("TILEC_GATHER_RUNS") ? " gather_runs" : "",
           (long long)M, (long long)N, (long long)K);
  /* f32: each block's sum (K terms in all), the scale product and the fma a k-block */
  check_close(what, &a[4], ref, scale, BF16_RTOL, (double)(K + 4 * KB + 4) * 0x1p-23);
  free(ref);
  free(scale);
  for (int i = 0; i < 5; i++) free(a[i].data);
}

static void blockscale_sizes(compiled *c) {
  const int64_t sizes[][3] = {{1, 1, 1}, {129, 131, 300}, {37, 200, 513}};
  for (int i = 0; i < 3; i++) run_gemm_fp8_blockscale(c, sizes[i][0], sizes[i][1], sizes[i][2], 3300 + i);
}

static void example_gemm_fp8_blockscale_128(void) {
  compiled *c = compile_example("../bench/variants/gemm_fp8_blockscale_128.tile", NULL, 0);
  blockscale_sizes(c);
  compiled_free(c);
}

static void example_gemm_fp8_blockscale_ahead(void) {
  setenv("TILEC_LOAD_AHEAD", "1", 1);
  compiled *c = compile_example("../bench/variants/gemm_fp8_blockscale_128.tile", NULL, 0);
  if (g_after_passes) {
    /* the rewrite happened: the loop carries the two scales beside the accumulator */
    tl_func *f = kernel(c, "cutlass_gemm_fp8_blockscale");
    int nres = -1;
    for (int32_t i = 0; i < f->ops.len; i++)
      if (f->ops.data[i].opc == TL_OP_for && !(f->ops.data[i].flags & TL_OPF_DEAD)) nres = f->ops.data[i].nres;
    cr_assert(nres == 3, "TILEC_LOAD_AHEAD=1: the k-loop carries %d values, want 3 (acc, sa, sw)", nres);
  }
  blockscale_sizes(c);
  unsetenv("TILEC_LOAD_AHEAD");
  compiled_free(c);
}

/* examples/gemm_fp8_blockscale.tile: the same GEMM on gemm_fp8's sm_90a tile (128x256 with
 * ARCH_SPECIFIC 90, so a tile spans two 128-column weight blocks: column n's scale a gather,
 * SW[(n0 + iota) / 128, kb]); with passes/gather_runs.c (default on; set here so the test keeps it) examples_after_passes
 * interprets the gather rewritten as two scalar loads and a select on iota (asserted: no gather left),
 * against the same reference; N 300 and 520 put the second weight block of a tile inside the tensor,
 * 131 outside it (NB 2: the scalar load of block 2 reads past SW, zeros). */
static bool has_gather(tl_func *f) {
  for (int32_t i = 0; i < f->ops.len; i++) {
    tl_op *o = &f->ops.data[i];
    if (o->opc != TL_OP_load || (o->flags & TL_OPF_DEAD)) continue;
    for (int k = 1; k < o->nopnd; k++)
      if (tl_val(f, o->opnd[k])->type.kind == TL_KIND_TILE) return true;
  }
  return false;
}

static void example_gemm_fp8_blockscale(void) {
  setenv("TILEC_GATHER_RUNS", "1", 1);
  const tl_define arch[] = {{"ARCH_SPECIFIC", 90}, {"ARCH_SPECIFIC", 0}};
  for (int i = 0; i < 2; i++) { /* BN 256 (two runs), then BN 128 (one run: a scalar load, splat) */
    compiled *c = compile_example("gemm_fp8_blockscale.tile", &arch[i], 1);
    tl_func *f = kernel(c, "cutlass_gemm_fp8_blockscale");
    cr_assert(has_gather(f) == !g_after_passes, "TILEC_GATHER_RUNS=1: the weight-scale gather %s",
              g_after_passes ? "was not rewritten" : "is missing before the passes");
    const int64_t sizes[][3] = {{1, 1, 1}, {129, 300, 300}, {37, 520, 513}, {130, 131, 257}};
    for (int s = 0; s < 4; s++) run_gemm_fp8_blockscale(c, sizes[s][0], sizes[s][1], sizes[s][2], 3310 + s);
    compiled_free(c);
  }
  unsetenv("TILEC_GATHER_RUNS");
}

/* ---- llama/fp8_layer.tile: static-scale e4m3 quantization and the fp8 projection with the residual -- */
/* e4m3 keeps 3 mantissa bits: a rounded value is within 2^-4 relative of the exact one (or the
 * subnormal step 2^-10 absolute), and the cast saturates at +-448. */
static void check_e4m3(const char *what, const tl_arg *out, const double *ref) {
  for (int64_t i = 0; i < targ_numel(out); i++) {
    double want = fmin(448, fmax(-448, ref[i])), got = tget_f(out, i);
    cr_assert(fabs(got - want) <= 0x1p-4 * fabs(want) + 0x1p-10 + 1e-6 * fabs(want),
              "%s: element %lld is %g, want %g", what, (long long)i, got, want);
  }
}
static void run_fp8_layer(compiled *c, int64_t R, int64_t C, int64_t N, uint64_t seed) {
  rng g = {seed};
  int64_t sx[2] = {R, C};
  double sc = 0.02, eps = 1e-5;
  /* rmsnorm_fp8 */
  tl_arg a[5] = {targ(TL_BF16, 2, sx), targ(TL_BF16, 1, &C), targ(TL_F8E4M3, 2, sx), sarg_f(eps), sarg_f(sc)};
  tfill_random(&a[0], &g, -3, 3);
  tfill_random(&a[1], &g, 0.5, 1.5);
  tpoison(&a[2]);
  interpret(kernel(c, "rmsnorm_fp8"), a, 5);
  double *ref = dalloc(R * (C > N ? C : N));
  for (int64_t r = 0; r < R; r++) {
    double ss = 0;
    for (int64_t j = 0; j < C; j++) ss += (double)tget_f(&a[0], r * C + j) * tget_f(&a[0], r * C + j);
    double inv = 1 / sqrt(ss / C + eps);
    for (int64_t j = 0; j < C; j++) ref[r * C + j] = tget_f(&a[0], r * C + j) * inv * tget_f(&a[1], j) / sc;
  }
  check_e4m3("rmsnorm_fp8", &a[2], ref);
  /* swiglu_fp8 and quant_fp8 (values past 448 saturate) */
  tl_arg gu[4] = {targ(TL_BF16, 2, sx), targ(TL_BF16, 2, sx), targ(TL_F8E4M3, 2, sx), sarg_f(sc)};
  tfill_random(&gu[0], &g, -4, 4);
  tfill_random(&gu[1], &g, -4, 4);
  tpoison(&gu[2]);
  interpret(kernel(c, "swiglu_fp8"), gu, 4);
  for (int64_t i = 0; i < R * C; i++) {
    double x = tget_f(&gu[0], i);
    ref[i] = x / (1 + exp(-x)) * tget_f(&gu[1], i) / sc;
  }
  check_e4m3("swiglu_fp8", &gu[2], ref);
  tl_arg q[3] = {gu[0], targ(TL_F8E4M3, 2, sx), sarg_f(sc)};
  tpoison(&q[1]);
  interpret(kernel(c, "quant_fp8"), q, 3);
  for (int64_t i = 0; i < R * C; i++) ref[i] = tget_f(&gu[0], i) / sc;
  check_e4m3("quant_fp8", &q[1], ref);
  /* cutlass_gemm_fp8_tn_residual: C = A @ BT^T * (sa * sb) + R, on the quantized A above */
  int64_t sbt[2] = {N, C}, so[2] = {R, N};
  tl_arg m[6] = {a[2], targ(TL_F8E4M3, 2, sbt), targ(TL_BF16, 2, so), targ(TL_BF16, 2, so), sarg_f(0.5), sarg_f(0.03)};
  tfill_random(&m[1], &g, -2, 2);
  tfill_random(&m[2], &g, -1, 1);
  tpoison(&m[3]);
  interpret(kernel(c, "cutlass_gemm_fp8_tn_residual"), m, 6);
  double *scale = dalloc(R * N);
  for (int64_t r = 0; r < R; r++)
    for (int64_t n = 0; n < N; n++) {
      double acc = 0, mag = 0;
      for (int64_t k = 0; k < C; k++) {
        double p = (double)tget_f(&m[0], r * C + k) * tget_f(&m[1], n * C + k);
        acc += p;
        mag += fabs(p);
      }
      float s = (float)(0.5f * 0.03f);
      ref[r * N + n] = acc * s + tget_f(&m[2], r * N + n);
      scale[r * N + n] = mag * s + fabs(tget_f(&m[2], r * N + n));
    }
  char what[96];
  snprintf(what, sizeof what, "cutlass_gemm_fp8_tn_residual %lldx%lldx%lld", (long long)R, (long long)N, (long long)C);
  check_close(what, &m[3], ref, scale, BF16_RTOL, (double)(C + 2) * 0x1p-23);
  free(ref);
  free(scale);
  for (int i = 0; i < 3; i++) free(a[i].data);
  free(gu[0].data), free(gu[1].data), free(gu[2].data), free(q[1].data);
  free(m[1].data), free(m[2].data), free(m[3].data);
}

static void example_fp8_layer(void) {
  compiled *c = compile_example("llama/fp8_layer.tile", NULL, 0);
  run_fp8_layer(c, 3, 300, 129, 4600);
  run_fp8_layer(c, 17, 129, 65, 4601);
  run_fp8_layer(c, 1, 1, 1, 4602);
  compiled_free(c);
}

/* ---- the tests: straight from the front-end, and after the default pipeline ---- */
/* ---- add_rmsnorm_fp8.tile: the norm quantized to e4m3 with a scale per row ---------- */
static void run_add_rmsnorm_fp8(compiled *c, int64_t R, int64_t C, uint64_t seed) {
  int64_t s2[2] = {R, C};
  tl_arg a[7] = {targ(TL_BF16, 2, s2), targ(TL_BF16, 2, s2), targ(TL_BF16, 1, &C), targ(TL_BF16, 2, s2),
                 targ(TL_F8E4M3, 2, s2), targ(TL_F32, 1, &R), sarg_f(1e-6)};
  rng g = {seed};
  tfill_random(&a[0], &g, -3, 3);
  tfill_random(&a[1], &g, -3, 3);
  tfill_random(&a[2], &g, 0.5, 1.5);
  for (int i = 3; i < 6; i++) tpoison(&a[i]);
  interpret(kernel(c, "add_rmsnorm_fp8"), a, 7);
  double *qref = dalloc(R * C);
  char what[64];
  for (int64_t r = 0; r < R; r++) {
    /* the norm of the rounded sum S (checked against X + Res first), in double */
    double ss = 0, amax = 0;
    for (int64_t j = 0; j < C; j++) {
      double x = tget_f(&a[0], r * C + j) + tget_f(&a[1], r * C + j), sv = tget_f(&a[3], r * C + j);
      cr_assert(fabs(sv - x) <= BF16_RTOL * fabs(x) + 0x1p-24, "add_rmsnorm_fp8 S[%lld, %lld] %g, want %g",
                (long long)r, (long long)j, sv, x);
      ss += sv * sv;
    }
    double inv = 1 / sqrt(ss / (double)C + (double)1e-6f);
    for (int64_t j = 0; j < C; j++) {
      qref[r * C + j] = tget_f(&a[3], r * C + j) * inv * tget_f(&a[2], j);
      amax = fmax(amax, fabs(qref[r * C + j]));
    }
    double want = fmax(amax, 1e-12) / 448, got = tget_f(&a[5], r);
    /* (f32 math over C terms and the rsqrt: a few ulps, C * 2^-24 relative at most) */
    cr_assert(fabs(got - want) <= (8 + (double)C) * 0x1p-24 * want, "add_rmsnorm_fp8 QS[%lld] %g, want %g",
              (long long)r, got, want);
    for (int64_t j = 0; j < C; j++) qref[r * C + j] /= got;
  }
  snprintf(what, sizeof what, "add_rmsnorm_fp8 Q R=%lld C=%lld", (long long)R, (long long)C);
  check_e4m3(what, &a[4], qref);
  /* the row's largest |y| lands at 448 exactly (the scale is its own amax / 448) */
  for (int64_t r = 0; r < R; r++) {
    double qmax = 0;
    for (int64_t j = 0; j < C; j++) qmax = fmax(qmax, fabs(tget_f(&a[4], r * C + j)));
    cr_assert(qmax == 448, "add_rmsnorm_fp8: row %lld's largest |q| is %g, want 448", (long long)r, qmax);
  }
  free(qref);
  for (int i = 0; i < 6; i++) free(a[i].data);
}

static void example_add_rmsnorm_fp8(void) { run_ragged_rows("add_rmsnorm_fp8.tile", run_add_rmsnorm_fp8, 4700); }

#define EXAMPLE_TESTS(X) X(gemm) X(gemm_fp8) X(attn) X(rmsnorm) X(add_rmsnorm) X(layernorm) X(softmax) X(rope) X(swiglu) \
  X(gemm_small_m) X(attn_decode) X(attn_bwd) X(rmsnorm_rows) X(rmsnorm_bwd) X(moe_permute) X(qkv_split_rope) X(embedding_rmsnorm) X(dropout_residual) X(cross_entropy) X(splitk_gemm) \
  X(moe_gemm) X(topk_sample) X(gemm_w4a16) X(gemm_w4a16_packed) X(w4a16_dequant) X(attn_rope) X(gemm_bias_gelu) X(fp8_layer) X(add_rmsnorm_fp8) \
  X(gemm_fp8_blockscale) X(gemm_fp8_blockscale_128) X(gemm_fp8_blockscale_ahead)
#define FRONTEND_TEST(name) Test(examples, name) { example_##name(); }
#define PASSES_TEST(name) Test(examples_after_passes, name) { g_after_passes = true; example_##name(); }
EXAMPLE_TESTS(FRONTEND_TEST)
EXAMPLE_TESTS(PASSES_TEST)
