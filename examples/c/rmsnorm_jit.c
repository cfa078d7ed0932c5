/* rmsnorm_jit.c: a complete JIT example.  Compiles an RMSNorm tile kernel,
 * loads it on GPU 0 (through tilec's kernel cache: run it twice and the second
 * run skips the compile), launches it on device buffers, checks the result
 * against a plain C RMSNorm and prints the time per launch.
 *
 *   ./example_rmsnorm_jit [ROWS [COLS]]        (default 4096 x 4096)
 *
 * The CUDA driver is opened with dlopen, as tilec itself does, so this
 * builds without the CUDA toolkit; a real program would use cuda.h or its
 * framework's allocator (any kDLCUDA DLTensor works). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tilec.h"

static const char rmsnorm_src[] =
    "kernel rmsnorm(X: tensor<bf16>[R, C], W: tensor<bf16>[C], Y: tensor<bf16>[R, C], eps: f32)\n"
    "    tiles(BC = 4096)\n"
    "    grid(R)\n"
    "{\n"
    "    r = program_id(0);\n"
    "    x = cast<f32>(load(X[r, 0 : BC]));\n"
    "    inv = rsqrt(reduce_sum(x * x, 0) / C + eps);\n"
    "    w = cast<f32>(load(W[0 : BC]));\n"
    "    store(Y[r, 0 : BC], cast<bf16>(x * inv * w));\n"
    "}\n";

/* The few driver calls this example needs (CUDA Driver API, v2 ABI). */
typedef unsigned long long devptr;
static int (*cuMemAlloc)(devptr *, size_t);
static int (*cuMemFree)(devptr);
static int (*cuMemcpyHtoD)(devptr, const void *, size_t);
static int (*cuMemcpyDtoH)(void *, devptr, size_t);
static int (*cuCtxSynchronize)(void);

static float bf16_to_f32(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
static uint16_t f32_to_bf16(float f) { /* round to nearest even */
  uint32_t u; memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7FFF + (u >> 16 & 1)) >> 16);
}
/* 1/sqrt(v) for v > 0 without libm (the example links only libtilec):
 * a bit-trick estimate refined by Newton steps to double precision. */
static double inv_sqrt(double v) {
  float f = (float)v;
  uint32_t u;
  memcpy(&u, &f, 4);
  u = 0x5f3759dfu - (u >> 1);
  memcpy(&f, &u, 4);
  double y = f;
  for (int i = 0; i < 5; i++) y = y * (1.5 - 0.5 * v * y * y);
  return y;
}
static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#define CU(call) do { int r_ = (call); if (r_) { fprintf(stderr, "%s failed: CUDA error %d\n", #call, r_); return 1; } } while (0)

