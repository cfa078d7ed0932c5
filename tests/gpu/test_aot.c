/* test_aot.c: the AOT launchers (tilec --emit=c, built into this binary from
 * examples/rmsnorm.tile, gemm.tile and attn.tile for sm_90a) against the JIT
 * (tilec_kernel_launch of the same kernels) on the GPU:
 *  1. fresh random inputs at ragged sizes (and a padded row stride, so the
 *     TMA kernels encode their tensor maps), both outputs poisoned with 0xFF,
 *     then compared: every element written, within the dtype's tolerance,
 *     and counted bit-identical;
 *  2. a refused launch (shapes disagree) returns the launch status;
 *  3. the host time per launch: AOT launcher, tilec_kernel_launch and a bare
 *     cuLaunchKernel of the same code (goal: AOT <= bare + 0.5 us).
 *   usage: gpu_test_aot   (exit 0 pass, 1 fail, 77 skip) */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"
#include "aot_gpu_attn.h"
#include "aot_gpu_gemm.h"
#include "aot_gpu_rmsnorm.h"

static int failures;

typedef struct buf {
  CUdeviceptr d;
  size_t n, bytes;
  int64_t shape[4], strides[4];
  int rank;
} buf;

static buf make(int rank, const int64_t *shape, int64_t row_pad, bool random) {
  buf b = {.rank = rank};
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--) {
    b.shape[d] = shape[d];
    b.strides[d] = s;
    s *= shape[d] + (d == rank - 1 ? row_pad : 0);
  }
  b.n = (size_t)s;
  b.bytes = b.n * 2;
  gpu_check(gpu.cuMemAlloc(&b.d, b.bytes), "alloc");
  if (random) {
    void *h = malloc(b.bytes);
    gpu_fill_random(h, b.n, "bf16");
    gpu_check(gpu.cuMemcpyHtoD(b.d, h, b.bytes), "h2d");
    free(h);
  } else {
    gpu_check(gpu.cuMemsetD8(b.d, 0xFF, b.bytes), "poison");
  }
  return b;
}

static DLTensor dl(const buf *b) {
  return (DLTensor){.data = (void *)(uintptr_t)b->d, .device = {kDLCUDA, 0}, .ndim = b->rank,
                    .dtype = {kDLBfloat, 16, 1}, .shape = (int64_t *)b->shape, .strides = (int64_t *)b->strides};
}

static void *host(const buf *b) {
  void *h = malloc(b->bytes);
  gpu_check(gpu.cuCtxSynchronize(), "sync");
  gpu_check(gpu.cuMemcpyDtoH(h, b->d, b->bytes), "d2h");
  return h;
}

/* out_aot against out_jit: written, within tolerance; prints the bit-identical count. */
static void compare(const char *what, const buf *aot, const buf *jit) {
  void *a = host(aot), *j = host(jit);
  gpu_cmp c;
  bool ok = gpu_compare(a, j, aot->n, "bf16", &c);
  size_t same = 0;
  for (size_t i = 0; i < aot->n; i++) same += ((uint16_t *)a)[i] == ((uint16_t *)j)[i];
  printf("%-40s %s: %zu elements, %zu bit-identical, max rel err %.2e, unwritten %zu\n", what, ok ? "PASS" : "FAIL",
         aot->n, same, c.max_rel_err, c.unwritten);
  GPU_EXPECT(c.both_unwritten == 0, "%s: %zu elements written by neither launch", what, c.both_unwritten);
  GPU_EXPECT(ok, "%s: AOT and JIT outputs differ (first bad %zu: %g vs %g)", what, c.first_bad, c.first_got, c.first_want);
  free(a);
  free(j);
}

