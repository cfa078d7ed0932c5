/* test_aot.c: the AOT launchers (tilec --emit=c, built into this binary from
 * examples/rmsnorm.tile, gemm.tile and attn.tile for sm_90a) against the JIT
 * (tilec_kernel_launch of the same kernels) on the GPU:
 *  1. fresh random inputs at ragged sizes (and a padded row stride, so the
 *     TMA kernels encode their tensor maps), both outputs poisoned with 0xFF,
 *     then compared: every element written, within the dtype's tolerance,
 *     and counted bit-identical;
 *  2. a refused launch (shapes disagree) returns the launch status;
 *  3. the host time per launch: AOT launcher, tilec_kernel_launch and a bare
 *     cuLaunchKernel of the same code (goal: AOT <= bare + 0.5 us);
 *  4. both images of a TMA kernel's launcher (docs/aot.md "Two images") against the
 *     interpreter: cutlass_gemm and cutlass_attn_fwd with every tensor a map can take (the
 *     TMA form), an offset view and an odd row stride (the no-TMA image), at ragged sizes;
 *  5. (unless GPU_AOT_TIMING=0) the GPU time of a launch at 4096^3: gemm.tile and the wide
 *     block-scaled fp8 GEMM (examples/gemm_fp8_blockscale.tile) through the JIT, the
 *     two-image launcher (the TMA form: the JIT's kernel) and the one-image inline launcher
 *     (--tma-fallback=inline, what --emit=c embedded before), rounds rotated, medians; the
 *     outputs compared.
 *   usage: gpu_test_aot   (exit 0 pass, 1 fail, 77 skip) */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"
#include "aot_gpu_attn.h"
#include "aot_gpu_bsw.h"
#include "aot_gpu_bswi.h"
#include "aot_gpu_gemm.h"
#include "aot_gpu_gemmi.h"
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

/* ---- 4. both images against the interpreter ---------------------------------------------------- */
/* A bf16 tensor on the host and its device copy: rows `pitch` elements apart (0: compact), the data
 * `off` elements into the buffer (an offset view); random, or 0xFF bytes (an output). */
typedef struct hd {
  uint16_t *h;
  CUdeviceptr d;
  size_t n;
  int64_t shape[4], strides[4], off;
  int rank;
} hd;

static hd hd_make(int rank, const int64_t *shape, int64_t pitch, int64_t off, bool random) {
  hd t = {.rank = rank, .off = off};
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--) {
    t.shape[d] = shape[d];
    t.strides[d] = s;
    s *= d == rank - 1 && pitch ? pitch : shape[d];
  }
  t.n = (size_t)(off + s);
  t.h = malloc(t.n * 2);
  if (random) gpu_fill_random(t.h, t.n, "bf16");
  else memset(t.h, 0xFF, t.n * 2);
  gpu_check(gpu.cuMemAlloc(&t.d, t.n * 2), "alloc");
  gpu_check(gpu.cuMemcpyHtoD(t.d, t.h, t.n * 2), "h2d");
  return t;
}

static DLTensor hd_host(hd *t) {
  return (DLTensor){.data = t->h, .device = {kDLCPU, 0}, .ndim = t->rank, .dtype = {kDLBfloat, 16, 1},
                    .shape = t->shape, .strides = t->strides, .byte_offset = (uint64_t)t->off * 2};
}
static void *hd_dev(const hd *t) { return (void *)(uintptr_t)(t->d + (CUdeviceptr)t->off * 2); }
static void hd_free(hd *t) {
  gpu.cuMemFree(t->d);
  free(t->h);
}

