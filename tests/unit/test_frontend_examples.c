/* The examples/ kernels through the front-end: each lowers to IR that the
 * verifier accepts (with several -D overrides), and some run on the CPU
 * interpreter against a plain C reference on random data with ragged sizes
 * (1, tile - 1, tile + 1, primes), which checks the lowering's semantics:
 * views, masking with `other`, broadcasting, reductions, loops. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "fpconv.h"
#include "interp.h"
#include "ctx_fixture.h"

TL_CTX_FIXTURE()

TestSuite(frontend_examples, .init = setup, .fini = teardown);

static tl_module *compile_example(const char *name, const tl_define *defs, int ndefs) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/%s", TILEC_SOURCE_DIR, name);
  FILE *f = fopen(path, "rb");
  cr_assert(f, "cannot open %s", path);
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  int32_t file = tl_ctx_add_source(&ctx, path, buf, n);
  if (setjmp(jb)) cr_assert_fail("internal error: %s", tl_ctx_render_diags(&ctx));
  tl_module *m = tl_frontend(&ctx, file, NULL, defs, ndefs, NULL);
  cr_assert(m, "%s: %s", name, tl_ctx_render_diags(&ctx));
  cr_assert(tl_verify_module(m), "%s: %s", name, tl_ctx_render_diags(&ctx));
  return m;
}

Test(frontend_examples, every_example_lowers_and_verifies) {
  static const char *names[] = {"gemm.tile", "gemm_fp8.tile", "attn.tile", "rmsnorm.tile", "add_rmsnorm.tile",
                                "rope.tile", "softmax.tile", "layernorm.tile", "swiglu.tile"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    tl_module *m = compile_example(names[i], NULL, 0);
    cr_expect(m->funcs.len >= 1);
    for (int k = 0; k < m->funcs.len; k++) cr_expect(m->funcs.data[k]->grid.ops.len >= 1, "%s: no grid", names[i]);
  }
  tl_define causal[] = {{"CAUSAL", 1}, {"BM", 64}};
  compile_example("attn.tile", causal, 2);
}

Test(frontend_examples, attn_lowering_is_fast) {
  double best = 1e9;
  for (int i = 0; i < 20; i++) {
    tl_ctx_free(&ctx);
    setup();
    double t0 = tl_now_ms();
    compile_example("attn.tile", NULL, 0);
    double t = tl_now_ms() - t0;
    if (t < best) best = t;
  }
  /* The goal (front-end + passes < 5 ms) is measured in bench/; this only
   * catches an order-of-magnitude regression, robust to sanitizer builds. */
  cr_expect(best < 5.0, "front-end of attn.tile took %.3f ms", best);
}

static float frand(void) { return (float)rand() / (float)RAND_MAX * 4.0f - 2.0f; }

static tl_arg tensor_arg(void *data, tl_dtype dt, int rank, const int64_t *shape) {
  tl_arg a;
  memset(&a, 0, sizeof a);
  a.is_tensor = true;
  a.data = data;
  a.dtype = dt;
  a.rank = rank;
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; d--) {
    a.shape[d] = shape[d];
    a.strides[d] = stride;
    stride *= shape[d];
  }
  return a;
}

static void run(tl_func *f, tl_arg *args, int n) {
  char err[256] = "";
  if (setjmp(jb)) cr_assert_fail("internal error: %s", tl_ctx_render_diags(&ctx));
  cr_assert(tl_interpret_func(f, args, n, err, sizeof err), "interpreter: %s", err);
}

/* softmax: rows padded with other = -inf must not change max or sum. */
Test(frontend_examples, softmax_matches_reference_on_ragged_rows) {
  tl_define defs[] = {{"BC", 64}};
  tl_module *m = compile_example("softmax.tile", defs, 1);
  static const int64_t cols[] = {1, 63, 64, 37};
  for (size_t t = 0; t < 4; t++) {
    int64_t shape[2] = {3, cols[t]};
    int64_t n = shape[0] * shape[1];
    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) { x[i] = frand() * 5; y[i] = 12345.0f; }
    tl_arg args[2] = {tensor_arg(x, TL_F32, 2, shape), tensor_arg(y, TL_F32, 2, shape)};
    run(m->funcs.data[0], args, 2);
    for (int64_t r = 0; r < shape[0]; r++) {
      double mx = -INFINITY, sum = 0;
      for (int64_t c = 0; c < shape[1]; c++) mx = fmax(mx, x[r * shape[1] + c]);
      for (int64_t c = 0; c < shape[1]; c++) sum += exp(x[r * shape[1] + c] - mx);
      for (int64_t c = 0; c < shape[1]; c++) {
        double want = exp(x[r * shape[1] + c] - mx) / sum;
        cr_expect(fabs(y[r * shape[1] + c] - want) <= 1e-5 + 1e-4 * want, "C=%lld [%lld,%lld] %g vs %g",
                  (long long)shape[1], (long long)r, (long long)c, y[r * shape[1] + c], want);
      }
    }
    free(x);
    free(y);
  }
}

