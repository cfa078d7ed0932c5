/* jit_ref.c: the launches of cases.h through libtilec's JIT
 * (tilec_kernel_launch), in the same order and format as consumer.c. */
#include <stdio.h>
#include <stdlib.h>

#include "tilec.h"
#include "cases.h"

static tilec_kernel *load(const char *path, const char *kernel, tilec_program **keep) {
  tilec_options *o = NULL;
  tilec_options_create(&o);
  tilec_options_set_arch(o, "sm_90a");
  tilec_program *p = NULL;
  tilec_kernel *k = NULL;
  if (tilec_program_create_from_file(&p, path, o) != TILEC_OK || tilec_kernel_load(p, kernel, 0, &k) != TILEC_OK) {
    fprintf(stderr, "jit_ref: %s:%s: %s\n", path, kernel, p ? tilec_program_log(p) : "cannot read");
    exit(1);
  }
  tilec_options_destroy(o);
  *keep = p;
  return k;
}

int main(int argc, char **argv) {
  if (argc != 2) { fprintf(stderr, "usage: jit_ref EXAMPLES_DIR\n"); return 2; }
  char path[3][4096];
  snprintf(path[0], sizeof path[0], "%s/rmsnorm.tile", argv[1]);
  snprintf(path[1], sizeof path[1], "%s/gemm.tile", argv[1]);
  snprintf(path[2], sizeof path[2], "%s/attn.tile", argv[1]);
  tilec_program *p[4];
  tilec_kernel *k[4] = {load(path[0], "rmsnorm", &p[0]), load(path[1], "cutlass_gemm", &p[1]),
                        load(path[2], "attn_fwd", &p[2]), load(path[2], "cutlass_attn_fwd", &p[3])};
  void *stream = (void *)(uintptr_t)0x5000;
  for (int i = 0; i < AOT_NCASES; i++) {
    aot_case c = aot_make(i);
    DLTensor t[4];
    tilec_arg a[5];
    for (int j = 0; j < c.ntensors; j++) {
      int rank = c.kernel == K_RMSNORM && j == 1 ? 1 : c.kernel >= K_ATTN ? 4 : 2;
      t[j] = (DLTensor){.data = (void *)(uintptr_t)c.ptr[j], .device = {kDLCUDA, 0}, .ndim = rank,
                        .dtype = {kDLBfloat, 16, 1}, .shape = c.shape[j], .strides = c.strides[j]};
      a[j] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &t[j]};
    }
    int n = c.ntensors;
    if (c.kernel != K_GEMM) a[n++] = (tilec_arg){.kind = TILEC_ARG_F32, .u.f32 = c.scalar};
    tilec_status st = tilec_kernel_launch(k[c.kernel], a, n, stream);
    printf("%d %d\n", i, (int)st);
    if (st) fprintf(stderr, "case %d: %s\n", i, tilec_kernel_error(k[c.kernel]));
  }
  int64_t shape[2] = {3, 100}, wshape[1] = {100};
  DLTensor t[3] = {{.data = (void *)(uintptr_t)0x7f0000000000ull, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLBfloat, 16, 1}, .shape = shape},
                   {.data = (void *)(uintptr_t)0x7f0010000000ull, .device = {kDLCUDA, 0}, .ndim = 1, .dtype = {kDLBfloat, 16, 1}, .shape = wshape},
                   {.data = (void *)(uintptr_t)0x7f0020000000ull, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLBfloat, 16, 1}, .shape = shape}};
  tilec_arg a[4] = {{.kind = TILEC_ARG_TENSOR, .u.tensor = &t[0]}, {.kind = TILEC_ARG_TENSOR, .u.tensor = &t[1]},
                    {.kind = TILEC_ARG_TENSOR, .u.tensor = &t[2]}, {.kind = TILEC_ARG_F32, .u.f32 = 0.5f}};
  printf("null-strides %d\n", (int)tilec_kernel_launch(k[0], a, 4, stream));
  for (int j = 0; j < 4; j++) tilec_kernel_destroy(k[j]);
  for (int j = 0; j < 4; j++) tilec_program_destroy(p[j]);
  return 0;
}
