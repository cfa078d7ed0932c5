/* loader.c: libcuda.so.1 loaded with dlopen at first use, entry points through
 * cuGetProcAddress (asked for the CUDA 12.0 ABI, i.e. the _v2 variants), one
 * retained primary context per device.
 * requires: nothing at build time; keeps: every outcome (good or bad) is
 * computed once per process under a lock; breaks: nothing. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static tl_cuda driver;
static int driver_status = TL_ERR_CUDA;
static char driver_error[512];

typedef CUresult (*PFN_any)(void);

/* One entry point: cuGetProcAddress_v2, else the v1 cuGetProcAddress, else
 * dlsym of the versioned name. */
static bool resolve(void *lib, PFN_cuGetProcAddress_v2 gpa2, PFN_cuGetProcAddress_v1 gpa1,
                    const char *base, const char *versioned, void **out) {
  *out = NULL;
  if (gpa2) {
    CUdriverProcAddressQueryResult st = 0;
    if (gpa2(base, out, TL_CU_API_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &st) == CUDA_SUCCESS && *out) return true;
  }
  if (gpa1 && gpa1(base, out, TL_CU_API_VERSION, CU_GET_PROC_ADDRESS_DEFAULT) == CUDA_SUCCESS && *out) return true;
  *out = dlsym(lib, versioned ? versioned : base);
  return *out != NULL;
}

static pthread_mutex_t inject_lock = PTHREAD_MUTEX_INITIALIZER;
static const tl_cuda *injected_driver;
static bool driver_started;

bool tl_rt_driver_inject(const tl_cuda *table) {
  pthread_mutex_lock(&inject_lock);
  bool ok = !driver_started && table;
  if (ok) injected_driver = table;
  pthread_mutex_unlock(&inject_lock);
  return ok;
}

