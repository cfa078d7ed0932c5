/* small_m.h: the small-M forms of a cutlass GEMM kernel (passes/small_m.c records them,
 * lib/api/forms.c loads them, lib/api/form_launch.c launches them; docs/small_m.md).
 *
 * A form is the same kernel source compiled with other values of the tile constants that set
 * the main-loop dot's M, N and K extents (and its own pipeline / stages), for launches whose M
 * (the rows of the dot's A operand, a shape symbol) is at most max_m.  The launcher picks the
 * first form whose max_m >= M; a larger M runs the kernel itself. */
#ifndef TILEC_SMALL_M_H
#define TILEC_SMALL_M_H

#include <stdint.h>

#define TL_SMALL_M_MAX_FORMS 6

typedef struct tl_small_m_form {
  int64_t max_m;      /* launches with M <= max_m (forms sorted by it) */
  int64_t bm, bn, bk; /* the values of the tile constants const_m / const_n / const_k */
  int pipeline;       /* tl_pipeline the form is compiled for (option "pipeline") */
  int stages;         /* option "stages" (0 = the compiler's choice) */
  bool split;         /* split K: the partial and reduce halves (passes/split_k.c), SPLIT picked at launch */
} tl_small_m_form;

typedef struct tl_small_m_plan {
  const char *m_sym;                /* the shape symbol of A's rows ("M") */
  int32_t m_param, m_axis;          /* where a launch's arguments give it: param m_param, dim m_axis */
  int32_t n_param, n_axis, k_param, k_axis; /* and N (B's columns / W's rows), K (A's columns) */
  const char *const_m, *const_n, *const_k; /* the tile constants the forms set */
  int nforms;
  tl_small_m_form forms[TL_SMALL_M_MAX_FORMS];
} tl_small_m_plan;

#endif
