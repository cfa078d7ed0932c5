/* test_launch_limits.c: the launcher's limits on a real GPU (the fake-driver
 * half is tests/torture/test_launch_limits.c).
 *  1. TILEC_CHECK_POINTERS=1: device buffers pass and the kernel's results
 *     are right; a host pointer labelled kDLCUDA, and a view reaching 1 GiB
 *     past its allocation, are refused before the launch.
 *  2. grid limits: 65535 programs on axis 1 and on axis 2 launch, every one
 *     runs (each program writes its own row, checked); 65536 is a launch
 *     error and writes nothing; 3,000,000 programs on axis 0 run.
 *  3. 64-bit offsets: a [65600, 32770] bf16 tensor (2^31 + 2.2M elements,
 *     4.3 GB), its last rows read and written right (their offsets pass
 *     2^31 elements and 2^32 bytes); the row before them untouched.
 *   usage: gpu_test_launch_limits   (exit 0 pass, 1 fail, 77 skip) */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"

static int failures;

static tilec_kernel *load_src(const char *src, const char *name, tilec_program **pp) {
  tilec_program *p = NULL;
  tilec_status st = tilec_program_create(&p, src, "limits.tile", NULL);
  tilec_kernel *k = NULL;
  if (st == TILEC_OK) st = tilec_kernel_load(p, name, 0, &k);
  if (st != TILEC_OK) {
    printf("FAIL: load %s: %s\n%s\n", name, tilec_status_string(st), p ? tilec_program_log(p) : "");
    if (st == TILEC_ERROR_NO_DEVICE) exit(GPU_SKIP);
    failures++;
    tilec_program_destroy(p);
    return NULL;
  }
  *pp = p;
  return k;
}

static DLTensor tensor(CUdeviceptr p, int ndim, int64_t *shape, uint8_t code, uint8_t bits) {
  return (DLTensor){.data = (void *)(uintptr_t)p, .device = {kDLCUDA, 0}, .ndim = ndim, .dtype = {code, bits, 1},
                    .shape = shape};
}

/* ---- 1. TILEC_CHECK_POINTERS=1 --------------------------------------------------------------- */
static const char vadd[] =
    "kernel vadd(X: tensor<f32>[N], Y: tensor<f32>[N], Z: tensor<f32>[N])\n"
    "    tiles(B = 256)\n    grid(cdiv(N, B))\n{\n    i = program_id(0) * B;\n"
    "    store(Z[i : i + B], load(X[i : i + B]) + load(Y[i : i + B]));\n}\n";

