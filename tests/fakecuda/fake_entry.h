/* fake_entry.h: for the fake driver's by-name entry points (fake_libcuda_run.c,
 * fake_libcuda_gpu_tests.c): the function fake_libcuda.c's cuGetProcAddress_v2 table holds for a
 * name, which they forward to (NULL where it has none). */
#ifndef TILEC_FAKE_ENTRY_H
#define TILEC_FAKE_ENTRY_H
#include <stdint.h>

#define API __attribute__((visibility("default")))
typedef int CUresult;

API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status);
static inline void *entry(const char *name) {
  void *fn = NULL;
  int status = 0;
  return cuGetProcAddress_v2(name, &fn, 12000, 0, &status) == 0 ? fn : NULL;
}
#endif
