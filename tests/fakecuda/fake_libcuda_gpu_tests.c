/* fake_libcuda_gpu_tests.c: the versioned entry points the GPU tests' own driver table dlsym's
 * (tests/gpu/gpu_util.c gpu_init), exported beside fake_libcuda.c's cuGetProcAddress_v2 table and
 * fake_libcuda_run.c's, so that a libcuda.so.1 of the three lets gpu_test_* run on a machine without
 * a GPU (tools/pending_dry.sh): memory is host memory, launches record and compute nothing, streams
 * and graphs are tokens (a captured launch is not replayed).  A test then runs its interpreter and
 * its bookkeeping for real and FAILs its comparisons: what the dry run wants is the time and the
 * path to the table, not the result. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_entry.h"

API CUresult cuGetErrorName(CUresult e, const char **s) {
  return ((CUresult(*)(CUresult, const char **))entry("cuGetErrorName"))(e, s);
}
API CUresult cuMemsetD8_v2(uint64_t p, unsigned char v, size_t n) {
  return ((CUresult(*)(uint64_t, unsigned char, size_t))entry("cuMemsetD8"))(p, v, n);
}
API CUresult cuModuleLoadData(void **m, const void *image) {
  return ((CUresult(*)(void **, const void *))entry("cuModuleLoadData"))(m, image);
}
API CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
  return ((CUresult(*)(void **, void *, const char *))entry("cuModuleGetFunction"))(f, m, name);
}
API CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned smem, void *stream, void **params, void **extra) {
  return ((CUresult(*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
                       void **))entry("cuLaunchKernel"))(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
}
API CUresult cuStreamSynchronize(void *s) { (void)s; return 0; }
API CUresult cuStreamCreate(void **s, unsigned flags) {
  (void)flags;
  *s = malloc(8);
  return *s ? 0 : 2;
}
API CUresult cuStreamDestroy_v2(void *s) { free(s); return 0; }
API CUresult cuStreamBeginCapture_v2(void *s, int mode) { (void)s; (void)mode; return 0; }
API CUresult cuStreamEndCapture(void *s, void **graph) {
  (void)s;
  *graph = malloc(8);
  return *graph ? 0 : 2;
}
API CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags) {
  (void)graph; (void)flags;
  *exec = malloc(8);
  return *exec ? 0 : 2;
}
API CUresult cuGraphLaunch(void *exec, void *s) { (void)exec; (void)s; return 0; }
API CUresult cuGraphExecDestroy(void *exec) { free(exec); return 0; }
API CUresult cuGraphDestroy(void *graph) { free(graph); return 0; }