static void load_driver(void) {
  pthread_mutex_lock(&inject_lock);
  driver_started = true;
  const tl_cuda *fake = injected_driver;
  pthread_mutex_unlock(&inject_lock);
  if (fake) {
    driver = *fake;
    int count = 0;
    driver_status = driver.cuDeviceGetCount && driver.cuDeviceGetCount(&count) == CUDA_SUCCESS && count > 0
                        ? TL_OK : TL_ERR_NO_DEVICE;
    if (driver_status != TL_OK) snprintf(driver_error, sizeof driver_error, "no CUDA device found (injected driver)");
    return;
  }
  const char *path = getenv("TILEC_LIBCUDA");
  if (!path || !*path) path = "libcuda.so.1";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(driver_error, sizeof driver_error, "%s not found (no NVIDIA driver)", path);
    driver_status = TL_ERR_CUDA;
    return;
  }
  PFN_cuGetProcAddress_v2 gpa2 = (PFN_cuGetProcAddress_v2)dlsym(lib, "cuGetProcAddress_v2");
  PFN_cuGetProcAddress_v1 gpa1 = gpa2 ? NULL : (PFN_cuGetProcAddress_v1)dlsym(lib, "cuGetProcAddress");
  PFN_cuInit cu_init = NULL;
  struct { const char *base, *versioned; void **slot; } table[] = {
      {"cuInit", NULL, (void **)&cu_init},
      {"cuGetErrorName", NULL, (void **)&driver.cuGetErrorName},
      {"cuGetErrorString", NULL, (void **)&driver.cuGetErrorString},
      {"cuDriverGetVersion", NULL, (void **)&driver.cuDriverGetVersion},
      {"cuDeviceGetCount", NULL, (void **)&driver.cuDeviceGetCount},
      {"cuDeviceGet", NULL, (void **)&driver.cuDeviceGet},
      {"cuDeviceGetAttribute", NULL, (void **)&driver.cuDeviceGetAttribute},
      {"cuDeviceGetName", NULL, (void **)&driver.cuDeviceGetName},
      {"cuDevicePrimaryCtxRetain", NULL, (void **)&driver.cuDevicePrimaryCtxRetain},
      {"cuCtxSetCurrent", NULL, (void **)&driver.cuCtxSetCurrent},
      {"cuCtxGetCurrent", NULL, (void **)&driver.cuCtxGetCurrent},
      {"cuLinkCreate", "cuLinkCreate_v2", (void **)&driver.cuLinkCreate},
      {"cuLinkAddData", "cuLinkAddData_v2", (void **)&driver.cuLinkAddData},
      {"cuLinkComplete", NULL, (void **)&driver.cuLinkComplete},
      {"cuLinkDestroy", NULL, (void **)&driver.cuLinkDestroy},
      {"cuModuleLoadData", NULL, (void **)&driver.cuModuleLoadData},
      {"cuModuleLoadDataEx", NULL, (void **)&driver.cuModuleLoadDataEx},
      {"cuModuleUnload", NULL, (void **)&driver.cuModuleUnload},
      {"cuModuleGetFunction", NULL, (void **)&driver.cuModuleGetFunction},
      {"cuFuncGetAttribute", NULL, (void **)&driver.cuFuncGetAttribute},
      {"cuFuncSetAttribute", NULL, (void **)&driver.cuFuncSetAttribute},
      {"cuLaunchKernel", NULL, (void **)&driver.cuLaunchKernel},
      {"cuCtxSynchronize", NULL, (void **)&driver.cuCtxSynchronize},
      {"cuStreamSynchronize", NULL, (void **)&driver.cuStreamSynchronize},
      {"cuEventCreate", NULL, (void **)&driver.cuEventCreate},
      {"cuEventRecord", NULL, (void **)&driver.cuEventRecord},
      {"cuEventSynchronize", NULL, (void **)&driver.cuEventSynchronize},
      {"cuEventElapsedTime", NULL, (void **)&driver.cuEventElapsedTime},
      {"cuEventDestroy", "cuEventDestroy_v2", (void **)&driver.cuEventDestroy},
      {"cuMemAlloc", "cuMemAlloc_v2", (void **)&driver.cuMemAlloc},
      {"cuMemFree", "cuMemFree_v2", (void **)&driver.cuMemFree},
      {"cuMemsetD8", "cuMemsetD8_v2", (void **)&driver.cuMemsetD8},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    if (!resolve(lib, gpa2, gpa1, table[i].base, table[i].versioned, table[i].slot)) {
      snprintf(driver_error, sizeof driver_error,
               "%s: driver entry point %s not found (driver too old?)", path, table[i].base);
      driver_status = TL_ERR_CUDA;
      return; /* the library stays loaded: harmless, and safe for other users */
    }
  }
  /* TILEC_CHECK_POINTERS=1 (every CUDA has it; optional all the same) */
  if (!resolve(lib, gpa2, gpa1, "cuPointerGetAttribute", NULL, (void **)&driver.cuPointerGetAttribute))
    driver.cuPointerGetAttribute = NULL;
  /* optional (CUDA 12.0+): tensor maps */
  if (!resolve(lib, gpa2, gpa1, "cuTensorMapEncodeTiled", NULL, (void **)&driver.cuTensorMapEncodeTiled))
    driver.cuTensorMapEncodeTiled = NULL;
  /* optional: relaxed capture mode for the threads that load a kernel's forms in the background */
  if (!resolve(lib, gpa2, gpa1, "cuThreadExchangeStreamCaptureMode", NULL, (void **)&driver.cuThreadExchangeStreamCaptureMode))
    driver.cuThreadExchangeStreamCaptureMode = NULL;
  /* optional (CUDA 11.2+): stream-ordered memory and the 2-D copy of TILEC_PITCH_REPACK=1 */
  if (!resolve(lib, gpa2, gpa1, "cuMemAllocAsync", NULL, (void **)&driver.cuMemAllocAsync) ||
      !resolve(lib, gpa2, gpa1, "cuMemFreeAsync", NULL, (void **)&driver.cuMemFreeAsync) ||
      !resolve(lib, gpa2, gpa1, "cuMemcpy2DAsync", "cuMemcpy2DAsync_v2", (void **)&driver.cuMemcpy2DAsync))
    driver.cuMemAllocAsync = NULL, driver.cuMemFreeAsync = NULL, driver.cuMemcpy2DAsync = NULL;
  /* optional: TILEC_ATTN_SCHED=1's tile counters (lib/api/sched_slot.c) */
  if (!resolve(lib, gpa2, gpa1, "cuMemsetD32Async", NULL, (void **)&driver.cuMemsetD32Async))
    driver.cuMemsetD32Async = NULL;
  if (!resolve(lib, gpa2, gpa1, "cuStreamIsCapturing", NULL, (void **)&driver.cuStreamIsCapturing))
    driver.cuStreamIsCapturing = NULL;
  CUresult r = cu_init(0);
  if (r == CUDA_ERROR_NO_DEVICE) {
    snprintf(driver_error, sizeof driver_error, "no CUDA device found (cuInit: CUDA_ERROR_NO_DEVICE)");
    driver_status = TL_ERR_NO_DEVICE;
    return;
  }
  if (r != CUDA_SUCCESS) {
    char t[200];
    snprintf(driver_error, sizeof driver_error, "cuInit failed: %s", tl_rt_result_text(r, t, sizeof t));
    driver_status = TL_ERR_CUDA;
    return;
  }
  if (driver.cuDriverGetVersion(&driver.driver_version) != CUDA_SUCCESS) driver.driver_version = 0;
  int count = 0;
  if (driver.cuDeviceGetCount(&count) != CUDA_SUCCESS || count <= 0) {
    snprintf(driver_error, sizeof driver_error, "no CUDA device found");
    driver_status = TL_ERR_NO_DEVICE;
    return;
  }
  driver_status = TL_OK;
}

