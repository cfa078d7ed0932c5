/* gpu_util.h: what the GPU tests and the launch benchmark share: the CUDA
 * driver (dlopen'd, never linked), device buffers, random data per dtype,
 * NaN poisoning, comparison with per-dtype tolerances.  Exit code 77 = skip. */
#ifndef TILEC_GPU_UTIL_H
#define TILEC_GPU_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tilec.h"
#include "../../runtime/cuda_api.h"

#define GPU_SKIP 77

typedef struct gpu_driver {
  PFN_cuInit cuInit;
  PFN_cuDeviceGet cuDeviceGet;
  PFN_cuDeviceGetCount cuDeviceGetCount;
  PFN_cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRetain;
  PFN_cuCtxSetCurrent cuCtxSetCurrent;
  PFN_cuCtxSynchronize cuCtxSynchronize;
  PFN_cuGetErrorName cuGetErrorName;
  PFN_cuMemAlloc cuMemAlloc;
  PFN_cuMemFree cuMemFree;
  PFN_cuMemcpyHtoD cuMemcpyHtoD;
  PFN_cuMemcpyDtoH cuMemcpyDtoH;
  PFN_cuMemsetD8 cuMemsetD8;
  PFN_cuStreamCreate cuStreamCreate;
  PFN_cuStreamDestroy cuStreamDestroy;
  PFN_cuStreamSynchronize cuStreamSynchronize;
  PFN_cuStreamBeginCapture cuStreamBeginCapture;
  PFN_cuStreamEndCapture cuStreamEndCapture;
  PFN_cuGraphInstantiateWithFlags cuGraphInstantiateWithFlags;
  PFN_cuGraphLaunch cuGraphLaunch;
  PFN_cuGraphExecDestroy cuGraphExecDestroy;
  PFN_cuGraphDestroy cuGraphDestroy;
  PFN_cuModuleLoadData cuModuleLoadData;
  PFN_cuModuleGetFunction cuModuleGetFunction;
  PFN_cuLaunchKernel cuLaunchKernel;
} gpu_driver;

extern gpu_driver gpu;

/* Load the driver, make device 0's primary context current.  Returns 0, or
 * GPU_SKIP after printing why (no driver, no device). */
int gpu_init(void);
/* Abort the test (exit 1) with a message when r is not CUDA_SUCCESS. */
void gpu_check(CUresult r, const char *what);

/* ---- random data ---------------------------------------------------------------- */
uint64_t gpu_seed(void);          /* from $TILEC_SEED or the clock; printed once */
uint64_t gpu_rand(void);
double gpu_rand_uniform(double lo, double hi);
/* Skip n draws of gpu_rand (the stream is a counter): a round not run leaves the next one the data
 * it gets in a full run. */
void gpu_rand_skip(uint64_t n);

/* ---- dtypes (by the names of tilec_param_info.dtype) ---------------------------- */
int gpu_dtype_bytes(const char *dtype);
bool gpu_dtype_is_float(const char *dtype);
/* Element i of a buffer of dtype as a double (NaN for NaN patterns). */
double gpu_load_elem(const void *buf, size_t i, const char *dtype);
/* Fill with random values exactly representable in dtype, never zero,
 * magnitudes about 0.1 .. 2 (ints: small nonzero). */
void gpu_fill_random(void *buf, size_t n, const char *dtype);

/* ---- comparison --------------------------------------------------------------------- */
typedef struct gpu_cmp {
  size_t n, mismatches, unwritten, both_unwritten;
  double max_abs_err, max_rel_err;
  size_t first_bad;
  double first_got, first_want;
} gpu_cmp;
/* Compare got (GPU) with want (interpreter), both first poisoned with 0xFF
 * bytes.  Tolerance per dtype: f32 1e-5, f16 2e-3, bf16 1e-2, f8e4m3 1/8,
 * f8e5m2 1/4 (relative to the element and to the tensor's largest value);
 * integers exact.  Returns true when everything agrees and every element the
 * interpreter wrote was written on the GPU. */
bool gpu_compare(const void *got, const void *want, size_t n, const char *dtype, gpu_cmp *out);
/* The same with relative tolerance rtol (< 0: the dtype's). */
bool gpu_compare_rtol(const void *got, const void *want, size_t n, const char *dtype, double rtol, gpu_cmp *out);

double gpu_now_ms(void);
/* Index of shape symbol s in names[0..*n), appended when new (at most cap);
 * -1 when full. */
int gpu_sym_index(const char **names, int *n, int cap, const char *s);

/* Calls fn(dir, name) for every *.tile file of dir, in name order.  Returns
 * the number of files, or -1 when dir cannot be read (after printing FAIL). */
int gpu_each_tile_file(const char *dir, void (*fn)(const char *dir, const char *name));

/* A failed check: prints FAIL with the line and a message and counts it in
 * the calling test's `failures`. */
#define GPU_EXPECT(cond, ...)             \
  do {                                    \
    if (!(cond)) {                        \
      printf("FAIL line %d: ", __LINE__); \
      printf(__VA_ARGS__);                \
      printf("\n");                       \
      failures++;                         \
    }                                     \
  } while (0)

/* dir/name created and compiled to `stage`; NULL after printing FAIL with the
 * log.  The caller counts the failure. */
tilec_program *gpu_open_program(const char *dir, const char *name, tilec_stage stage);

/* Kernel kname of p loaded on GPU 0: exits GPU_SKIP where there is no
 * device; NULL after printing FAIL (file:kernel: load: ...); else prints
 * "loaded file:kernel (origin)". */
tilec_kernel *gpu_load_kernel(tilec_program *p, const char *file, const char *kname);

#endif