static tilec_kernel *jit(const char *file, const char *kernel, tilec_program **keep) {
  const char *dir = getenv("TILEC_EXAMPLES") ? getenv("TILEC_EXAMPLES") : TILEC_SOURCE_DIR "/examples";
  tilec_options *o = NULL;
  tilec_options_create(&o);
  tilec_options_set_arch(o, "sm_90a");
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  tilec_program *p = NULL;
  tilec_status st = tilec_program_create_from_file(&p, path, o);
  tilec_options_destroy(o);
  if (st != TILEC_OK) {
    printf("FAIL: %s: %s\n", path, p ? tilec_program_log(p) : "cannot read");
    exit(1);
  }
  *keep = p;
  return gpu_load_kernel(p, file, kernel);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(void) {
  int rc = gpu_init();
  if (rc) return rc;
  gpu_seed();
  tilec_program *pr, *pg, *pa, *pc;
  tilec_kernel *kr = jit("rmsnorm.tile", "rmsnorm", &pr), *kg = jit("gemm.tile", "cutlass_gemm", &pg),
               *ka = jit("attn.tile", "attn_fwd", &pa), *kc = jit("attn.tile", "cutlass_attn_fwd", &pc);
  if (!kr || !kg || !ka || !kc) return 1;

  /* rmsnorm: ragged rows and columns */
  {
    int64_t x[2] = {37, 1000}, w[1] = {1000};
    buf X = make(2, x, 0, true), W = make(1, w, 0, true), Ya = make(2, x, 0, false), Yj = make(2, x, 0, false);
    float eps = 1e-5f;
    DLTensor t[4] = {dl(&X), dl(&W), dl(&Yj)};
    tilec_arg args[4] = {{.u.tensor = &t[0]}, {.u.tensor = &t[1]}, {.u.tensor = &t[2]}, {.kind = TILEC_ARG_F32, .u.f32 = eps}};
    GPU_EXPECT(tilec_kernel_launch(kr, args, 4, NULL) == TILEC_OK, "jit rmsnorm: %s", tilec_kernel_error(kr));
    int st = aot_gpu_rmsnorm_rmsnorm((void *)(uintptr_t)X.d, X.shape, X.strides, (void *)(uintptr_t)W.d, W.shape,
                                     W.strides, (void *)(uintptr_t)Ya.d, Ya.shape, NULL, eps, NULL);
    GPU_EXPECT(st == 0, "aot rmsnorm: %d %s", st, aot_gpu_rmsnorm_last_error());
    compare("rmsnorm 37x1000", &Ya, &Yj);

    /* the host cost per launch (the kernel is tiny: 37 programs) */
    const int n = 20000, runs = 5;
    double t_aot[5], t_jit[5], t_bare[5];
    tilec_program_compile(pr, TILEC_STAGE_PTX);
    int threads = 0, smem = 0;
    const char *entry = NULL;
    tilec_kernel_config(kr, &threads, &smem, &entry);
    CUmodule mod;
    CUfunction fn;
    gpu_check(gpu.cuModuleLoadData(&mod, tilec_program_text(pr, TILEC_STAGE_PTX)), "load PTX");
    gpu_check(gpu.cuModuleGetFunction(&fn, mod, entry), "function");
    uint64_t px = X.d, pw = W.d, py = Ya.d;
    uint32_t R = 37, C = 1000;
    int64_t s0 = 1000, s1 = 1;
    void *params[] = {&px, &R, &C, &s0, &s1, &pw, &C, &s1, &py, &R, &C, &s0, &s1, &eps};
    for (int r = 0; r < runs; r++) {
      double t0 = gpu_now_ms();
      for (int i = 0; i < n; i++)
        aot_gpu_rmsnorm_rmsnorm((void *)(uintptr_t)X.d, X.shape, X.strides, (void *)(uintptr_t)W.d, W.shape, W.strides,
                                (void *)(uintptr_t)Ya.d, Ya.shape, Ya.strides, eps, NULL);
      t_aot[r] = (gpu_now_ms() - t0) * 1e3 / n;
      gpu_check(gpu.cuCtxSynchronize(), "sync");
      t0 = gpu_now_ms();
      for (int i = 0; i < n; i++) tilec_kernel_launch(kr, args, 4, NULL);
      t_jit[r] = (gpu_now_ms() - t0) * 1e3 / n;
      gpu_check(gpu.cuCtxSynchronize(), "sync");
      t0 = gpu_now_ms();
      for (int i = 0; i < n; i++)
        gpu.cuLaunchKernel(fn, R, 1, 1, (unsigned)threads, 1, 1, (unsigned)smem, NULL, params, NULL);
      t_bare[r] = (gpu_now_ms() - t0) * 1e3 / n;
      gpu_check(gpu.cuCtxSynchronize(), "sync");
    }
    qsort(t_aot, runs, sizeof(double), cmp_double);
    qsort(t_jit, runs, sizeof(double), cmp_double);
    qsort(t_bare, runs, sizeof(double), cmp_double);
    printf("launch host time (us, median of %d x %d): AOT %.3f, tilec_kernel_launch %.3f, bare cuLaunchKernel %.3f; "
           "AOT - bare = %.3f (goal <= 0.5)\n", runs, n, t_aot[2], t_jit[2], t_bare[2], t_aot[2] - t_bare[2]);
    /* a refused launch */
    int64_t bad[1] = {999};
    st = aot_gpu_rmsnorm_rmsnorm((void *)(uintptr_t)X.d, X.shape, NULL, (void *)(uintptr_t)W.d, bad, NULL,
                                 (void *)(uintptr_t)Ya.d, Ya.shape, NULL, eps, NULL);
    GPU_EXPECT(st == aot_gpu_rmsnorm_ERROR_LAUNCH && strstr(aot_gpu_rmsnorm_last_error(), "C = 1000"),
               "refused launch: %d %s", st, aot_gpu_rmsnorm_last_error());
  }
  /* gemm (TMA + wgmma on sm_90a): ragged, then padded rows (tensor maps encoded) */
  for (int v = 0; v < 2; v++) {
    int64_t M = v ? 512 : 257, N = v ? 384 : 300, K = v ? 320 : 129, pad = v ? 8 : 0;
    int64_t a[2] = {M, K}, b[2] = {K, N}, c[2] = {M, N};
    buf A = make(2, a, pad, true), B = make(2, b, pad, true), Ca = make(2, c, 0, false), Cj = make(2, c, 0, false);
    DLTensor t[3] = {dl(&A), dl(&B), dl(&Cj)};
    tilec_arg args[3] = {{.u.tensor = &t[0]}, {.u.tensor = &t[1]}, {.u.tensor = &t[2]}};
    GPU_EXPECT(tilec_kernel_launch(kg, args, 3, NULL) == TILEC_OK, "jit gemm: %s", tilec_kernel_error(kg));
    int st = aot_gpu_gemm_cutlass_gemm((void *)(uintptr_t)A.d, A.shape, A.strides, (void *)(uintptr_t)B.d, B.shape,
                                       B.strides, (void *)(uintptr_t)Ca.d, Ca.shape, Ca.strides, NULL);
    GPU_EXPECT(st == 0, "aot gemm: %d %s", st, aot_gpu_gemm_last_error());
    char what[64];
    snprintf(what, sizeof what, "cutlass_gemm %lldx%lldx%lld%s", (long long)M, (long long)N, (long long)K,
             v ? " (padded rows)" : "");
    compare(what, &Ca, &Cj);
  }
  /* attention: both kernels, ragged S */
  for (int which = 0; which < 2; which++) {
    int64_t s[4] = {2, 3, 300, 64};
    buf Q = make(4, s, 0, true), Kt = make(4, s, 0, true), V = make(4, s, 0, true), Oa = make(4, s, 0, false),
        Oj = make(4, s, 0, false);
    float scale = 0.125f;
    DLTensor t[4] = {dl(&Q), dl(&Kt), dl(&V), dl(&Oj)};
    tilec_arg args[5] = {{.u.tensor = &t[0]}, {.u.tensor = &t[1]}, {.u.tensor = &t[2]}, {.u.tensor = &t[3]},
                         {.kind = TILEC_ARG_F32, .u.f32 = scale}};
    tilec_kernel *k = which ? kc : ka;
    GPU_EXPECT(tilec_kernel_launch(k, args, 5, NULL) == TILEC_OK, "jit attn: %s", tilec_kernel_error(k));
    int st = (which ? aot_gpu_attn_cutlass_attn_fwd : aot_gpu_attn_attn_fwd)(
        (void *)(uintptr_t)Q.d, Q.shape, NULL, (void *)(uintptr_t)Kt.d, Kt.shape, NULL, (void *)(uintptr_t)V.d, V.shape,
        NULL, (void *)(uintptr_t)Oa.d, Oa.shape, NULL, scale, NULL);
    GPU_EXPECT(st == 0, "aot attn: %d %s", st, aot_gpu_attn_last_error());
    compare(which ? "cutlass_attn_fwd 2x3x300x64" : "attn_fwd 2x3x300x64", &Oa, &Oj);
  }
  printf("%s: %d failure%s\n", failures ? "FAIL" : "PASS", failures, failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}
