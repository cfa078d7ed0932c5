/* fake_libcuda_run.c: the entry points `tilec run --device` dlsym's by name (tools/tilec.c cuda_open),
 * exported beside fake_libcuda.c's cuGetProcAddress_v2 table they forward to.  Memory is host memory,
 * copies are memcpy, launches record and compute nothing: the "GPU result" is the output's random
 * input bytes, so a comparison fails, which is what tests/lit/cli/run_f8_tolerance.test wants. */
#include <stdint.h>
#include <string.h>

#include "fake_entry.h"

API CUresult cuInit(unsigned f) { return ((CUresult(*)(unsigned))entry("cuInit"))(f); }
API CUresult cuDeviceGetCount(int *n) { return ((CUresult(*)(int *))entry("cuDeviceGetCount"))(n); }
API CUresult cuDeviceGet(int *d, int i) { return ((CUresult(*)(int *, int))entry("cuDeviceGet"))(d, i); }
API CUresult cuDevicePrimaryCtxRetain(void **c, int d) {
  return ((CUresult(*)(void **, int))entry("cuDevicePrimaryCtxRetain"))(c, d);
}
API CUresult cuCtxSetCurrent(void *c) { return ((CUresult(*)(void *))entry("cuCtxSetCurrent"))(c); }
API CUresult cuCtxSynchronize(void) { return ((CUresult(*)(void))entry("cuCtxSynchronize"))(); }
API CUresult cuMemAlloc_v2(uint64_t *p, size_t n) { return ((CUresult(*)(uint64_t *, size_t))entry("cuMemAlloc"))(p, n); }
API CUresult cuMemFree_v2(uint64_t p) { return ((CUresult(*)(uint64_t))entry("cuMemFree"))(p); }
API CUresult cuMemcpyHtoD_v2(uint64_t d, const void *h, size_t n) {
  memcpy((void *)(uintptr_t)d, h, n);
  return 0;
}
API CUresult cuMemcpyDtoH_v2(void *h, uint64_t d, size_t n) {
  memcpy(h, (const void *)(uintptr_t)d, n);
  return 0;
}
