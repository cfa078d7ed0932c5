/* test_multi_device.c: one program on every GPU of the machine (issue: kernels on every GPU of a
 * host).  One tilec_program is compiled once; its kernel is loaded on each device found
 * (tilec_kernel_load's device index: one context and module per device, the disk cache shared by
 * devices of one arch, so a second device of the same arch loads without compiling), then one
 * thread per device launches it at the same time on that device's own buffers, many times over.
 * Checked: every device's output agrees with the CPU interpreter on the same random inputs
 * (outputs poisoned with NaN first) and, on devices of one arch, bit for bit with device 0's; a
 * device index past the last is TILEC_ERROR_NO_DEVICE with a message; with two or more devices, a
 * tensor on device 1 given to a kernel loaded on device 0 is a launch error naming both.  With
 * one GPU the cross-device checks say they were skipped and the rest runs on device 0.
 *   usage: gpu_test_multi_device   (exit 0 pass, 1 fail, 77 no GPU) */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"

static const char source[] =
    "kernel rownorm(X: tensor<f32>[R, C], W: tensor<f32>[C], Y: tensor<f32>[R, C], eps: f32)\n"
    "    tiles(BC = 1024)\n"
    "    grid(R)\n"
    "{\n"
    "    r = program_id(0);\n"
    "    x = load(X[r, 0 : BC]);\n"
    "    store(Y[r, 0 : BC], x * rsqrt(reduce_sum(x * x, 0) / C + eps) * load(W[0 : BC]));\n"
    "}\n";

enum { R = 333, C = 1000, MAXDEV = 16, REPEATS = 50 };

typedef struct job {
  int device;
  tilec_kernel *k;
  const float *x, *w;
  float *y;       /* host copy of the device's output */
  char err[512];  /* empty when the thread succeeded */
} job;

static int failures;

static void set_tensor(DLTensor *t, void *data, int64_t *shape, int ndim, int device_type, int device) {
  memset(t, 0, sizeof *t);
  t->data = data;
  t->device.device_type = device_type;
  t->device.device_id = device;
  t->ndim = ndim;
  t->dtype.code = kDLFloat;
  t->dtype.bits = 32;
  t->dtype.lanes = 1;
  t->shape = shape;
}

/* One device: its primary context on this thread, buffers, REPEATS launches, the output back. */
static void *run_device(void *arg) {
  job *j = arg;
  CUdevice dev;
  CUcontext ctx;
  CUdeviceptr dx = 0, dw = 0, dy = 0;
  if (gpu.cuDeviceGet(&dev, j->device) || gpu.cuDevicePrimaryCtxRetain(&ctx, dev) || gpu.cuCtxSetCurrent(ctx)) {
    snprintf(j->err, sizeof j->err, "device %d: no context", j->device);
    return NULL;
  }
  size_t bx = sizeof(float) * R * C, bw = sizeof(float) * C;
  if (gpu.cuMemAlloc(&dx, bx) || gpu.cuMemAlloc(&dw, bw) || gpu.cuMemAlloc(&dy, bx) ||
      gpu.cuMemcpyHtoD(dx, j->x, bx) || gpu.cuMemcpyHtoD(dw, j->w, bw) || gpu.cuMemsetD8(dy, 0xFF, bx)) {
    snprintf(j->err, sizeof j->err, "device %d: allocation or copy failed", j->device);
    return NULL;
  }
  int64_t sx[2] = {R, C}, sw[1] = {C};
  DLTensor tx, tw, ty;
  set_tensor(&tx, (void *)(uintptr_t)dx, sx, 2, kDLCUDA, j->device);
  set_tensor(&tw, (void *)(uintptr_t)dw, sw, 1, kDLCUDA, j->device);
  set_tensor(&ty, (void *)(uintptr_t)dy, sx, 2, kDLCUDA, j->device);
  tilec_arg a[4] = {{TILEC_ARG_TENSOR, {.tensor = &tx}}, {TILEC_ARG_TENSOR, {.tensor = &tw}},
                    {TILEC_ARG_TENSOR, {.tensor = &ty}}, {TILEC_ARG_F32, {.f32 = 1e-5f}}};
  for (int i = 0; i < REPEATS; i++)
    if (tilec_kernel_launch(j->k, a, 4, NULL) != TILEC_OK) {
      snprintf(j->err, sizeof j->err, "device %d: launch %d: %s", j->device, i, tilec_kernel_error(j->k));
      return NULL;
    }
  if (gpu.cuCtxSynchronize() || gpu.cuMemcpyDtoH(j->y, dy, bx))
    snprintf(j->err, sizeof j->err, "device %d: the kernel failed (synchronize / copy back)", j->device);
  gpu.cuMemFree(dx);
  gpu.cuMemFree(dw);
  gpu.cuMemFree(dy);
  return NULL;
}

