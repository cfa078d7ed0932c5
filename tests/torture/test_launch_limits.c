/* test_launch_limits.c: the launcher at and past the device's limits, and
 * misused (ctest -L torture), on the fake driver (tests/unit/fake_cuda.h),
 * whose device limits, function attributes and pointer attributes each
 * test sets:
 *  - grids past the limits of axis 0 (2^31-1) and axes 1, 2 (65535), the
 *    attention example with Z * H > 65535: a launch error naming the axis,
 *    the size and the device's limit, nothing launched; at the limit: launched;
 *  - shared memory and registers past the device: a load error naming the
 *    kernel and both numbers;
 *  - tensors past 2^31 elements: packed with 64-bit strides; one dimension
 *    past 2^31-1: refused with a message;
 *  - TILEC_CHECK_POINTERS=1: host, unknown, other-device, other-context and
 *    too-small memory refused before the launch; off by default (no query).
 * Each Test is its own ctest test (torture.launch.NAME). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "tilec.h"

#define FAKE_NDEVICES 2
#include "fake_cuda.h"

static void **last_params;
static CUresult f_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                         unsigned smem, CUstream s, void **params, void **extra) {
  (void)f; (void)bx; (void)by; (void)bz; (void)smem; (void)s; (void)extra;
  calls.launches++;
  calls.grid[0] = gx; calls.grid[1] = gy; calls.grid[2] = gz;
  last_params = params;
  return 0;
}
static tl_cuda fake = {FAKE_CUDA_ENTRIES, .cuLaunchKernel = f_launch};

static char cache_dir[64];
static void setup(void) {
  snprintf(cache_dir, sizeof cache_dir, "/tmp/tilec-limits-XXXXXX");
  cr_assert(mkdtemp(cache_dir));
  setenv("TILEC_CACHE_DIR", cache_dir, 1);
  unsetenv("TILEC_CHECK_POINTERS");
}
static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
  if (system(cmd) != 0) cr_log_warn("could not remove %s", cache_dir);
}
TestSuite(launch, .init = setup, .fini = teardown);

static tilec_program *program_of(const char *src) {
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create(&p, src, "limits.tile", NULL), TILEC_OK);
  return p;
}
static tilec_kernel *load(tilec_program *p, const char *name) {
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load(p, name, 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  return k;
}

/* Z[m, :] = X[m, :] over grid (cdiv(N, B), M, L) */
static const char grid3[] =
    "kernel g3(X: tensor<f32>[L, M, N], Z: tensor<f32>[L, M, N])\n"
    "    tiles(B = 128)\n    grid(cdiv(N, B), M, L)\n{\n"
    "    n0 = program_id(0) * B;  m = program_id(1);  l = program_id(2);\n"
    "    store(Z[l, m, n0 : n0 + B], load(X[l, m, n0 : n0 + B]));\n}\n";

static tilec_status launch_g3(tilec_kernel *k, int64_t L, int64_t M, int64_t N) {
  int64_t shape[3] = {L, M, N};
  DLTensor x = {.data = (void *)(uintptr_t)0x10000000u, .device = {kDLCUDA, 0}, .ndim = 3, .dtype = {kDLFloat, 32, 1},
                .shape = shape};
  DLTensor z = x;
  z.data = (void *)(uintptr_t)0x20000000u;
  tilec_arg args[2] = {{.kind = TILEC_ARG_TENSOR, .u.tensor = &x}, {.kind = TILEC_ARG_TENSOR, .u.tensor = &z}};
  return tilec_kernel_launch(k, args, 2, NULL);
}