/* out's device copy against its host copy (the interpreter's), like compare(). */
static void against_interp(const char *what, hd *out) {
  uint16_t *g = malloc(out->n * 2);
  gpu_check(gpu.cuCtxSynchronize(), "sync");
  gpu_check(gpu.cuMemcpyDtoH(g, out->d, out->n * 2), "d2h");
  gpu_cmp c;
  bool ok = gpu_compare(g, out->h, out->n, "bf16", &c);
  size_t same = 0;
  for (size_t i = 0; i < out->n; i++) same += g[i] == out->h[i];
  printf("%-72s %s: %zu elements, %zu bit-identical, max rel err %.2e, unwritten %zu\n", what, ok ? "PASS" : "FAIL",
         out->n, same, c.max_rel_err, c.unwritten);
  GPU_EXPECT(ok, "%s: AOT and interpreter differ (first bad %zu: %g vs %g)", what, c.first_bad, c.first_got, c.first_want);
  free(g);
}

/* C = A B: A's data `aoff` elements into its buffer, B's rows `bpitch` apart (0: N). */
static void gemm_images(tilec_program *p, int64_t M, int64_t N, int64_t K, int64_t aoff, int64_t bpitch, const char *how) {
  int64_t a[2] = {M, K}, b[2] = {K, N}, c[2] = {M, N};
  hd A = hd_make(2, a, 0, aoff, true), B = hd_make(2, b, bpitch, 0, true), C = hd_make(2, c, 0, 0, false);
  DLTensor t[3] = {hd_host(&A), hd_host(&B), hd_host(&C)};
  tilec_arg args[3] = {{.u.tensor = &t[0]}, {.u.tensor = &t[1]}, {.u.tensor = &t[2]}};
  tilec_status ist = tilec_interpret(p, "cutlass_gemm", args, 3);
  GPU_EXPECT(ist == TILEC_OK, "interpret gemm: %s", tilec_program_log(p));
  int st = aot_gpu_gemm_cutlass_gemm(hd_dev(&A), A.shape, A.strides, hd_dev(&B), B.shape, B.strides, hd_dev(&C), C.shape,
                                     C.strides, NULL);
  GPU_EXPECT(st == 0, "aot gemm (%s): %d %s", how, st, aot_gpu_gemm_last_error());
  char what[128];
  snprintf(what, sizeof what, "images: cutlass_gemm %lldx%lldx%lld %s", (long long)M, (long long)N, (long long)K, how);
  if (ist == TILEC_OK) against_interp(what, &C);
  hd_free(&A), hd_free(&B), hd_free(&C);
}

/* O = attention(Q, K, V) [Z, H, S, 64]: K's data `koff` elements into its buffer, V's rows `vpitch` apart. */
static void attn_images(tilec_program *p, int64_t S, int64_t koff, int64_t vpitch, const char *how) {
  int64_t s[4] = {1, 2, S, 64};
  hd Q = hd_make(4, s, 0, 0, true), K = hd_make(4, s, 0, koff, true), V = hd_make(4, s, vpitch, 0, true),
     O = hd_make(4, s, 0, 0, false);
  float scale = 0.125f;
  DLTensor t[4] = {hd_host(&Q), hd_host(&K), hd_host(&V), hd_host(&O)};
  tilec_arg args[5] = {{.u.tensor = &t[0]}, {.u.tensor = &t[1]}, {.u.tensor = &t[2]}, {.u.tensor = &t[3]},
                       {.kind = TILEC_ARG_F32, .u.f32 = scale}};
  tilec_status ist = tilec_interpret(p, "cutlass_attn_fwd", args, 5);
  GPU_EXPECT(ist == TILEC_OK, "interpret attn: %s", tilec_program_log(p));
  int st = aot_gpu_attn_cutlass_attn_fwd(hd_dev(&Q), Q.shape, Q.strides, hd_dev(&K), K.shape, K.strides, hd_dev(&V),
                                         V.shape, V.strides, hd_dev(&O), O.shape, O.strides, scale, NULL);
  GPU_EXPECT(st == 0, "aot attn (%s): %d %s", how, st, aot_gpu_attn_last_error());
  char what[128];
  snprintf(what, sizeof what, "images: cutlass_attn_fwd 1x2x%lldx64 %s", (long long)S, how);
  if (ist == TILEC_OK) against_interp(what, &O);
  hd_free(&Q), hd_free(&K), hd_free(&V), hd_free(&O);
}

