/* gpu_util.c: see gpu_util.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include "gpu_util.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

gpu_driver gpu;

static void *sym(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "gpu_util: driver symbol %s not found\n", name);
    exit(GPU_SKIP);
  }
  return p;
}

void gpu_check(CUresult r, const char *what) {
  if (r == CUDA_SUCCESS) return;
  const char *name = "?";
  if (gpu.cuGetErrorName) gpu.cuGetErrorName(r, &name);
  fprintf(stderr, "FAIL: %s: %s (%d)\n", what, name, (int)r);
  exit(1);
}

int gpu_init(void) {
  /* line-buffered even into a file: a test killed by its time limit (a hung kernel, the pending
   * scripts' `timeout`) keeps every line it printed, the variant header before the hang included */
  setvbuf(stdout, NULL, _IOLBF, 0);
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("SKIP: libcuda.so.1 not found (no NVIDIA driver)\n");
    return GPU_SKIP;
  }
  gpu.cuInit = (PFN_cuInit)sym(lib, "cuInit");
  gpu.cuDeviceGet = (PFN_cuDeviceGet)sym(lib, "cuDeviceGet");
  gpu.cuDeviceGetCount = (PFN_cuDeviceGetCount)sym(lib, "cuDeviceGetCount");
  gpu.cuDevicePrimaryCtxRetain = (PFN_cuDevicePrimaryCtxRetain)sym(lib, "cuDevicePrimaryCtxRetain");
  gpu.cuCtxSetCurrent = (PFN_cuCtxSetCurrent)sym(lib, "cuCtxSetCurrent");
  gpu.cuCtxSynchronize = (PFN_cuCtxSynchronize)sym(lib, "cuCtxSynchronize");
  gpu.cuGetErrorName = (PFN_cuGetErrorName)sym(lib, "cuGetErrorName");
  gpu.cuMemAlloc = (PFN_cuMemAlloc)sym(lib, "cuMemAlloc_v2");
  gpu.cuMemFree = (PFN_cuMemFree)sym(lib, "cuMemFree_v2");
  gpu.cuMemcpyHtoD = (PFN_cuMemcpyHtoD)sym(lib, "cuMemcpyHtoD_v2");
  gpu.cuMemcpyDtoH = (PFN_cuMemcpyDtoH)sym(lib, "cuMemcpyDtoH_v2");
  gpu.cuMemsetD8 = (PFN_cuMemsetD8)sym(lib, "cuMemsetD8_v2");
  gpu.cuStreamCreate = (PFN_cuStreamCreate)sym(lib, "cuStreamCreate");
  gpu.cuStreamDestroy = (PFN_cuStreamDestroy)sym(lib, "cuStreamDestroy_v2");
  gpu.cuStreamSynchronize = (PFN_cuStreamSynchronize)sym(lib, "cuStreamSynchronize");
  gpu.cuStreamBeginCapture = (PFN_cuStreamBeginCapture)sym(lib, "cuStreamBeginCapture_v2");
  gpu.cuStreamEndCapture = (PFN_cuStreamEndCapture)sym(lib, "cuStreamEndCapture");
  gpu.cuGraphInstantiateWithFlags = (PFN_cuGraphInstantiateWithFlags)sym(lib, "cuGraphInstantiateWithFlags");
  gpu.cuGraphLaunch = (PFN_cuGraphLaunch)sym(lib, "cuGraphLaunch");
  gpu.cuGraphExecDestroy = (PFN_cuGraphExecDestroy)sym(lib, "cuGraphExecDestroy");
  gpu.cuGraphDestroy = (PFN_cuGraphDestroy)sym(lib, "cuGraphDestroy");
  gpu.cuModuleLoadData = (PFN_cuModuleLoadData)sym(lib, "cuModuleLoadData");
  gpu.cuModuleGetFunction = (PFN_cuModuleGetFunction)sym(lib, "cuModuleGetFunction");
  gpu.cuLaunchKernel = (PFN_cuLaunchKernel)sym(lib, "cuLaunchKernel");
  CUresult r = gpu.cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE) {
    printf("SKIP: no CUDA device\n");
    return GPU_SKIP;
  }
  gpu_check(r, "cuInit");
  CUdevice dev;
  CUcontext ctx;
  if (gpu.cuDeviceGet(&dev, 0) != CUDA_SUCCESS) {
    printf("SKIP: no CUDA device 0\n");
    return GPU_SKIP;
  }
  gpu_check(gpu.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  gpu_check(gpu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  return 0;
}

/* ---- random ---------------------------------------------------------------------------- */
static uint64_t rng_state;
static bool rng_seeded;

uint64_t gpu_seed(void) {
  if (!rng_seeded) {
    const char *s = getenv("TILEC_SEED");
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    rng_state = s && *s ? strtoull(s, NULL, 0) : (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
    if (!rng_state) rng_state = 1;
    rng_seeded = true;
    printf("seed %llu (rerun with TILEC_SEED=%llu)\n", (unsigned long long)rng_state,
           (unsigned long long)rng_state);
  }
  return rng_state;
}

uint64_t gpu_rand(void) {
  if (!rng_seeded) gpu_seed();
  /* splitmix64 */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void gpu_rand_skip(uint64_t n) {
  if (!rng_seeded) gpu_seed();
  rng_state += n * 0x9E3779B97F4A7C15ULL; /* (splitmix64: each draw adds this to the state) */
}

double gpu_rand_uniform(double lo, double hi) { return lo + (hi - lo) * (double)(gpu_rand() >> 11) / 9007199254740992.0; }

/* ---- dtypes ------------------------------------------------------------------------------ */
int gpu_dtype_bytes(const char *t) {
  if (!strcmp(t, "f32") || !strcmp(t, "i32")) return 4;
  if (!strcmp(t, "f16") || !strcmp(t, "bf16") || !strcmp(t, "i16")) return 2;
  if (!strcmp(t, "i64")) return 8;
  return 1; /* i1 i8 u8 f8e4m3 f8e5m2 */
}

bool gpu_dtype_is_float(const char *t) { return t[0] == 'f' || t[0] == 'b'; }

static float f32_from_bits(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static uint32_t bits_from_f32(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }

/* A small float format with `e` exponent bits and `m` mantissa bits. */
static double decode_small(uint32_t bits, int e, int m, int bias, bool has_inf, bool fn_nan) {
  uint32_t sign = bits >> (e + m) & 1, ex = bits >> m & ((1u << e) - 1), man = bits & ((1u << m) - 1);
  double s = sign ? -1.0 : 1.0;
  if (fn_nan && ex == (1u << e) - 1 && man == (1u << m) - 1) return NAN; /* e4m3fn: S.1111.111 */
  if (has_inf && ex == (1u << e) - 1) return man ? NAN : s * INFINITY;
  if (ex == 0) return s * ldexp((double)man, 1 - bias - m);
  return s * ldexp((double)(man | 1u << m), (int)ex - bias - m);
}

double gpu_load_elem(const void *buf, size_t i, const char *t) {
  const uint8_t *b = buf;
  if (!strcmp(t, "f32")) { uint32_t v; memcpy(&v, b + 4 * i, 4); return f32_from_bits(v); }
  if (!strcmp(t, "bf16")) { uint16_t v; memcpy(&v, b + 2 * i, 2); return f32_from_bits((uint32_t)v << 16); }
  if (!strcmp(t, "f16")) { uint16_t v; memcpy(&v, b + 2 * i, 2); return decode_small(v, 5, 10, 15, true, false); }
  if (!strcmp(t, "f8e4m3")) return decode_small(b[i], 4, 3, 7, false, true);
  if (!strcmp(t, "f8e5m2")) return decode_small(b[i], 5, 2, 15, true, false);
  if (!strcmp(t, "i64")) { int64_t v; memcpy(&v, b + 8 * i, 8); return (double)v; }
  if (!strcmp(t, "i32")) { int32_t v; memcpy(&v, b + 4 * i, 4); return v; }
  if (!strcmp(t, "i16")) { int16_t v; memcpy(&v, b + 2 * i, 2); return v; }
  if (!strcmp(t, "i8")) return (int8_t)b[i];
  return b[i]; /* u8, i1 */
}

void gpu_fill_random(void *buf, size_t n, const char *t) {
  uint8_t *b = buf;
  for (size_t i = 0; i < n; i++) {
    uint64_t r = gpu_rand();
    double mag = gpu_rand_uniform(0.1, 2.0) * ((r & 1) ? -1.0 : 1.0);
    if (!strcmp(t, "f32")) {
      uint32_t v = bits_from_f32((float)mag);
      memcpy(b + 4 * i, &v, 4);
    } else if (!strcmp(t, "bf16")) {
      uint16_t v = (uint16_t)(bits_from_f32((float)mag) >> 16); /* truncation: exact in bf16 */
      memcpy(b + 2 * i, &v, 2);
    } else if (!strcmp(t, "f16")) {
      /* exponent field 12..16 (2^-3 .. 2^1), random mantissa */
      uint16_t v = (uint16_t)((r & 1) << 15 | (12 + (r >> 8) % 5) << 10 | (r >> 16) % 1024);
      memcpy(b + 2 * i, &v, 2);
    } else if (!strcmp(t, "f8e4m3")) {
      b[i] = (uint8_t)((r & 1) << 7 | (4 + (r >> 8) % 5) << 3 | (r >> 16) % 8); /* 2^-3 .. 2^1 */
    } else if (!strcmp(t, "f8e5m2")) {
      b[i] = (uint8_t)((r & 1) << 7 | (12 + (r >> 8) % 5) << 2 | (r >> 16) % 4);
    } else if (!strcmp(t, "i1")) {
      b[i] = (uint8_t)(r >> 9 & 1);
    } else {
      int64_t v = (int64_t)(1 + (r >> 8) % 9) * ((r & 1) ? -1 : 1); /* +-1..9, never 0 */
      if (!strcmp(t, "u8")) v = v < 0 ? -v : v;
      memcpy(b + (size_t)gpu_dtype_bytes(t) * i, &v, (size_t)gpu_dtype_bytes(t)); /* little endian */
    }
  }
}

/* ---- comparison --------------------------------------------------------------------------------- */
static bool is_poison(const void *buf, size_t i, int bytes) {
  const uint8_t *b = (const uint8_t *)buf + (size_t)bytes * i;
  for (int k = 0; k < bytes; k++)
    if (b[k] != 0xFF) return false;
  return true;
}

bool gpu_compare(const void *got, const void *want, size_t n, const char *t, gpu_cmp *c) {
  return gpu_compare_rtol(got, want, n, t, -1, c);
}

bool gpu_compare_rtol(const void *got, const void *want, size_t n, const char *t, double rtol_of, gpu_cmp *c) {
  memset(c, 0, sizeof *c);
  c->n = n;
  c->first_bad = (size_t)-1;
  int bytes = gpu_dtype_bytes(t);
  bool fl = gpu_dtype_is_float(t);
  double rtol = 0;
  if (!strcmp(t, "f32")) rtol = 1e-5;
  else if (!strcmp(t, "f16")) rtol = 2e-3;
  else if (!strcmp(t, "bf16")) rtol = 1e-2;
  else if (!strcmp(t, "f8e4m3")) rtol = 0.125;
  else if (!strcmp(t, "f8e5m2")) rtol = 0.25;
  if (rtol_of >= 0) rtol = rtol_of;
  const char *scale = getenv("TILEC_TOL_SCALE");
  if (scale && *scale) rtol *= atof(scale);
  double maxref = 0;
  for (size_t i = 0; i < n; i++) {
    double w = gpu_load_elem(want, i, t);
    if (isfinite(w) && fabs(w) > maxref) maxref = fabs(w);
  }
  double atol = rtol * (maxref > 1 ? maxref : 1);
  for (size_t i = 0; i < n; i++) {
    bool gp = fl && is_poison(got, i, bytes), wp = fl && is_poison(want, i, bytes);
    if (gp && wp) { c->both_unwritten++; continue; }
    double g = gpu_load_elem(got, i, t), w = gpu_load_elem(want, i, t);
    bool bad;
    if (gp) { c->unwritten++; bad = true; }
    else if (isnan(g) || isnan(w)) bad = !(isnan(g) && isnan(w));
    else if (isinf(g) || isinf(w)) bad = g != w;
    else {
      double err = fabs(g - w);
      if (err > c->max_abs_err) c->max_abs_err = err;
      if (w != 0 && err / fabs(w) > c->max_rel_err) c->max_rel_err = err / fabs(w);
      bad = fl ? err > atol + rtol * fabs(w) : err != 0;
    }
    if (bad) {
      if (c->mismatches == 0) { c->first_bad = i; c->first_got = g; c->first_want = w; }
      c->mismatches++;
    }
  }
  return c->mismatches == 0;
}

double gpu_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int gpu_sym_index(const char **names, int *n, int cap, const char *s) {
  for (int i = 0; i < *n; i++)
    if (!strcmp(names[i], s)) return i;
  if (*n == cap) return -1;
  names[*n] = s;
  return (*n)++;
}

int gpu_each_tile_file(const char *dir, void (*fn)(const char *dir, const char *name)) {
  struct dirent **names;
  int n = scandir(dir, &names, NULL, alphasort);
  if (n < 0) {
    printf("FAIL: cannot read %s\n", dir);
    return -1;
  }
  int files = 0;
  for (int i = 0; i < n; i++) {
    size_t len = strlen(names[i]->d_name);
    if (len > 5 && !strcmp(names[i]->d_name + len - 5, ".tile")) {
      fn(dir, names[i]->d_name);
      files++;
    }
    free(names[i]);
  }
  free(names);
  return files;
}

tilec_program *gpu_open_program(const char *dir, const char *name, tilec_stage stage) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  tilec_program *p = NULL;
  tilec_status st = tilec_program_create_from_file(&p, path, NULL);
  if (st == TILEC_OK) st = tilec_program_compile(p, stage);
  if (st == TILEC_OK) return p;
  printf("FAIL %s: %s\n%s\n", name, tilec_status_string(st), p ? tilec_program_log(p) : "");
  tilec_program_destroy(p);
  return NULL;
}

tilec_kernel *gpu_load_kernel(tilec_program *p, const char *file, const char *kname) {
  tilec_kernel *k = NULL;
  tilec_status st = tilec_kernel_load(p, kname, 0, &k);
  if (st == TILEC_ERROR_NO_DEVICE) {
    printf("SKIP: %s\n", tilec_program_log(p));
    exit(GPU_SKIP);
  }
  if (st != TILEC_OK) {
    printf("FAIL %s:%s: load: %s\n%s\n", file, kname, tilec_status_string(st), tilec_program_log(p));
    return NULL;
  }
  printf("loaded %s:%s (%s)\n", file, kname, tilec_kernel_origin(k));
  return k;
}