int tl_rt_driver(const tl_cuda **out, char *err, size_t n) {
  pthread_once(&driver_once, load_driver);
  if (driver_status != TL_OK) {
    if (err && n) { /* (not snprintf: gcc's -Wformat-truncation fires on the sizes) */
      size_t len = strnlen(driver_error, n - 1);
      memcpy(err, driver_error, len);
      err[len] = 0;
    }
    *out = NULL;
    return driver_status;
  }
  *out = &driver;
  return TL_OK;
}

const char *tl_rt_result_text(CUresult r, char *buf, size_t n) {
  const char *name = NULL, *text = NULL;
  if (driver.cuGetErrorName) driver.cuGetErrorName(r, &name);
  if (driver.cuGetErrorString) driver.cuGetErrorString(r, &text);
  if (name)
    snprintf(buf, n, "%s (%s)", name, text ? text : "no description");
  else
    snprintf(buf, n, "CUDA error %d", (int)r);
  return buf;
}

bool tl_rt_arch_for_cc(int major, int minor, char *buf, size_t n) {
  const char *arch = NULL;
  if (major >= 10) arch = "sm_90";
  else if (major == 9) arch = "sm_90a";
  else if (major == 8 && minor >= 9) arch = "sm_89";
  else if (major == 8) arch = "sm_80";
  if (!arch) return false;
  snprintf(buf, n, "%s", arch);
  return true;
}

/* ---- devices ------------------------------------------------------------------------------ */
static pthread_mutex_t device_lock = PTHREAD_MUTEX_INITIALIZER;
static tl_rt_device devices[TL_RT_MAX_DEVICES];
static bool device_ready[TL_RT_MAX_DEVICES];

