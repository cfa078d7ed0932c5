/* small_m.h: the small-M forms of a cutlass GEMM kernel (passes/small_m.c records them,
 * lib/api/forms.c loads them, lib/api/form_launch.c launches them; docs/small_m.md).
 *
 * A form is the same kernel source compiled with other values of the tile constants that set
 * the main-loop dot's M, N and K extents (and its own pipeline / stages), for launches whose M
 * (the rows of the dot's A operand, a shape symbol) is at most max_m.  The launcher picks the
 * first form whose max_m >= M; a larger M runs the kernel itself, or the waves form (the last, if
 * any: TILEC_SMALL_M_WAVES) where the wave model below puts it ahead of the kernel at this M and N
 * on this device (lib/small_m_waves.c, docs/small_m.md "Waves"). */
#ifndef TILEC_SMALL_M_H
#define TILEC_SMALL_M_H

#include <stdbool.h>
#include <stdint.h>

#define TL_SMALL_M_MAX_FORMS 6

typedef struct tl_small_m_form {
  int64_t max_m;      /* launches with M <= max_m (forms sorted by it) */
  int64_t bm, bn, bk; /* the values of the tile constants const_m / const_n / const_k */
  int pipeline;       /* tl_pipeline the form is compiled for (option "pipeline") */
  int stages;         /* option "stages" (0 = the compiler's choice) */
  bool split;         /* split K: the partial and reduce halves (passes/split_k.c), SPLIT picked at launch */
  bool waves;         /* the waves form: for every M above the other forms' bounds, picked by the wave
                       * model at each launch (max_m is INT64_MAX; never split) */
} tl_small_m_form;

typedef struct tl_small_m_plan {
  const char *m_sym;                /* the shape symbol of A's rows ("M") */
  int32_t m_param, m_axis;          /* where a launch's arguments give it: param m_param, dim m_axis */
  int32_t n_param, n_axis, k_param, k_axis; /* and N (B's columns / W's rows), K (A's columns) */
  const char *const_m, *const_n, *const_k; /* the tile constants the forms set */
  int64_t kernel_bm, kernel_bn;     /* the kernel's own tile (the dot's M and N extents) */
  int nforms;
  tl_small_m_form forms[TL_SMALL_M_MAX_FORMS];
} tl_small_m_plan;

/* The wave model (lib/small_m_waves.c, docs/small_m.md "Waves"): the kernel's tile grid against the
 * waves form's at M x N on `sms` SMs.  Time = a fixed part + the busiest SM's tiles x a tile's cost,
 * a tile's cost ~ BM BN + 128 (BM + BN) (its MACs and its operand loads a k-step), the fixed part a
 * quarter of the kernel's tile; the form is picked where its time is at most TL_WAVES_PICK of the
 * kernel's.  Fitted on the H200 (cutlass_gemm, N = K = 4096): the 128x256 kernel 45.1 us at M 512
 * (64 tiles) and 48.3 at M 1024 (128), a 128x128 form 31.9 (128 tiles, one wave) and 54.4 (256, two). */
#define TL_WAVES_PICK 0.85
typedef struct tl_small_m_waves {
  int64_t tiles_kernel, tiles_form;  /* the tile grids (cdiv(M, BM) x cdiv(N, BN)) */
  int64_t waves_kernel, waves_form;  /* the busiest SM's tiles: cdiv(tiles, sms) */
  double ratio;                      /* the form's model time / the kernel's */
  bool pick;                         /* ratio <= TL_WAVES_PICK: the form runs the launch */
} tl_small_m_waves;
/* The model for form fm (a waves form of plan) at M x N on sms SMs; false (no pick) for M, N < 1. */
bool tl_small_m_waves_model(const tl_small_m_plan *plan, const tl_small_m_form *fm, int64_t m, int64_t n, int64_t sms,
                            tl_small_m_waves *out);

#endif