/* ---- 5. GPU time: the JIT, the two-image launcher, the inline launcher ------------------------ */
typedef int (*gemm_aot)(const void *, const int64_t *, const int64_t *, const void *, const int64_t *, const int64_t *,
                        const void *, const int64_t *, const int64_t *, void *);
typedef int (*bs_aot)(const void *, const int64_t *, const int64_t *, const void *, const int64_t *, const int64_t *,
                      const void *, const int64_t *, const int64_t *, const void *, const int64_t *, const int64_t *,
                      const void *, const int64_t *, const int64_t *, void *);
typedef struct timed {
  tilec_kernel *jit;   /* variant 0 */
  tilec_arg *args;
  int nargs;
  gemm_aot g[2];       /* variants 1, 2 (gemm) */
  bs_aot bs[2];        /* or these (block-scaled) */
  const void *ptr[5];
  const int64_t *shape[5], *strides[5];
} timed;

static int launch_variant(const timed *t, int v) {
  if (v == 0) return tilec_kernel_launch(t->jit, t->args, t->nargs, NULL) == TILEC_OK ? 0 : -1;
  if (t->g[0])
    return t->g[v - 1](t->ptr[0], t->shape[0], t->strides[0], t->ptr[1], t->shape[1], t->strides[1], t->ptr[2],
                       t->shape[2], t->strides[2], NULL);
  return t->bs[v - 1](t->ptr[0], t->shape[0], t->strides[0], t->ptr[1], t->shape[1], t->strides[1], t->ptr[2],
                      t->shape[2], t->strides[2], t->ptr[3], t->shape[3], t->strides[3], t->ptr[4], t->shape[4],
                      t->strides[4], NULL);
}

/* ms a launch of each variant: 7 rounds of 20 launches, the order rotated each round; medians. */
static void time_variants(const char *what, const timed *t, double flops) {
  enum { ROUNDS = 7, N = 20 };
  double ms[3][ROUNDS];
  for (int v = 0; v < 3; v++)
    for (int i = 0; i < 3; i++) GPU_EXPECT(launch_variant(t, v) == 0, "%s: variant %d did not launch", what, v);
  gpu_check(gpu.cuCtxSynchronize(), "sync");
  for (int r = 0; r < ROUNDS; r++)
    for (int j = 0; j < 3; j++) {
      int v = (r + j) % 3;
      double t0 = gpu_now_ms();
      for (int i = 0; i < N; i++) launch_variant(t, v);
      gpu_check(gpu.cuCtxSynchronize(), "sync");
      ms[v][r] = (gpu_now_ms() - t0) / N;
    }
  for (int v = 0; v < 3; v++) qsort(ms[v], ROUNDS, sizeof(double), cmp_double);
  double m0 = ms[0][ROUNDS / 2], m1 = ms[1][ROUNDS / 2], m2 = ms[2][ROUNDS / 2];
  printf("timing %-34s JIT %.4f ms (%.0f TFLOP/s), AOT two images %.4f (%.3fx the JIT), AOT inline %.4f (%.3fx the "
         "two-image launcher's time)\n", what, m0, flops / m0 / 1e9, m1, m1 / m0, m2, m2 / m1);
}

static CUdeviceptr dev_random(size_t n, const char *dtype) {
  size_t bytes = n * (size_t)gpu_dtype_bytes(dtype);
  void *h = malloc(bytes);
  gpu_fill_random(h, n, dtype);
  CUdeviceptr d;
  gpu_check(gpu.cuMemAlloc(&d, bytes), "alloc");
  gpu_check(gpu.cuMemcpyHtoD(d, h, bytes), "h2d");
  free(h);
  return d;
}