#define CU_TRY(call, what)                                                                    \
  do {                                                                                        \
    CUresult r_ = (call);                                                                     \
    if (r_ != CUDA_SUCCESS) {                                                                 \
      char t_[200];                                                                           \
      snprintf(err, n, "%s failed on device %d: %s", what, ordinal, tl_rt_result_text(r_, t_, sizeof t_)); \
      return r_ == CUDA_ERROR_NO_DEVICE || r_ == CUDA_ERROR_INVALID_DEVICE ? TL_ERR_NO_DEVICE : TL_ERR_CUDA; \
    }                                                                                         \
  } while (0)

static int open_device(const tl_cuda *cu, int ordinal, tl_rt_device *d, char *err, size_t n) {
  memset(d, 0, sizeof *d);
  d->ordinal = ordinal;
  CU_TRY(cu->cuDeviceGet(&d->dev, ordinal), "cuDeviceGet");
  if (cu->cuDeviceGetName(d->name, (int)sizeof d->name, d->dev) != CUDA_SUCCESS) snprintf(d->name, sizeof d->name, "?");
  struct { int attr; int *slot; } attrs[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &d->cc_major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &d->cc_minor},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &d->max_threads_block},
      {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, &d->max_regs_block},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &d->max_smem_block},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &d->max_smem_optin},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &d->sm_count},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &d->max_grid[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &d->max_grid[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &d->max_grid[2]},
  };
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
    CU_TRY(cu->cuDeviceGetAttribute(attrs[i].slot, attrs[i].attr, d->dev), "cuDeviceGetAttribute");
  if (d->max_smem_optin < d->max_smem_block) d->max_smem_optin = d->max_smem_block;
  if (!tl_rt_arch_for_cc(d->cc_major, d->cc_minor, d->arch, sizeof d->arch)) {
    snprintf(err, n, "device %d (%s) has compute capability %d.%d; tilec needs 8.0 or newer", ordinal,
             d->name, d->cc_major, d->cc_minor);
    return TL_ERR_UNSUPPORTED;
  }
  CU_TRY(cu->cuDevicePrimaryCtxRetain(&d->ctx, d->dev), "cuDevicePrimaryCtxRetain");
  return TL_OK;
}

int tl_rt_device_get(int ordinal, const tl_rt_device **out, char *err, size_t n) {
  const tl_cuda *cu;
  *out = NULL;
  int st = tl_rt_driver(&cu, err, n);
  if (st != TL_OK) return st;
  int count = 0;
  if (cu->cuDeviceGetCount(&count) != CUDA_SUCCESS) count = 0;
  if (ordinal < 0 || ordinal >= count || ordinal >= TL_RT_MAX_DEVICES) {
    snprintf(err, n, "CUDA device %d not found (%d device%s present)", ordinal, count, count == 1 ? "" : "s");
    return TL_ERR_NO_DEVICE;
  }
  pthread_mutex_lock(&device_lock);
  st = TL_OK;
  if (!device_ready[ordinal]) {
    st = open_device(cu, ordinal, &devices[ordinal], err, n);
    device_ready[ordinal] = st == TL_OK;
  }
  pthread_mutex_unlock(&device_lock);
  if (st == TL_OK) *out = &devices[ordinal];
  return st;
}

int tl_rt_make_current(const tl_rt_device *d, char *err, size_t n) {
  CUcontext cur = NULL;
  if (driver.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == d->ctx) return TL_OK;
  CUresult r = driver.cuCtxSetCurrent(d->ctx);
  if (r != CUDA_SUCCESS) {
    char t[200];
    snprintf(err, n, "cuCtxSetCurrent failed on device %d: %s", d->ordinal, tl_rt_result_text(r, t, sizeof t));
    return TL_ERR_CUDA;
  }
  return TL_OK;
}

/* For lib/api (program.h): the target of device `device`, when there is one. */
bool tl_rt_device_arch(int device, char *buf, size_t n) {
  const tl_rt_device *d;
  char err[sizeof driver_error];
  if (tl_rt_device_get(device, &d, err, sizeof err) != TL_OK) return false;
  snprintf(buf, n, "%s", d->arch);
  return true;
}