Test(launch, grid_axes_1_and_2_above_65535) {
  cr_assert(tl_rt_driver_inject(&fake));
  tilec_program *p = program_of(grid3);
  tilec_kernel *k = load(p, "g3");
  /* at the limits: launched as they are */
  cr_assert_eq(launch_g3(k, 65535, 1, 100), TILEC_OK, "%s", tilec_kernel_error(k));
  cr_assert(calls.grid[0] == 1 && calls.grid[1] == 1 && calls.grid[2] == 65535);
  cr_assert_eq(launch_g3(k, 1, 65535, 100), TILEC_OK, "%s", tilec_kernel_error(k));
  cr_assert_eq(calls.grid[1], 65535u);
  int launches = calls.launches;
  /* one past: refused, nothing launched, the message says which axis and why */
  cr_assert_eq(launch_g3(k, 1, 65536, 100), TILEC_ERROR_LAUNCH);
  char e[1024];
  snprintf(e, sizeof e, "%s", tilec_kernel_error(k));
  cr_assert(strstr(e, "launch g3:") && strstr(e, "axis 1 has 65536 programs") && strstr(e, "at most 65535"), "%s", e);
  cr_assert(strstr(e, "nothing was launched"), "%s", e);
  cr_assert_eq(launch_g3(k, 65536, 1, 100), TILEC_ERROR_LAUNCH);
  cr_assert(strstr(tilec_kernel_error(k), "axis 2 has 65536 programs"), "%s", tilec_kernel_error(k));
  cr_assert_eq(calls.launches, launches, "a grid past the limit reached the driver");
  /* a good launch after the errors is not disturbed by them */
  cr_assert_eq(launch_g3(k, 2, 3, 300), TILEC_OK);
  cr_assert(calls.grid[0] == 3 && calls.grid[1] == 3 && calls.grid[2] == 2);
  printf("grid_axes_1_and_2_above_65535: %s\n", e);
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

/* The device's own limits are the ones checked (a smaller device here). */
Test(launch, grid_limits_come_from_the_device) {
  fake_limits.max_grid[0] = 1000;
  fake_limits.max_grid[1] = 7;
  fake_limits.max_grid[2] = 3;
  cr_assert(tl_rt_driver_inject(&fake));
  tilec_program *p = program_of(grid3);
  tilec_kernel *k = load(p, "g3");
  cr_assert_eq(launch_g3(k, 3, 7, 1000 * 128), TILEC_OK, "%s", tilec_kernel_error(k));
  cr_assert_eq(launch_g3(k, 3, 7, 1000 * 128 + 1), TILEC_ERROR_LAUNCH);
  cr_assert(strstr(tilec_kernel_error(k), "axis 0 has 1001 programs") &&
            strstr(tilec_kernel_error(k), "limits 1000 x 7 x 3"), "%s", tilec_kernel_error(k));
  cr_assert_eq(launch_g3(k, 3, 8, 100), TILEC_ERROR_LAUNCH);
  cr_assert_eq(launch_g3(k, 4, 7, 100), TILEC_ERROR_LAUNCH);
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

/* Axis 0: grid sizes are i32, so 2^31 - 1 programs is the most a grid can
 * say; one whose i32 arithmetic would wrap (n * m past 2^31 - 1, wrapping
 * to a small positive grid, or N + B - 1 in cdiv) is refused, never
 * launched with the wrapped size. */
Test(launch, grid_axis_0_above_2_pow_31_minus_1) {
  cr_assert(tl_rt_driver_inject(&fake));
  tilec_program *p = program_of("kernel wide(Y: tensor<f32>[N], n: i32, m: i32)\n    tiles(B = 128)\n"
                                "    grid(n * m)\n{\n    i = program_id(0) % N;\n"
                                "    store(Y[i : i + 1], load(Y[i : i + 1]) * 2.0);\n}\n");
  tilec_kernel *k = load(p, "wide");
  int64_t shape[1] = {1000};
  DLTensor y = {.data = (void *)(uintptr_t)0x10000000u, .device = {kDLCUDA, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1},
                .shape = shape};
  tilec_arg args[3] = {{.kind = TILEC_ARG_TENSOR, .u.tensor = &y}, {.kind = TILEC_ARG_I32, .u.i32 = 1},
                       {.kind = TILEC_ARG_I32, .u.i32 = 2147483647}};
  cr_assert_eq(tilec_kernel_launch(k, args, 3, NULL), TILEC_OK, "%s", tilec_kernel_error(k));
  cr_assert_eq(calls.grid[0], 2147483647u);
  int launches = calls.launches;
  /* (2^25 + 1) * 128 = 2^32 + 128 wraps to 128 in i32 */
  args[1].u.i32 = 33554433;
  args[2].u.i32 = 128;
  cr_assert_eq(tilec_kernel_launch(k, args, 3, NULL), TILEC_ERROR_LAUNCH, "a wrapped grid was launched");
  char e[1024];
  snprintf(e, sizeof e, "%s", tilec_kernel_error(k));
  cr_assert(strstr(e, "33554433 * 128 = 4294967424 overflows i32") && strstr(e, "a wrong grid"), "%s", e);
  args[1].u.i32 = 65536;
  args[2].u.i32 = 32768; /* 2^31 */
  cr_assert_eq(tilec_kernel_launch(k, args, 3, NULL), TILEC_ERROR_LAUNCH);
  cr_assert(strstr(tilec_kernel_error(k), "= 2147483648 overflows i32"), "%s", tilec_kernel_error(k));
  cr_assert_eq(calls.launches, launches);
  /* cdiv(N, B) with N = 2^31 - 1: N + B - 1 overflows */
  tilec_program *q = program_of(grid3);
  tilec_kernel *g = load(q, "g3");
  cr_assert_eq(launch_g3(g, 1, 1, 2147483647), TILEC_ERROR_LAUNCH);
  cr_assert(strstr(tilec_kernel_error(g), "overflows i32"), "%s", tilec_kernel_error(g));
  cr_assert_eq(calls.launches, launches);
  tilec_kernel_destroy(g);
  tilec_program_destroy(q);
  printf("grid_axis_0_above_2_pow_31_minus_1: %s\n", e);
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

/* attn.tile's grid(cdiv(S, BM), Z * H): Z * H = 65536 is refused, with the
 * remedy; 65535 launches. */
Test(launch, attention_with_z_times_h_above_65535) {
  cr_assert(tl_rt_driver_inject(&fake));
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create_from_file(&p, TILEC_SOURCE_DIR "/examples/attn.tile", NULL), TILEC_OK);
  tilec_kernel *k = load(p, "attn_fwd");
  int64_t zh[][2] = {{5, 13107}, {256, 256}, {1, 65536}};
  for (int c = 0; c < 3; c++) {
    int64_t shape[4] = {zh[c][0], zh[c][1], 200, 64};
    DLTensor t[4];
    tilec_arg args[5];
    for (int i = 0; i < 4; i++) {
      t[i] = (DLTensor){.data = (void *)(uintptr_t)(0x10000000u * (i + 1)), .device = {kDLCUDA, 0}, .ndim = 4,
                        .dtype = {kDLBfloat, 16, 1}, .shape = shape};
      args[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &t[i]};
    }
    args[4] = (tilec_arg){.kind = TILEC_ARG_F32, .u.f32 = 0.125f};
    tilec_status st = tilec_kernel_launch(k, args, 5, NULL);
    if (c == 0) {
      cr_assert_eq(st, TILEC_OK, "%s", tilec_kernel_error(k));
      cr_assert(calls.grid[0] == 2 && calls.grid[1] == 65535);
    } else {
      cr_assert_eq(st, TILEC_ERROR_LAUNCH, "Z=%lld H=%lld launched", (long long)zh[c][0], (long long)zh[c][1]);
      const char *e = tilec_kernel_error(k);
      cr_assert(strstr(e, "launch attn_fwd:") && strstr(e, "axis 1 has 65536 programs") &&
                strstr(e, "put the largest grid dimension on axis 0"), "%s", e);
      if (c == 1) printf("attention_with_z_times_h_above_65535: %s\n", e);
    }
  }
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

static const char vadd[] =
    "kernel vadd(X: tensor<f32>[N], Y: tensor<f32>[N], Z: tensor<f32>[N])\n"
    "    tiles(B = 128)\n    grid(cdiv(N, B))\n{\n    i = program_id(0) * B;\n"
    "    store(Z[i : i + B], load(X[i : i + B]) + load(Y[i : i + B]));\n}\n";

/* Shared memory past the device (static or dynamic): a load error naming
 * the kernel, what it needs and what the device allows. */
Test(launch, shared_memory_past_the_device_limit) {
  fake_limits.static_smem = 300000;
  cr_assert(tl_rt_driver_inject(&fake));
  tilec_program *p = program_of(vadd);
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load(p, "vadd", 0, &k), TILEC_ERROR_UNSUPPORTED);
  cr_assert_null(k);
  const char *log = tilec_program_log(p);
  cr_assert(strstr(log, "load vadd:") && strstr(log, "needs 300000 bytes of shared memory per block") &&
            strstr(log, "allows 232448"), "%s", log);
  printf("shared_memory_past_the_device_limit (static): %s", strstr(log, "tilec: error"));
  tilec_program_destroy(p);
  /* dynamic: cutlass_gemm's TMA ring against a device of 64 KiB */
  fake_limits.static_smem = 0;
  fake_limits.max_smem_optin = 65536;
  /* (the device was opened with the old opt-in limit: a second device, opened now) */
  cr_assert_eq(tilec_program_create_from_file(&p, TILEC_SOURCE_DIR "/examples/gemm.tile", NULL), TILEC_OK);
  cr_assert_eq(tilec_kernel_load(p, "cutlass_gemm", 1, &k), TILEC_ERROR_UNSUPPORTED, "%s", tilec_program_log(p));
  log = tilec_program_log(p);
  cr_assert(strstr(log, "load cutlass_gemm:") && strstr(log, "dynamic + 0 static") && strstr(log, "allows 65536"), "%s",
            log);
  printf("shared_memory_past_the_device_limit (dynamic): %s", strstr(log, "tilec: error"));
  tilec_program_destroy(p);
}

/* Registers: the function's thread limit below the block, or registers x
 * threads above the device's registers per block: a load error with both. */
Test(launch, registers_past_the_device_limit) {
  fake_limits.num_regs = 255;
  fake_limits.func_max_threads = 64;
  cr_assert(tl_rt_driver_inject(&fake));
  tilec_program *p = program_of(vadd);
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load(p, "vadd", 0, &k), TILEC_ERROR_UNSUPPORTED);
  const char *log = tilec_program_log(p);
  cr_assert(strstr(log, "load vadd:") && strstr(log, "255 per thread x 128 threads") &&
            strstr(log, "the function allows 64 threads") && strstr(log, "65536 registers per block"), "%s", log);
  printf("registers_past_the_device_limit: %s", strstr(log, "tilec: error"));
  tilec_program_destroy(p);
  /* the product alone: 255 x 128 > 16384 registers on device 1 */
  fake_limits.func_max_threads = 1024;
  fake_limits.max_regs_block = 16384;
  p = program_of(vadd);
  cr_assert_eq(tilec_kernel_load(p, "vadd", 1, &k), TILEC_ERROR_UNSUPPORTED);
  cr_assert(strstr(tilec_program_log(p), "needs 32640 registers per block") &&
            strstr(tilec_program_log(p), "16384 registers per block"), "%s", tilec_program_log(p));
  tilec_program_destroy(p);
}

/* More than 2^31 elements: sizes as u32, strides as u64 (the kernel's
 * addresses are 64-bit); one dimension past 2^31 - 1: refused. */
Test(launch, tensors_past_2_pow_31_elements) {
  cr_assert(tl_rt_driver_inject(&fake));
  tilec_program *p = program_of(grid3);
  tilec_kernel *k = load(p, "g3");
  /* [1, 60000, 50000] f32 = 3e9 elements, 12 GB */
  cr_assert_eq(launch_g3(k, 1, 60000, 50000), TILEC_OK, "%s", tilec_kernel_error(k));
  uint32_t size1, size2;
  uint64_t stride0, stride1;
  memcpy(&size1, last_params[2], 4);
  memcpy(&size2, last_params[3], 4);
  memcpy(&stride0, last_params[4], 8);
  memcpy(&stride1, last_params[5], 8);
  cr_assert(size1 == 60000 && size2 == 50000);
  cr_assert_eq(stride0, 3000000000ull, "the outer stride (3e9 elements) was not passed as 64 bits");
  cr_assert_eq(stride1, 50000u);
  /* a view whose row stride is 2^33 elements */
  int64_t shape[3] = {1, 2, 100}, strides[3] = {1ll << 34, 1ll << 33, 1};
  DLTensor x = {.data = (void *)(uintptr_t)0x10000000u, .device = {kDLCUDA, 0}, .ndim = 3, .dtype = {kDLFloat, 32, 1},
                .shape = shape, .strides = strides};
  DLTensor z = x;
  z.strides = NULL;
  tilec_arg args[2] = {{.kind = TILEC_ARG_TENSOR, .u.tensor = &x}, {.kind = TILEC_ARG_TENSOR, .u.tensor = &z}};
  cr_assert_eq(tilec_kernel_launch(k, args, 2, NULL), TILEC_OK, "%s", tilec_kernel_error(k));
  memcpy(&stride1, last_params[5], 8);
  cr_assert_eq(stride1, 1ull << 33);
  /* one dimension of 2^31 elements: refused before the driver */
  int launches = calls.launches;
  cr_assert_eq(launch_g3(k, 1, 1, 2147483648ll), TILEC_ERROR_LAUNCH);
  cr_assert(strstr(tilec_kernel_error(k), "2147483648") && strstr(tilec_kernel_error(k), "outside [0, 2^31)"), "%s",
            tilec_kernel_error(k));
  cr_assert_eq(calls.launches, launches);
  printf("tensors_past_2_pow_31_elements: %s\n", tilec_kernel_error(k));
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

/* vadd over N floats at X, Y, Z. */
static tilec_status launch_vadd(tilec_kernel *k, int64_t n, uint64_t x, uint64_t y, uint64_t z) {
  int64_t shape[1] = {n};
  uint64_t at[3] = {x, y, z};
  DLTensor t[3];
  tilec_arg args[3];
  for (int i = 0; i < 3; i++) {
    t[i] = (DLTensor){.data = (void *)(uintptr_t)at[i], .device = {kDLCUDA, 0}, .ndim = 1,
                      .dtype = {kDLFloat, 32, 1}, .shape = shape};
    args[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &t[i]};
  }
  return tilec_kernel_launch(k, args, 3, NULL);
}

Test(launch, pointer_check_off_by_default) {
  cr_assert(tl_rt_driver_inject(&fake));
  tilec_program *p = program_of(vadd);
  tilec_kernel *k = load(p, "vadd");
  /* nothing registered: every pointer is unknown to the fake, and unasked */
  cr_assert_eq(launch_vadd(k, 1000, 0x10000000u, 0x20000000u, 0x30000000u), TILEC_OK, "%s", tilec_kernel_error(k));
  cr_assert_eq(fake_pointer_queries, 0, "the launch path asked the driver about pointers");
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

Test(launch, pointer_check_catches_misuse) {
  cr_assert(tl_rt_driver_inject(&fake));
  setenv("TILEC_CHECK_POINTERS", "1", 1);
  CUcontext ctx0 = fake_ctx_of(0);
  fake_alloc(0x10000000u, 4000, CU_MEMORYTYPE_DEVICE, 0, ctx0, 0);                     /* X: 1000 floats */
  fake_alloc(0x20000000u, 4000, CU_MEMORYTYPE_DEVICE, 0, NULL, 0);                     /* Y: pool memory, no context */
  fake_alloc(0x30000000u, 1 << 20, CU_MEMORYTYPE_DEVICE, 0, ctx0, 0);                  /* Z */
  fake_alloc(0x40000000u, 1 << 20, CU_MEMORYTYPE_HOST, 0, ctx0, 0);                    /* page-locked host */
  fake_alloc(0x50000000u, 1 << 20, CU_MEMORYTYPE_DEVICE, 1, fake_ctx_of(1), 0);        /* device 1 */
  fake_alloc(0x60000000u, 1 << 20, CU_MEMORYTYPE_DEVICE, 0, (CUcontext)(uintptr_t)0x9990, 0); /* another context */
  fake_alloc(0x70000000u, 1 << 20, CU_MEMORYTYPE_DEVICE, 1, fake_ctx_of(1), 1);        /* managed, device 1 */
  fake_alloc(0x80000000u, 2000, CU_MEMORYTYPE_DEVICE, 0, ctx0, 0);                     /* adjacent VMM chunks */
  fake_alloc(0x800007d0u, 2000, CU_MEMORYTYPE_DEVICE, 0, NULL, 0);
  tilec_program *p = program_of(vadd);
  tilec_kernel *k = load(p, "vadd");
  cr_assert_eq(launch_vadd(k, 1000, 0x10000000u, 0x20000000u, 0x30000000u), TILEC_OK, "%s", tilec_kernel_error(k));
  cr_assert_gt(fake_pointer_queries, 0);
  cr_assert_eq(launch_vadd(k, 1000, 0x10000000u, 0x70000000u, 0x80000000u), TILEC_OK, "managed / adjacent: %s",
               tilec_kernel_error(k));
  int launches = calls.launches;
  struct { uint64_t z; int64_t n; const char *text; } bad[] = {
      {0x7ffd0000u, 1000, "is not memory the CUDA driver knows"},
      {0x40000000u, 1000, "is page-locked host memory"},
      {0x50000000u, 1000, "is memory of CUDA device 1; the kernel runs on device 0"},
      {0x60000000u, 1000, "belongs to CUDA context"},
      {0x10000000u + 4, 1000, "its last byte"}, /* X's allocation, 4 bytes short */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cr_assert_eq(launch_vadd(k, bad[i].n, 0x30000000u, 0x30000000u, bad[i].z), TILEC_ERROR_LAUNCH, "case %zu launched", i);
    const char *e = tilec_kernel_error(k);
    cr_assert(strstr(e, "argument 2 (Z)") && strstr(e, bad[i].text) && strstr(e, "TILEC_CHECK_POINTERS=1"), "%s", e);
    printf("pointer_check_catches_misuse: %s\n", e);
  }
  cr_assert_eq(calls.launches, launches, "a refused launch reached the driver");
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

Test(launch, pointer_check_without_the_driver_entry) {
  fake.cuPointerGetAttribute = NULL;
  cr_assert(tl_rt_driver_inject(&fake));
  setenv("TILEC_CHECK_POINTERS", "1", 1);
  tilec_program *p = program_of(vadd);
  tilec_kernel *k = load(p, "vadd");
  cr_assert_eq(launch_vadd(k, 10, 0x10000000u, 0x20000000u, 0x30000000u), TILEC_ERROR_CUDA);
  cr_assert(strstr(tilec_kernel_error(k), "no cuPointerGetAttribute"), "%s", tilec_kernel_error(k));
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}