int main(int argc, char **argv) {
  int64_t rows = argc > 1 ? atoll(argv[1]) : 4096, cols = argc > 2 ? atoll(argv[2]) : 4096;
  if (rows < 1 || cols < 1 || cols > 4096) {
    fprintf(stderr, "usage: %s [ROWS [COLS <= 4096]]\n", argv[0]);
    return 2;
  }
  /* 1. compile and load (the load compiles to PTX only on a cache miss) */
  tilec_program *prog = NULL;
  tilec_kernel *kern = NULL;
  double t0 = now_ms();
  tilec_status st = tilec_program_create(&prog, rmsnorm_src, "rmsnorm.tile", NULL);
  if (st == TILEC_OK) st = tilec_kernel_load(prog, "rmsnorm", 0, &kern);
  if (st != TILEC_OK) {
    fprintf(stderr, "%s\n%s", tilec_status_string(st), prog ? tilec_program_log(prog) : "");
    tilec_program_destroy(prog);
    return st == TILEC_ERROR_CUDA || st == TILEC_ERROR_NO_DEVICE ? 77 : 1;
  }
  printf("loaded rmsnorm in %.1f ms (%s)\n", now_ms() - t0, tilec_kernel_origin(kern));

  /* 2. device buffers (tilec made device 0's primary context current) */
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
  if (!cuda) return 77;
  *(void **)&cuMemAlloc = dlsym(cuda, "cuMemAlloc_v2");
  *(void **)&cuMemFree = dlsym(cuda, "cuMemFree_v2");
  *(void **)&cuMemcpyHtoD = dlsym(cuda, "cuMemcpyHtoD_v2");
  *(void **)&cuMemcpyDtoH = dlsym(cuda, "cuMemcpyDtoH_v2");
  *(void **)&cuCtxSynchronize = dlsym(cuda, "cuCtxSynchronize");
  size_t n = (size_t)(rows * cols);
  uint16_t *x = malloc(n * 2), *w = malloc((size_t)cols * 2), *y = malloc(n * 2);
  srand(12345);
  for (size_t i = 0; i < n; i++) x[i] = f32_to_bf16((float)rand() / RAND_MAX * 4.0f - 2.0f);
  for (int64_t i = 0; i < cols; i++) w[i] = f32_to_bf16(0.5f + (float)rand() / RAND_MAX);
  devptr dx, dw, dy;
  CU(cuMemAlloc(&dx, n * 2));
  CU(cuMemAlloc(&dw, (size_t)cols * 2));
  CU(cuMemAlloc(&dy, n * 2));
  CU(cuMemcpyHtoD(dx, x, n * 2));
  CU(cuMemcpyHtoD(dw, w, (size_t)cols * 2));

  /* 3. launch: arguments in parameter order; the grid comes from the kernel */
  int64_t shape_x[2] = {rows, cols}, shape_w[1] = {cols};
  DLTensor tx = {.data = (void *)(uintptr_t)dx, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLBfloat, 16, 1}, .shape = shape_x};
  DLTensor tw = {.data = (void *)(uintptr_t)dw, .device = {kDLCUDA, 0}, .ndim = 1, .dtype = {kDLBfloat, 16, 1}, .shape = shape_w};
  DLTensor ty = tx;
  ty.data = (void *)(uintptr_t)dy;
  const float eps = 1e-6f;
  tilec_arg args[4] = {{.kind = TILEC_ARG_TENSOR, .u.tensor = &tx}, {.kind = TILEC_ARG_TENSOR, .u.tensor = &tw},
                       {.kind = TILEC_ARG_TENSOR, .u.tensor = &ty}, {.kind = TILEC_ARG_F32, .u.f32 = eps}};
  if ((st = tilec_kernel_launch(kern, args, 4, NULL)) != TILEC_OK) {
    fprintf(stderr, "launch: %s\n", tilec_kernel_error(kern));
    return 1;
  }
  CU(cuCtxSynchronize());
  const int reps = 100;
  t0 = now_ms();
  for (int i = 0; i < reps; i++) tilec_kernel_launch(kern, args, 4, NULL);
  CU(cuCtxSynchronize());
  double ms = (now_ms() - t0) / reps;
  CU(cuMemcpyDtoH(y, dy, n * 2));

  /* 4. check against plain C */
  double max_err = 0;
  size_t bad = 0;
  for (int64_t r = 0; r < rows; r++) {
    double ss = 0;
    for (int64_t c = 0; c < cols; c++) { double v = bf16_to_f32(x[r * cols + c]); ss += v * v; }
    double inv = inv_sqrt(ss / (double)cols + eps);
    for (int64_t c = 0; c < cols; c++) {
      double want = bf16_to_f32(x[r * cols + c]) * inv * bf16_to_f32(w[c]);
      double err = bf16_to_f32(y[r * cols + c]) - want;
      if (err < 0) err = -err;
      if (err > max_err) max_err = err;
      if (!(err <= 1e-2 * (want < 0 ? -want : want) + 1e-2)) bad++;
    }
  }
  double gbps = 2.0 * (double)n * 2 / (ms * 1e-3) / 1e9;
  printf("rmsnorm %lld x %lld bf16: %.4f ms per launch (%.0f GB/s), max abs error %.3g, %zu bad\n",
         (long long)rows, (long long)cols, ms, gbps, max_err, bad);
  cuMemFree(dx); cuMemFree(dw); cuMemFree(dy);
  free(x); free(w); free(y);
  tilec_kernel_destroy(kern);
  tilec_program_destroy(prog);
  return bad ? 1 : 0;
}