/* gemm: bf16 inputs, ragged M, N, K around the tiles, loop-carried acc. */
Test(frontend_examples, gemm_matches_reference_on_ragged_sizes) {
  tl_define defs[] = {{"BM", 16}, {"BN", 16}, {"BK", 16}};
  tl_module *m = compile_example("gemm.tile", defs, 3);
  static const int64_t sizes[][3] = {{1, 1, 1}, {15, 17, 33}, {17, 16, 31}};
  for (size_t t = 0; t < 3; t++) {
    int64_t M = sizes[t][0], N = sizes[t][1], K = sizes[t][2];
    uint16_t *a = malloc(2 * (size_t)(M * K)), *b = malloc(2 * (size_t)(K * N)), *c = malloc(2 * (size_t)(M * N));
    for (int64_t i = 0; i < M * K; i++) a[i] = tl_f32_to_bf16(frand());
    for (int64_t i = 0; i < K * N; i++) b[i] = tl_f32_to_bf16(frand());
    int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
    tl_arg args[3] = {tensor_arg(a, TL_BF16, 2, sa), tensor_arg(b, TL_BF16, 2, sb), tensor_arg(c, TL_BF16, 2, sc)};
    run(m->funcs.data[0], args, 3);
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        double want = 0;
        for (int64_t k = 0; k < K; k++) want += (double)tl_bf16_to_f32(a[i * K + k]) * tl_bf16_to_f32(b[k * N + j]);
        double got = tl_bf16_to_f32(c[i * N + j]);
        cr_expect(fabs(got - want) <= 1e-2 * (1 + fabs(want)), "M=%lld N=%lld K=%lld [%lld,%lld] %g vs %g",
                  (long long)M, (long long)N, (long long)K, (long long)i, (long long)j, got, want);
      }
    free(a);
    free(b);
    free(c);
  }
}

/* layernorm: the padding is masked out of the variance with where(). */
Test(frontend_examples, layernorm_matches_reference) {
  tl_define defs[] = {{"BC", 32}};
  tl_module *m = compile_example("layernorm.tile", defs, 1);
  int64_t R = 2, C = 29;
  int64_t sx[2] = {R, C}, sw[1] = {C};
  uint16_t x[2 * 29], w[29], bb[29], y[2 * 29];
  for (int i = 0; i < R * C; i++) x[i] = tl_f32_to_bf16(frand());
  for (int i = 0; i < C; i++) { w[i] = tl_f32_to_bf16(frand()); bb[i] = tl_f32_to_bf16(frand()); }
  tl_arg args[5] = {tensor_arg(x, TL_BF16, 2, sx), tensor_arg(w, TL_BF16, 1, sw), tensor_arg(bb, TL_BF16, 1, sw),
                    tensor_arg(y, TL_BF16, 2, sx)};
  memset(&args[4], 0, sizeof args[4]);
  args[4].f = 1e-5;
  args[4].is_float = true;
  run(m->funcs.data[0], args, 5);
  for (int r = 0; r < R; r++) {
    double mean = 0, var = 0;
    for (int c = 0; c < C; c++) mean += tl_bf16_to_f32(x[r * C + c]);
    mean /= (double)C;
    for (int c = 0; c < C; c++) var += pow(tl_bf16_to_f32(x[r * C + c]) - mean, 2);
    var /= (double)C;
    for (int c = 0; c < C; c++) {
      double want = (tl_bf16_to_f32(x[r * C + c]) - mean) / sqrt(var + 1e-5) * tl_bf16_to_f32(w[c]) + tl_bf16_to_f32(bb[c]);
      double got = tl_bf16_to_f32(y[r * C + c]);
      cr_expect(fabs(got - want) <= 2e-2 * (1 + fabs(want)), "[%d,%d] %g vs %g", r, c, got, want);
    }
  }
}
