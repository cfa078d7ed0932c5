/* fake_cuda.h: a fake CUDA driver for the runtime tests, injected with
 * tl_rt_driver_inject.  It "links" PTX into a cubin that is the PTX behind a
 * magic line, loads such modules, finds their entries, and counts calls in
 * `calls`.  A test includes it, writes its own cuLaunchKernel (and any other
 * entry it needs), and builds its tl_cuda from FAKE_CUDA_ENTRIES.
 * Device and function limits come from `fake_limits` (a test may change them
 * before the device is first opened / the kernel loaded); cuPointerGetAttribute
 * answers from the allocations a test registers with fake_alloc.
 * Before including: FAKE_NDEVICES (default 1), FAKE_NUM_REGS (default 40). */
#ifndef TILEC_TEST_FAKE_CUDA_H
#define TILEC_TEST_FAKE_CUDA_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

#ifndef FAKE_NDEVICES
#define FAKE_NDEVICES 1
#endif
#ifndef FAKE_NUM_REGS
#define FAKE_NUM_REGS 40
#endif
#define FAKE_MAGIC "FAKECUBIN\n"

static struct {
  int retains, links, module_loads, unloads, launches;
  int link_creates, cubin_loads; /* cuLinkCreate calls; images loaded that are (fake) ELF cubins */
  char *last_linked_ptx;
  unsigned grid[3], block[3], smem; /* the last launch, where the test's cuLaunchKernel records it */
  uint64_t param0;
  /* cuTensorMapEncodeTiled (f_encode_tiled): count and the arguments of the last 4 calls */
  int encodes;
  struct { int dtype, swizzle, l2, oob, interleave; unsigned rank, box[5], estr[5]; void *addr; uint64_t dims[5], stride, strides[4]; } enc[4];
} calls;
static __thread CUcontext current;
/* a kernel's small-M forms load on threads (lib/api/forms.c): the counters and the PTX recorded are shared */
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
#define FAKE_COUNT(c) __atomic_fetch_add(&(c), 1, __ATOMIC_RELAXED)

/* What the fake device and its functions report. */
static struct {
  int max_grid[3], max_threads_block, max_regs_block, max_smem_block, max_smem_optin;
  int num_regs, func_max_threads, static_smem, local_bytes;
  int sm_count; /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT (an H200's 132) */
} fake_limits = {{2147483647, 65535, 65535}, 1024, 65536, 49152, 232448, FAKE_NUM_REGS, 1024, 0, 0, 132};

/* Registered device allocations (cuPointerGetAttribute). */
#define FAKE_MAX_ALLOCS 16
static struct fake_alloc_rec {
  uint64_t base, size;
  unsigned type;          /* CU_MEMORYTYPE_* */
  int ordinal, managed;
  CUcontext ctx;
} fake_allocs[FAKE_MAX_ALLOCS];
static int fake_nallocs, fake_pointer_queries;
static CUcontext fake_ctx_of(int ordinal) { return (CUcontext)(uintptr_t)(0x1000 + 16 * ordinal); }
__attribute__((unused)) static void fake_alloc(uint64_t base, uint64_t size, unsigned type, int ordinal, CUcontext ctx, int managed) {
  if (fake_nallocs < FAKE_MAX_ALLOCS)
    fake_allocs[fake_nallocs++] = (struct fake_alloc_rec){base, size, type, ordinal, managed, ctx};
}
static CUresult f_pointer_attr(void *data, int attr, CUdeviceptr ptr) {
  fake_pointer_queries++;
  for (int i = 0; i < fake_nallocs; i++) {
    const struct fake_alloc_rec *a = &fake_allocs[i];
    if (ptr < a->base || ptr - a->base >= a->size) continue;
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *)data = a->type; return 0;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned char *)data = (unsigned char)a->managed; return 0;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = a->ordinal; return 0;
    case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = a->ctx; return 0;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data = a->base; return 0;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = (size_t)a->size; return 0;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_ERROR_INVALID_VALUE; /* as the driver answers for memory it does not know */
}

struct CUlinkState_st { char *ptx; char *image; };
struct CUmod_st { char *text; };
struct CUfunc_st { CUmodule mod; char name[256]; };