static void compare_dev(const char *what, CUdeviceptr a, CUdeviceptr b, size_t n) {
  buf x = {.d = a, .n = n, .bytes = n * 2}, y = {.d = b, .n = n, .bytes = n * 2};
  compare(what, &x, &y);
}

static void timing(tilec_kernel *kg) {
  const int64_t M = 4096, N = 4096, K = 4096;
  /* gemm.tile, bf16 */
  {
    int64_t a[2] = {M, K}, b[2] = {K, N}, c[2] = {M, N};
    buf A = make(2, a, 0, true), B = make(2, b, 0, true), C0 = make(2, c, 0, false), C1 = make(2, c, 0, false),
        C2 = make(2, c, 0, false);
    DLTensor t[3] = {dl(&A), dl(&B), dl(&C0)};
    tilec_arg args[3] = {{.u.tensor = &t[0]}, {.u.tensor = &t[1]}, {.u.tensor = &t[2]}};
    timed tg = {.jit = kg, .args = args, .nargs = 3, .g = {aot_gpu_gemm_cutlass_gemm, aot_gpu_gemmi_cutlass_gemm},
                .ptr = {(void *)(uintptr_t)A.d, (void *)(uintptr_t)B.d, (void *)(uintptr_t)C1.d},
                .shape = {A.shape, B.shape, C1.shape}, .strides = {A.strides, B.strides, C1.strides}};
    GPU_EXPECT(aot_gpu_gemmi_cutlass_gemm(tg.ptr[0], A.shape, A.strides, tg.ptr[1], B.shape, B.strides,
                                          (void *)(uintptr_t)C2.d, C2.shape, C2.strides, NULL) == 0,
               "aot inline gemm: %s", aot_gpu_gemmi_last_error());
    time_variants("cutlass_gemm bf16 4096^3", &tg, 2.0 * M * N * K);
    compare_dev("timing: gemm two images vs JIT", C1.d, C0.d, C0.n);
    compare_dev("timing: gemm inline vs JIT", C2.d, C0.d, C0.n);
    gpu.cuMemFree(A.d), gpu.cuMemFree(B.d), gpu.cuMemFree(C0.d), gpu.cuMemFree(C1.d), gpu.cuMemFree(C2.d);
  }
  /* the wide block-scaled fp8 GEMM (examples/gemm_fp8_blockscale.tile) */
  {
    tilec_program *pb = NULL;
    tilec_options *o = NULL;
    tilec_options_create(&o);
    tilec_options_set_arch(o, "sm_90a");
    char path[4096]; /* (beside the examples: TILEC_EXAMPLES/../bench/variants) */
    const char *ex = getenv("TILEC_EXAMPLES") ? getenv("TILEC_EXAMPLES") : TILEC_SOURCE_DIR "/examples";
    snprintf(path, sizeof path, "%s/gemm_fp8_blockscale.tile", ex);
    if (tilec_program_create_from_file(&pb, path, o) != TILEC_OK) {
      printf("FAIL: %s: %s\n", path, pb ? tilec_program_log(pb) : "cannot read");
      failures++;
      tilec_options_destroy(o);
      return;
    }
    tilec_options_destroy(o);
    tilec_kernel *kb = gpu_load_kernel(pb, "gemm_fp8_blockscale.tile", "cutlass_gemm_fp8_blockscale");
    if (!kb) { failures++; return; }
    const int64_t KB = K / 128, NB = N / 128;
    int64_t sa_[2] = {M, K}, sw_[2] = {N, K}, ssa[2] = {M, KB}, ssw[2] = {NB, KB}, sc[2] = {M, N};
    int64_t ta[2] = {K, 1}, tw[2] = {K, 1}, tsa[2] = {KB, 1}, tsw[2] = {KB, 1}, tc[2] = {N, 1};
    CUdeviceptr A = dev_random((size_t)(M * K), "f8e4m3"), W = dev_random((size_t)(N * K), "f8e4m3"),
                SA = dev_random((size_t)(M * KB), "f32"), SW = dev_random((size_t)(NB * KB), "f32"), C[3];
    for (int i = 0; i < 3; i++) {
      gpu_check(gpu.cuMemAlloc(&C[i], (size_t)(M * N) * 2), "alloc");
      gpu_check(gpu.cuMemsetD8(C[i], 0xFF, (size_t)(M * N) * 2), "poison");
    }
    DLTensor t[5] = {{.data = (void *)(uintptr_t)A, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLUInt, 8, 1}, .shape = sa_, .strides = ta},
                     {.data = (void *)(uintptr_t)W, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLUInt, 8, 1}, .shape = sw_, .strides = tw},
                     {.data = (void *)(uintptr_t)SA, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLFloat, 32, 1}, .shape = ssa, .strides = tsa},
                     {.data = (void *)(uintptr_t)SW, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLFloat, 32, 1}, .shape = ssw, .strides = tsw},
                     {.data = (void *)(uintptr_t)C[0], .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLBfloat, 16, 1}, .shape = sc, .strides = tc}};
    tilec_arg args[5] = {{.u.tensor = &t[0]}, {.u.tensor = &t[1]}, {.u.tensor = &t[2]}, {.u.tensor = &t[3]}, {.u.tensor = &t[4]}};
    timed tb = {.jit = kb, .args = args, .nargs = 5, .bs = {aot_gpu_bsw_cutlass_gemm_fp8_blockscale, aot_gpu_bswi_cutlass_gemm_fp8_blockscale},
                .ptr = {(void *)(uintptr_t)A, (void *)(uintptr_t)W, (void *)(uintptr_t)SA, (void *)(uintptr_t)SW, (void *)(uintptr_t)C[1]},
                .shape = {sa_, sw_, ssa, ssw, sc}, .strides = {ta, tw, tsa, tsw, tc}};
    GPU_EXPECT(aot_gpu_bswi_cutlass_gemm_fp8_blockscale(tb.ptr[0], sa_, ta, tb.ptr[1], sw_, tw, tb.ptr[2], ssa, tsa, tb.ptr[3],
                                                        ssw, tsw, (void *)(uintptr_t)C[2], sc, tc, NULL) == 0,
               "aot inline blockscale: %s", aot_gpu_bswi_last_error());
    time_variants("blockscale fp8 wide 4096^3", &tb, 2.0 * M * N * K);
    compare_dev("timing: blockscale wide two images vs JIT", C[1], C[0], (size_t)(M * N));
    compare_dev("timing: blockscale wide inline vs JIT", C[2], C[0], (size_t)(M * N));
    gpu.cuMemFree(A), gpu.cuMemFree(W), gpu.cuMemFree(SA), gpu.cuMemFree(SW);
    for (int i = 0; i < 3; i++) gpu.cuMemFree(C[i]);
    tilec_kernel_destroy(kb);
    tilec_program_destroy(pb);
  }
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
  /* 4. both images of each TMA kernel against the interpreter, ragged (gemm: 128x256 tiles) */
  gemm_images(pg, 257, 296, 136, 0, 0, "(every tensor fits a map: the TMA form)");
  gemm_images(pg, 257, 296, 136, 1, 0, "(A an offset view: the no-TMA image)");
  gemm_images(pg, 257, 296, 136, 0, 301, "(B's rows 301 apart: the no-TMA image)");
  gemm_images(pg, 130, 520, 72, 0, 0, "(the TMA form again)");
  attn_images(pc, 200, 0, 0, "(the TMA form)");
  attn_images(pc, 200, 1, 0, "(K an offset view: the no-TMA image)");
  attn_images(pc, 200, 0, 65, "(V's rows 65 apart: the no-TMA image)");
  /* 5. GPU time beside the JIT and the one-image inline launcher */
  const char *tm = getenv("GPU_AOT_TIMING");
  if (!tm || strcmp(tm, "0")) timing(kg);
  printf("%s: %d failure%s\n", failures ? "FAIL" : "PASS", failures, failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}
