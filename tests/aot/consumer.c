/* consumer.c: a program built from the generated launchers alone (tilec
 * --emit=c of examples/rmsnorm.tile, gemm.tile, attn.tile) and cases.h; no
 * libtilec.  Prints one line per case: its index and the launcher's status
 * (the error text goes to stderr).  Run against the fake driver
 * (TILEC_LIBCUDA) it records every launch; tests/aot/run.sh compares that
 * record with the JIT's (jit_ref.c). */
#include <stdio.h>

#include "aot_rmsnorm.h"
#include "aot_gemm.h"
#include "aot_attn.h"
#include "cases.h"

int main(void) {
  void *stream = (void *)(uintptr_t)0x5000;
  for (int i = 0; i < AOT_NCASES; i++) {
    aot_case c = aot_make(i);
    void *p[4];
    for (int t = 0; t < 4; t++) p[t] = (void *)(uintptr_t)c.ptr[t];
    int st = -1;
    switch (c.kernel) {
    case K_RMSNORM:
      st = aot_rmsnorm_rmsnorm(p[0], c.shape[0], c.strides[0], p[1], c.shape[1], c.strides[1], p[2], c.shape[2],
                               c.strides[2], c.scalar, stream);
      break;
    case K_GEMM:
      st = aot_gemm_cutlass_gemm(p[0], c.shape[0], c.strides[0], p[1], c.shape[1], c.strides[1], p[2], c.shape[2],
                                 c.strides[2], stream);
      break;
    default:
      st = (c.kernel == K_ATTN ? aot_attn_attn_fwd : aot_attn_cutlass_attn_fwd)(
          p[0], c.shape[0], c.strides[0], p[1], c.shape[1], c.strides[1], p[2], c.shape[2], c.strides[2], p[3],
          c.shape[3], c.strides[3], c.scalar, stream);
      break;
    }
    printf("%d %d\n", i, st);
    if (st) fprintf(stderr, "case %d: %s\n", i, c.kernel == K_RMSNORM ? aot_rmsnorm_last_error()
                                                : c.kernel == K_GEMM  ? aot_gemm_last_error()
                                                                      : aot_attn_last_error());
  }
  /* row-major strides when NULL: a launch the same as with explicit ones */
  int64_t shape[2] = {3, 100}, wshape[1] = {100};
  int st = aot_rmsnorm_rmsnorm((void *)(uintptr_t)0x7f0000000000ull, shape, NULL, (void *)(uintptr_t)0x7f0010000000ull,
                               wshape, NULL, (void *)(uintptr_t)0x7f0020000000ull, shape, NULL, 0.5f, stream);
  printf("null-strides %d\n", st);
  return 0;
}