int main(void) {
  int rc = gpu_init();
  if (rc) return rc;
  int n = 0;
  if (gpu.cuDeviceGetCount(&n) != CUDA_SUCCESS || n < 1) {
    printf("SKIP: no CUDA device\n");
    return GPU_SKIP;
  }
  if (n > MAXDEV) n = MAXDEV;
  printf("multi_device: %d device%s\n", n, n == 1 ? "" : "s");

  tilec_program *p = NULL;
  tilec_status st = tilec_program_create(&p, source, "rownorm.tile", NULL);
  GPU_EXPECT(st == TILEC_OK, "create: %s", p ? tilec_program_log(p) : "");
  if (st != TILEC_OK) return 1;

  /* inputs, and the interpreter's output on the host */
  float *x = malloc(sizeof(float) * R * C), *w = malloc(sizeof(float) * C), *ref = malloc(sizeof(float) * R * C);
  gpu_fill_random(x, (size_t)R * C, "f32");
  gpu_fill_random(w, C, "f32");
  memset(ref, 0xFF, sizeof(float) * R * C);
  int64_t sx[2] = {R, C}, sw[1] = {C};
  DLTensor hx, hw, hy;
  set_tensor(&hx, x, sx, 2, kDLCPU, 0);
  set_tensor(&hw, w, sw, 1, kDLCPU, 0);
  set_tensor(&hy, ref, sx, 2, kDLCPU, 0);
  tilec_arg ha[4] = {{TILEC_ARG_TENSOR, {.tensor = &hx}}, {TILEC_ARG_TENSOR, {.tensor = &hw}},
                     {TILEC_ARG_TENSOR, {.tensor = &hy}}, {TILEC_ARG_F32, {.f32 = 1e-5f}}};
  st = tilec_interpret(p, "rownorm", ha, 4);
  GPU_EXPECT(st == TILEC_OK, "interpret: %s", tilec_program_log(p));

  /* load on every device: the first compiles, the others of its arch come from the cache */
  job jobs[MAXDEV];
  memset(jobs, 0, sizeof jobs);
  for (int d = 0; d < n; d++) {
    jobs[d].device = d;
    jobs[d].x = x;
    jobs[d].w = w;
    jobs[d].y = malloc(sizeof(float) * R * C);
    st = tilec_kernel_load(p, "rownorm", d, &jobs[d].k);
    GPU_EXPECT(st == TILEC_OK, "load on device %d: %s", d, tilec_program_log(p));
    if (st != TILEC_OK) return 1;
    printf("loaded rownorm on device %d (%s)\n", d, tilec_kernel_origin(jobs[d].k));
  }
  tilec_kernel *none = NULL;
  st = tilec_kernel_load(p, "rownorm", n, &none);
  GPU_EXPECT(st == TILEC_ERROR_NO_DEVICE && strstr(tilec_program_log(p), "not found"),
             "device %d (one past the last): want TILEC_ERROR_NO_DEVICE naming it, got %s", n,
             tilec_status_string(st));

  /* every device at once, one thread each */
  pthread_t th[MAXDEV];
  for (int d = 0; d < n; d++) pthread_create(&th[d], NULL, run_device, &jobs[d]);
  for (int d = 0; d < n; d++) pthread_join(th[d], NULL);
  for (int d = 0; d < n; d++) {
    GPU_EXPECT(!jobs[d].err[0], "%s", jobs[d].err);
    if (jobs[d].err[0]) continue;
    gpu_cmp cmp;
    bool ok = gpu_compare(jobs[d].y, ref, (size_t)R * C, "f32", &cmp);
    GPU_EXPECT(ok, "device %d vs interpreter: %zu of %zu elements differ (max rel %.3g), %zu unwritten", d,
               cmp.mismatches, cmp.n, cmp.max_rel_err, cmp.unwritten);
    if (d > 0 && !jobs[0].err[0]) {
      bool same = !memcmp(jobs[d].y, jobs[0].y, sizeof(float) * R * C);
      GPU_EXPECT(same, "device %d differs from device 0 bit for bit (same arch, same kernel)", d);
    }
    if (ok) printf("ok device %d: %d launches from its own thread, matches the interpreter (max rel %.2g)\n", d,
                   REPEATS, cmp.max_rel_err);
  }

  /* a tensor of device 1 given to the kernel of device 0 */
  if (n >= 2) {
    int64_t s2[2] = {R, C};
    DLTensor t1;
    set_tensor(&t1, (void *)(uintptr_t)0x1000, s2, 2, kDLCUDA, 1);
    tilec_arg a[4] = {{TILEC_ARG_TENSOR, {.tensor = &t1}}, {TILEC_ARG_TENSOR, {.tensor = &t1}},
                      {TILEC_ARG_TENSOR, {.tensor = &t1}}, {TILEC_ARG_F32, {.f32 = 1e-5f}}};
    st = tilec_kernel_launch(jobs[0].k, a, 4, NULL);
    GPU_EXPECT(st != TILEC_OK && strstr(tilec_kernel_error(jobs[0].k), "device 1"),
               "a device-1 tensor on device 0's kernel: want a launch error naming device 1, got %s",
               tilec_status_string(st));
  } else {
    printf("skipped: cross-device checks (bit-identical results, a tensor on the wrong device): 1 device\n");
  }
  for (int d = 0; d < n; d++) {
    tilec_kernel_destroy(jobs[d].k);
    free(jobs[d].y);
  }
  tilec_program_destroy(p);
  free(x);
  free(w);
  free(ref);
  printf("multi_device: %d device(s), %s\n", n, failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