static CUresult f_error_name(CUresult e, const char **s) { *s = e ? "CUDA_ERROR_FAKE" : "CUDA_SUCCESS"; return 0; }
static CUresult f_error_string(CUresult e, const char **s) { (void)e; *s = "fake driver"; return 0; }
static CUresult f_version(int *v) { *v = 13000; return 0; }
static CUresult f_count(int *n) { *n = FAKE_NDEVICES; return 0; }
static CUresult f_device_get(CUdevice *d, int ordinal) {
  if (ordinal < 0 || ordinal >= FAKE_NDEVICES) return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return 0;
}
/* a device's compute capability: 9.0 unless a test sets fake_cc[d] (major * 10 + minor) first */
__attribute__((unused)) static int fake_cc[8];
static CUresult f_attribute(int *v, int attr, CUdevice d) {
  int cc = d >= 0 && d < 8 && fake_cc[d] ? fake_cc[d] : 90;
  switch (attr) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = cc / 10; break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = cc % 10; break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = fake_limits.max_threads_block; break;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *v = fake_limits.max_regs_block; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = fake_limits.max_smem_block; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = fake_limits.max_smem_optin; break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = fake_limits.sm_count; break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = fake_limits.max_grid[0]; break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *v = fake_limits.max_grid[1]; break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = fake_limits.max_grid[2]; break;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
  return 0;
}
static CUresult f_name(char *name, int len, CUdevice d) { snprintf(name, (size_t)len, "Fake H200 #%d", d); return 0; }
static CUresult f_retain(CUcontext *c, CUdevice d) {
  calls.retains++;
  *c = fake_ctx_of(d);
  return 0;
}
static CUresult f_set_current(CUcontext c) { current = c; return 0; }
static CUresult f_get_current(CUcontext *c) { *c = current; return 0; }
static CUresult f_link_create(unsigned n, CUjit_option *o, void **v, CUlinkState *s) {
  (void)n; (void)o; (void)v;
  FAKE_COUNT(calls.links);
  FAKE_COUNT(calls.link_creates);
  *s = calloc(1, sizeof **s);
  return 0;
}
static CUresult f_link_add(CUlinkState s, int type, void *data, size_t size, const char *name, unsigned n,
                           CUjit_option *o, void **v) {
  (void)name; (void)n; (void)o; (void)v;
  if (type != CU_JIT_INPUT_PTX || ((char *)data)[size - 1] != 0) return CUDA_ERROR_INVALID_VALUE;
  s->ptx = strdup(data);
  pthread_mutex_lock(&fake_lock);
  free(calls.last_linked_ptx);
  calls.last_linked_ptx = strdup(data);
  pthread_mutex_unlock(&fake_lock);
  return 0;
}
static CUresult f_link_complete(CUlinkState s, void **cubin, size_t *size) {
  if (!s->ptx || !strstr(s->ptx, ".target")) return CUDA_ERROR_INVALID_PTX;
  size_t n = strlen(FAKE_MAGIC) + strlen(s->ptx) + 1;
  s->image = malloc(n);
  snprintf(s->image, n, "%s%s", FAKE_MAGIC, s->ptx);
  *cubin = s->image;
  *size = n;
  return 0;
}
static CUresult f_link_destroy(CUlinkState s) { free(s->ptx); free(s->image); free(s); return 0; }
static CUresult f_module_load(CUmodule *m, const void *image) {
  FAKE_COUNT(calls.module_loads);
  if (!memcmp(image, "\x7f" "ELF", 4)) { /* tests/fakecuda/fake_ptxas's "cubin" */
    FAKE_COUNT(calls.cubin_loads);
    image = (const char *)image + 4;
  }
  if (strncmp(image, FAKE_MAGIC, strlen(FAKE_MAGIC)) != 0) return CUDA_ERROR_INVALID_PTX;
  *m = calloc(1, sizeof **m);
  (*m)->text = strdup(image);
  return 0;
}
/* PTX compiled whole at load (the default assembler where no ptxas is found): counted as a
 * driver compile (calls.links) and a module load; the module keeps the PTX. */
static CUresult f_module_load_ex(CUmodule *m, const void *image, unsigned n, CUjit_option *o, void **v) {
  (void)n; (void)o; (void)v;
  const char *ptx = image;
  if (!strncmp(ptx, FAKE_MAGIC, strlen(FAKE_MAGIC))) return f_module_load(m, image);
  FAKE_COUNT(calls.module_loads);
  if (!strstr(ptx, ".target")) return CUDA_ERROR_INVALID_PTX;
  FAKE_COUNT(calls.links);
  pthread_mutex_lock(&fake_lock);
  free(calls.last_linked_ptx);
  calls.last_linked_ptx = strdup(ptx);
  pthread_mutex_unlock(&fake_lock);
  size_t len = strlen(FAKE_MAGIC) + strlen(ptx) + 1;
  *m = calloc(1, sizeof **m);
  (*m)->text = malloc(len);
  snprintf((*m)->text, len, "%s%s", FAKE_MAGIC, ptx);
  return 0;
}
/* No ptxas for the fake driver's tests (the default assembler then hands the driver the PTX,
 * on every machine alike); a test that wants one sets TILEC_PTXAS itself. */