static void test_pointer_check(void) {
  setenv("TILEC_CHECK_POINTERS", "1", 1); /* read when the handle is made */
  tilec_program *p = NULL;
  tilec_kernel *k = load_src(vadd, "vadd", &p);
  unsetenv("TILEC_CHECK_POINTERS");
  if (!k) return;
  const int n = 1000;
  size_t bytes = (size_t)n * 4;
  float *x = malloc(bytes), *y = malloc(bytes), *z = malloc(bytes);
  gpu_fill_random(x, (size_t)n, "f32");
  gpu_fill_random(y, (size_t)n, "f32");
  CUdeviceptr dx, dy, dz;
  gpu_check(gpu.cuMemAlloc(&dx, bytes), "alloc");
  gpu_check(gpu.cuMemAlloc(&dy, bytes), "alloc");
  gpu_check(gpu.cuMemAlloc(&dz, bytes), "alloc");
  gpu_check(gpu.cuMemcpyHtoD(dx, x, bytes), "h2d");
  gpu_check(gpu.cuMemcpyHtoD(dy, y, bytes), "h2d");
  gpu_check(gpu.cuMemsetD8(dz, 0xFF, bytes), "poison");
  int64_t shape[1] = {n};
  DLTensor tx = tensor(dx, 1, shape, kDLFloat, 32), ty = tensor(dy, 1, shape, kDLFloat, 32),
           tz = tensor(dz, 1, shape, kDLFloat, 32);
  tilec_arg args[3] = {{.kind = TILEC_ARG_TENSOR, .u.tensor = &tx}, {.kind = TILEC_ARG_TENSOR, .u.tensor = &ty},
                       {.kind = TILEC_ARG_TENSOR, .u.tensor = &tz}};
  tilec_status st = tilec_kernel_launch(k, args, 3, NULL);
  GPU_EXPECT(st == TILEC_OK, "pointer check on device buffers: %s", tilec_kernel_error(k));
  gpu_check(gpu.cuCtxSynchronize(), "sync");
  gpu_check(gpu.cuMemcpyDtoH(z, dz, bytes), "d2h");
  int wrong = 0;
  for (int i = 0; i < n; i++) wrong += z[i] != x[i] + y[i];
  GPU_EXPECT(wrong == 0, "vadd with the pointer check on: %d of %d wrong", wrong, n);
  /* a host pointer said to be on the GPU */
  float *host = malloc(bytes);
  tz.data = host;
  st = tilec_kernel_launch(k, args, 3, NULL);
  GPU_EXPECT(st == TILEC_ERROR_LAUNCH && strstr(tilec_kernel_error(k), "argument 2 (Z)") &&
                 strstr(tilec_kernel_error(k), "TILEC_CHECK_POINTERS=1"),
             "a host pointer was not refused: %d %s", (int)st, tilec_kernel_error(k));
  printf("host pointer: %s\n", tilec_kernel_error(k));
  /* a view reaching 1 GiB past its 4000-byte allocation */
  int64_t long_shape[1] = {(int64_t)1 << 28};
  tz = tensor(dz, 1, long_shape, kDLFloat, 32);
  tx = tensor(dx, 1, long_shape, kDLFloat, 32);
  ty = tensor(dy, 1, long_shape, kDLFloat, 32);
  st = tilec_kernel_launch(k, args, 3, NULL);
  GPU_EXPECT(st == TILEC_ERROR_LAUNCH && strstr(tilec_kernel_error(k), "its last byte"),
             "a view past its allocation was not refused: %d %s", (int)st, tilec_kernel_error(k));
  printf("view past its allocation: %s\n", tilec_kernel_error(k));
  gpu_check(gpu.cuCtxSynchronize(), "sync (nothing may have run)");
  gpu.cuMemFree(dx); gpu.cuMemFree(dy); gpu.cuMemFree(dz);
  free(x); free(y); free(z); free(host);
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

/* ---- 2. grid limits -------------------------------------------------------------------------- */
/* Y[m, :] = X[m, :] + 1 with m the program id on axis `axis` */
static void test_grid_axis(int axis, int64_t rows, bool expect_ok) {
  char src[512], name[16];
  snprintf(name, sizeof name, "row%d", axis);
  snprintf(src, sizeof src,
           "kernel %s(X: tensor<f32>[M, 4], Y: tensor<f32>[M, 4])\n    tiles(B = 4)\n    grid(%s)\n{\n"
           "    m = program_id(%d);\n    store(Y[m, 0 : B], load(X[m, 0 : B]) + 1.0);\n}\n",
           name, axis == 0 ? "M" : axis == 1 ? "1, M" : "1, 1, M", axis);
  tilec_program *p = NULL;
  tilec_kernel *k = load_src(src, name, &p);
  if (!k) return;
  size_t n = (size_t)rows * 4, bytes = n * 4;
  float *x = malloc(bytes), *y = malloc(bytes);
  gpu_fill_random(x, n, "f32");
  CUdeviceptr dx, dy;
  gpu_check(gpu.cuMemAlloc(&dx, bytes), "alloc");
  gpu_check(gpu.cuMemAlloc(&dy, bytes), "alloc");
  gpu_check(gpu.cuMemcpyHtoD(dx, x, bytes), "h2d");
  gpu_check(gpu.cuMemsetD8(dy, 0xFF, bytes), "poison");
  int64_t shape[2] = {rows, 4};
  DLTensor tx = tensor(dx, 2, shape, kDLFloat, 32), ty = tensor(dy, 2, shape, kDLFloat, 32);
  tilec_arg args[2] = {{.kind = TILEC_ARG_TENSOR, .u.tensor = &tx}, {.kind = TILEC_ARG_TENSOR, .u.tensor = &ty}};
  tilec_status st = tilec_kernel_launch(k, args, 2, NULL);
  gpu_check(gpu.cuCtxSynchronize(), "sync");
  gpu_check(gpu.cuMemcpyDtoH(y, dy, bytes), "d2h");
  size_t wrong = 0, written = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t bits;
    memcpy(&bits, &y[i], 4);
    written += bits != 0xFFFFFFFFu;
    wrong += y[i] != x[i] + 1.0f;
  }
  if (expect_ok) {
    GPU_EXPECT(st == TILEC_OK, "axis %d with %lld programs: %s", axis, (long long)rows, tilec_kernel_error(k));
    GPU_EXPECT(wrong == 0, "axis %d with %lld programs: %zu of %zu elements wrong", axis, (long long)rows, wrong, n);
  } else {
    GPU_EXPECT(st == TILEC_ERROR_LAUNCH && strstr(tilec_kernel_error(k), "programs; device 0"),
               "axis %d with %lld programs: not refused (%d): %s", axis, (long long)rows, (int)st, tilec_kernel_error(k));
    GPU_EXPECT(written == 0, "axis %d with %lld programs: refused, yet %zu elements written", axis, (long long)rows,
               written);
    printf("axis %d, %lld programs: %s\n", axis, (long long)rows, tilec_kernel_error(k));
  }
  gpu.cuMemFree(dx); gpu.cuMemFree(dy);
  free(x); free(y);
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

/* ---- 3. 64-bit offsets ------------------------------------------------------------------------ */
static uint16_t bf16_of(float f) { uint32_t u; memcpy(&u, &f, 4); return (uint16_t)(u >> 16); }
static float float_of(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }

static void test_big_tensor(void) {
  static const char src[] =
      "kernel tail(X: tensor<bf16>[R, C], Y: tensor<bf16>[R, C], r0: i32)\n    tiles(BC = 1024)\n"
      "    grid(R - r0, cdiv(C, BC))\n{\n    r = r0 + program_id(0);  c0 = program_id(1) * BC;\n"
      "    store(Y[r, c0 : c0 + BC], cast<bf16>(cast<f32>(load(X[r, c0 : c0 + BC])) * 2.0));\n}\n";
  const int64_t R = 65600, C = 32770, r0 = R - 3;
  size_t bytes = (size_t)R * (size_t)C * 2;
  tilec_program *p = NULL;
  tilec_kernel *k = load_src(src, "tail", &p);
  if (!k) return;
  CUdeviceptr dx, dy;
  if (gpu.cuMemAlloc(&dx, bytes) != CUDA_SUCCESS || gpu.cuMemAlloc(&dy, bytes) != CUDA_SUCCESS) {
    printf("FAIL: cannot allocate 2 x %zu bytes\n", bytes);
    failures++;
    return;
  }
  /* rows r0 - 1 .. R - 1 of X random, Y poisoned everywhere */
  size_t row = (size_t)C, nrows = (size_t)(R - r0 + 1), off = (size_t)(r0 - 1) * row;
  uint16_t *x = malloc(nrows * row * 2), *y = malloc(nrows * row * 2);
  for (size_t i = 0; i < nrows * row; i++) x[i] = bf16_of((float)gpu_rand_uniform(0.1, 2.0));
  gpu_check(gpu.cuMemcpyHtoD(dx + off * 2, x, nrows * row * 2), "h2d");
  gpu_check(gpu.cuMemsetD8(dy, 0xFF, bytes), "poison");
  int64_t shape[2] = {R, C};
  DLTensor tx = tensor(dx, 2, shape, kDLBfloat, 16), ty = tensor(dy, 2, shape, kDLBfloat, 16);
  tilec_arg args[3] = {{.kind = TILEC_ARG_TENSOR, .u.tensor = &tx}, {.kind = TILEC_ARG_TENSOR, .u.tensor = &ty},
                       {.kind = TILEC_ARG_I32, .u.i32 = (int32_t)r0}};
  tilec_status st = tilec_kernel_launch(k, args, 3, NULL);
  GPU_EXPECT(st == TILEC_OK, "tail of a 2^31+ element tensor: %s", tilec_kernel_error(k));
  gpu_check(gpu.cuCtxSynchronize(), "sync");
  gpu_check(gpu.cuMemcpyDtoH(y, dy + off * 2, nrows * row * 2), "d2h");
  size_t wrong = 0, touched = 0;
  for (size_t i = 0; i < row; i++) touched += y[i] != 0xFFFF; /* row r0 - 1: not the kernel's */
  for (size_t i = row; i < nrows * row; i++) wrong += float_of(y[i]) != float_of(x[i]) * 2.0f;
  GPU_EXPECT(wrong == 0, "the last %lld rows (elements past 2^31): %zu of %zu wrong", (long long)(R - r0), wrong,
             (nrows - 1) * row);
  GPU_EXPECT(touched == 0, "row %lld (before the kernel's rows) has %zu elements written", (long long)(r0 - 1), touched);
  printf("64-bit offsets: rows %lld..%lld of [%lld, %lld] bf16 (last element %lld, byte offset %zu): %s\n",
         (long long)r0, (long long)R - 1, (long long)R, (long long)C, (long long)(R * C - 1), bytes - 2,
         wrong || touched ? "WRONG" : "right");
  gpu.cuMemFree(dx); gpu.cuMemFree(dy);
  free(x); free(y);
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

int main(void) {
  int rc = gpu_init();
  if (rc) return rc;
  gpu_seed();
  bool sanitizer = getenv("TILEC_GPU_SANITIZER_RUN") != NULL;
  struct { const char *name; int before; } cases[8];
  int nc = 0;
#define CASE(label, call) do { cases[nc].name = label; cases[nc].before = failures; call; nc++; } while (0)
  CASE("pointer check (TILEC_CHECK_POINTERS=1)", test_pointer_check());
  CASE("grid axis 1 = 65535 runs", test_grid_axis(1, 65535, true));
  CASE("grid axis 1 = 65536 refused", test_grid_axis(1, 65536, false));
  CASE("grid axis 2 = 65535 runs", test_grid_axis(2, 65535, true));
  CASE("grid axis 2 = 65536 refused", test_grid_axis(2, 65536, false));
  CASE(sanitizer ? "grid axis 0 = 200000 runs" : "grid axis 0 = 3000000 runs",
       test_grid_axis(0, sanitizer ? 200000 : 3000000, true));
  if (!sanitizer) CASE("64-bit offsets (4.3 GB tensor)", test_big_tensor());
  printf("\n%-44s %s\n", "case", "result");
  for (int i = 0; i < nc; i++) {
    int after = i + 1 < nc ? cases[i + 1].before : failures;
    printf("%-44s %s\n", cases[i].name, after > cases[i].before ? "FAIL" : "PASS");
  }
  printf("%s: %d failure%s\n", failures ? "FAIL" : "PASS", failures, failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}
