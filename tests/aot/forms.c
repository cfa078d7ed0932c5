/* forms.c: the two images of a TMA kernel's AOT launcher (tilec --emit=c of examples/gemm.tile,
 * docs/aot.md "Two images") against the fake driver (TILEC_LIBCUDA, whose queries it reads):
 * a launch whose tensors a tensor map can take loads the module and runs the TMA form, nothing
 * more; one with an offset view or an odd row stride loads the no-TMA image once and runs it; a
 * fitting launch after that runs the TMA form again; another context loads its own images;
 * _load_all loads both; refused arguments load nothing.  Built from the generated files alone.
 * Prints PASS or each failure; exit 0 / 1. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_gemm.h"

static long (*loads)(void);
static long (*launches)(void);
static const char *(*image)(void);
static int failures;

#define EXPECT(c, ...)                   \
  do {                                   \
    if (!(c)) {                          \
      printf("FAIL line %d: ", __LINE__); \
      printf(__VA_ARGS__);               \
      printf("\n");                      \
      failures++;                        \
    }                                    \
  } while (0)

/* C = A B at M 300, K 600, N n (C's rows n apart); A at 0x7f0000000000 + a_off bytes, B's rows ldb apart. */
static int gemm(unsigned a_off, int64_t n, int64_t ldb, int64_t k_b) {
  int64_t sa[2] = {300, 600}, sb[2] = {k_b, n}, sc[2] = {300, n}, ta[2] = {600, 1}, tb[2] = {ldb, 1}, tc[2] = {n, 1};
  int st = aot_gemm_cutlass_gemm((void *)(uintptr_t)(0x7f0000000000ull + a_off), sa, ta, (void *)(uintptr_t)0x7f0010000000ull,
                                 sb, tb, (void *)(uintptr_t)0x7f0020000000ull, sc, tc, (void *)(uintptr_t)0x5000);
  if (st) printf("  (launch status %d: %s)\n", st, aot_gemm_last_error());
  return st;
}

/* Which image the last launch ran: "tma" (the TMA form: TMA copies, the trap of its map test),
 * "notma" (neither), else "?". */
static const char *ran(void) {
  const char *t = image();
  if (!t) return "none";
  bool tma = strstr(t, "cp.async.bulk.tensor") != NULL, form = strstr(t, "tilec: TMA form") != NULL;
  return tma && form ? "tma" : !tma && !form && !strstr(t, "trap;") ? "notma" : "?";
}

int main(void) {
  const char *path = getenv("TILEC_LIBCUDA");
  void *lib = path ? dlopen(path, RTLD_NOW) : NULL;
  if (!lib) { printf("FAIL: TILEC_LIBCUDA does not name the fake driver\n"); return 1; }
  loads = (long (*)(void))dlsym(lib, "fake_cuda_module_loads");
  launches = (long (*)(void))dlsym(lib, "fake_cuda_launches");
  image = (const char *(*)(void))dlsym(lib, "fake_cuda_last_launch_image");
  int (*gpa)(const char *, void **, int, uint64_t, int *) =
      (int (*)(const char *, void **, int, uint64_t, int *))dlsym(lib, "cuGetProcAddress_v2");
  int (*set_ctx)(void *) = NULL;
  int qs = 0;
  if (!loads || !launches || !image || !gpa || gpa("cuCtxSetCurrent", (void **)&set_ctx, 12000, 0, &qs) || !set_ctx) {
    printf("FAIL: the fake driver has no module-load queries\n");
    return 1;
  }
  /* (the first context: device 0's primary one, made current by the launcher) */
  EXPECT(gemm(0, 520, 520, 600) == 0, "fitting launch");
  EXPECT(loads() == 1, "a fitting first launch loaded %ld images (the module only: 1)", loads());
  EXPECT(!strcmp(ran(), "tma"), "a fitting launch ran %s, not the TMA form", ran());
  EXPECT(gemm(2, 520, 520, 600) == 0, "offset view");
  EXPECT(loads() == 2, "an offset view of A: %ld images loaded (its no-TMA image too: 2)", loads());
  EXPECT(!strcmp(ran(), "notma"), "an offset view of A ran %s, not the no-TMA image", ran());
  EXPECT(gemm(0, 517, 517, 600) == 0, "odd row stride");
  EXPECT(loads() == 2, "B's odd row stride loaded the no-TMA image again (%ld images)", loads());
  EXPECT(!strcmp(ran(), "notma"), "B's odd row stride ran %s, not the no-TMA image", ran());
  EXPECT(gemm(0, 520, 520, 600) == 0, "fitting launch again");
  EXPECT(loads() == 2 && !strcmp(ran(), "tma"), "fitting again: %ld images, ran %s (2, the TMA form)", loads(), ran());
  long l0 = launches();
  EXPECT(gemm(2, 517, 517, 601) == 9 && launches() == l0 && loads() == 2, "refused arguments launched or loaded");
  /* another context: its own module; an unfitting first launch loads both images */
  set_ctx((void *)(uintptr_t)0x1010);
  EXPECT(gemm(2, 520, 520, 600) == 0 && loads() == 4 && !strcmp(ran(), "notma"),
         "a second context's first (unfitting) launch: %ld images in all (4), ran %s", loads(), ran());
  EXPECT(gemm(0, 520, 520, 600) == 0 && loads() == 4 && !strcmp(ran(), "tma"),
         "a second context's fitting launch: %ld images (4), ran %s", loads(), ran());
  /* a third: _load_all loads the module and the no-TMA image, then nothing more */
  set_ctx((void *)(uintptr_t)0x1020);
  EXPECT(aot_gemm_load_all() == 0 && loads() == 6, "_load_all: %ld images in all (6)", loads());
  EXPECT(gemm(2, 520, 520, 600) == 0 && gemm(0, 520, 520, 600) == 0 && loads() == 6, "after _load_all: %ld (6)", loads());
  printf("%s: %d failure%s (%ld launches, %ld images loaded)\n", failures ? "FAIL" : "PASS", failures,
         failures == 1 ? "" : "s", launches(), loads());
  return failures ? 1 : 0;
}