__attribute__((constructor)) static void fake_no_ptxas(void) { setenv("TILEC_PTXAS", "/nonexistent/ptxas", 0); }
static CUresult f_module_unload(CUmodule m) { FAKE_COUNT(calls.unloads); free(m->text); free(m); return 0; }
static CUresult f_get_function(CUfunction *f, CUmodule m, const char *name) {
  char pattern[300];
  snprintf(pattern, sizeof pattern, ".entry %s(", name);
  if (!strstr(m->text, pattern)) return CUDA_ERROR_NOT_FOUND;
  *f = calloc(1, sizeof **f); /* leaked with the module: fine in a test */
  (*f)->mod = m;
  snprintf((*f)->name, sizeof (*f)->name, "%s", name);
  return 0;
}
static CUresult f_func_attr(int *v, int attr, CUfunction f) {
  (void)f;
  switch (attr) {
  case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = fake_limits.num_regs; break;
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = fake_limits.func_max_threads; break;
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = fake_limits.static_smem; break;
  case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *v = fake_limits.local_bytes; break;
  default: *v = 0; break;
  }
  return 0;
}
static CUresult f_func_set(CUfunction f, int attr, int value) { (void)f; (void)attr; (void)value; return 0; }

/* Records its arguments; the map holds 0xAB bytes then the call number. */
static CUresult f_encode_tiled(CUtensorMap *map, int dtype, unsigned rank, void *addr, const cuuint64_t *dims,
                               const cuuint64_t *strides, const unsigned *box, const unsigned *estr, int interleave,
                               int swizzle, int l2, int oob) {
  /* (the driver takes ranks 1..5: a ring row of a vector is rank 1, lib/codegen/emit_ring_rows.c) */
  if ((uintptr_t)map % 64 || rank < 1 || rank > 5) return CUDA_ERROR_INVALID_VALUE;
  int i = calls.encodes++ % 4;
  memset(&calls.enc[i], 0, sizeof calls.enc[i]);
  calls.enc[i].dtype = dtype; calls.enc[i].rank = rank; calls.enc[i].addr = addr;
  calls.enc[i].stride = strides[0];
  for (unsigned d = 0; d < rank; d++) {
    calls.enc[i].dims[d] = dims[d]; calls.enc[i].box[d] = box[d]; calls.enc[i].estr[d] = estr[d];
    if (d + 1 < rank) calls.enc[i].strides[d] = strides[d];
  }
  calls.enc[i].interleave = interleave; calls.enc[i].swizzle = swizzle; calls.enc[i].l2 = l2; calls.enc[i].oob = oob;
  memset(map, 0xAB, sizeof *map);
  memcpy(map, &calls.encodes, sizeof calls.encodes);
  return 0;
}

/* The designated initializers every fake driver shares; a test adds
 * .cuLaunchKernel and whatever else it fakes. */
#define FAKE_CUDA_ENTRIES                                                                                         \
  .driver_version = 13000, .cuGetErrorName = f_error_name, .cuGetErrorString = f_error_string,                  \
  .cuDriverGetVersion = f_version, .cuDeviceGetCount = f_count, .cuDeviceGet = f_device_get,                    \
  .cuDeviceGetAttribute = f_attribute, .cuDeviceGetName = f_name, .cuDevicePrimaryCtxRetain = f_retain,         \
  .cuCtxSetCurrent = f_set_current, .cuCtxGetCurrent = f_get_current, .cuLinkCreate = f_link_create,            \
  .cuLinkAddData = f_link_add, .cuLinkComplete = f_link_complete, .cuLinkDestroy = f_link_destroy,              \
  .cuModuleLoadData = f_module_load, .cuModuleLoadDataEx = f_module_load_ex, .cuModuleUnload = f_module_unload, .cuModuleGetFunction = f_get_function, \
  .cuFuncGetAttribute = f_func_attr, .cuFuncSetAttribute = f_func_set, .cuTensorMapEncodeTiled = f_encode_tiled, \
  .cuPointerGetAttribute = f_pointer_attr

#endif
