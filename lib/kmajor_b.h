/* kmajor_b.h: the K-major-B form of a wgmma GEMM whose 8-bit B is stored [K, N] (issue 10 item 5;
 * docs/pipelines.md "fp8 [K][N] B: the transpose form").
 *
 * Hopper's 8-bit wgmma reads B from shared memory only K-major, so a B kept [K, N] (N contiguous)
 * must be transposed somewhere.  The form is the kernel's own source with B's parameter stored
 * [N, K] (passes/kmajor_b.c rewrites every `load B[k.., n..]` into `trans(load B[n.., k..])`: the
 * TN kernel's loop); passes/kmajor_form.c records which kernels get one (f->kmajor_b); the
 * launcher (lib/api/form_launch.c) picks it by B's strides at each launch:
 *   B's view K-major already (stride along K 1: `w.t()` of an [N, K] weight): the form on B's own
 *     memory, seen [N, K];
 *   B's view N-major (stride along N 1) and more than one tile row of C (M > the dot's M extent):
 *     a transpose kernel writes B into a workspace [N, K] (rows padded to 16 bytes), then the form
 *     runs on it (two launches on the caller's stream);
 *   otherwise the kernel itself (its in-kernel transpose).
 * On sm_90a an 8-bit 128x128x128 kernel on 8 warps gets the form at TN's tile there, 128x256 x 4
 * stages (examples/gemm_fp8.tile's cutlass_gemm_fp8_tn), where its in-kernel transpose cannot
 * (80 KiB a stage); TILEC_KMAJOR_B_TILE=0: the form at the kernel's tile. */
#ifndef TILEC_KMAJOR_B_H
#define TILEC_KMAJOR_B_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tl_func;

typedef struct tl_kmajor_plan {
  int32_t b_param;          /* B's parameter index: tensor [K, N] */
  const char *b_name;       /* its name (the option "kmajor-b" of the form) */
  int32_t m_param, m_axis;  /* where a launch's arguments give M (A's rows) */
  int64_t bm;               /* the dot's M extent (C's tile rows) */
  int dtype;                /* B's tl_dtype (the transpose kernel's element type) */
  /* The form's own tile (passes/kmajor_form.c "TN's tile"): the tile constant naming the dot's N
   * extent set to form_bn and the ring's stages to form_stages; const_n NULL: the kernel's tile. */
  const char *const_n;
  int64_t form_bn;
  int form_stages;
} tl_kmajor_plan;

/* Whether parameter `param` of f can be stored [N, K] by passes/kmajor_b.c: a 2-D tensor whose
 * every use is a `dim` or a load of a 2-D view keeping both dimensions (no gather, no store, no
 * atomic); false with the reason in why. */
bool tl_kmajor_b_rewritable(struct tl_func *f, int32_t param, char *why, size_t n);

#endif
