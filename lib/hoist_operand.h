/* hoist_operand.h: the materialize-once form of a GEMM whose B operand is computed in its main loop
 * by elementwise ops from loads that do not depend on program_id(0) (W4A16's dequantized int4
 * weights: examples/gemm_w4a16.tile; docs/pipelines.md "Materialize once: the hoisted B operand").
 *
 * Such a kernel computes every B tile again for every row of tiles (32 times at M 4096, BM 128).
 * Its two compiled halves (passes/hoist_operand.c, a parameter `hoisted` [K, N] of B's type
 * appended to the kernel's):
 *   pre   the kernel's loop with the dot replaced by a store of B's tile into hoisted[k0.., n0..],
 *         one k-step a program (grid axis 0 = the k-steps instead of the row tiles), no epilogue;
 *   form  the kernel with B replaced by a plain load of hoisted[k0.., n0..] (a cutlass_gemm-like
 *         loop: B by TMA where the kernel is routed to cutlass).
 * Running pre then form computes what the kernel computes, bit for bit (the same B values, the same
 * dot).  passes/hoist_form.c says in --explain which kernels have one and why the others do not.
 * With TILEC_HOIST_OPERAND=1 (default off) passes/hoist_form.c records the plan (f->hoist_form), the
 * launcher loads both halves beside the kernel (lib/api/forms.c) and a launch whose M (A's rows) is
 * at least TILEC_HOIST_OPERAND_MIN_M (128: W4A16 measured 0.30-0.34x cuBLAS fused at M >= 128 against
 * 0.53-1.07x dequantized once then cutlass_gemm, the crossover between M 64 and 128) runs pre into
 * the handle's workspace, then form, on the caller's stream (lib/api/form_launch.c). */
#ifndef TILEC_HOIST_OPERAND_H
#define TILEC_HOIST_OPERAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir.h"

typedef struct tl_hoist_plan {
  int32_t dot, for_op, for_pos; /* the dot, its loop, the loop's index in f->body */
  int32_t a_load;               /* A's load op */
  int32_t iv, n0;               /* B's tile rows start at the loop index, its columns at n0 = program_id(1) * bn */
  int32_t lo_step;              /* the loop's step (a constant equal to bk) */
  int32_t hi_dim;               /* the loop's end: a `dim` op of a parameter */
  int64_t bk, bn;               /* B's tile */
  int dtype;                    /* B's tl_dtype (16-bit) */
  tl_dimspec k_dim, n_dim;      /* the workspace's [K, N]: A's columns, the columns of B's loads */
  const char *srcs[4];          /* the parameters B is computed from (for --explain) */
  int nsrcs;
  /* filled by passes/hoist_form.c for the launcher (lib/api/forms.c, form_launch.c): */
  int32_t m_param, m_axis;      /* where a launch's arguments give M (A's rows) */
  int32_t k_param, k_axis, n_param, n_axis; /* ... and the workspace's K and N (-1: a constant, k_dim / n_dim) */
  int64_t bm;                   /* the dot's M extent (C's tile rows) */
  /* the form's tile (cutlass_gemm's on sm_90a: const_m / const_n / const_k = form_bm / bn / bk, the
   * tile constants naming the dot's extents); const_m NULL: the kernel's tile */
  const char *const_m, *const_n, *const_k;
  int64_t form_bm, form_bn, form_bk;
} tl_hoist_plan;

/* Whether f has a materialize-once form: 1 yes (*plan filled), -1 no (why says why), 0 not a
 * kernel this is about (no single dot whose B is computed; why empty). */
int tl_hoist_operand_find(tl_func *f, tl_hoist_plan *plan, char *why, size_t n);

/* The launcher's default bound: a launch with M (A's rows) at least this runs the form (an H100,
 * gemm_w4a16 at N = K = 4096: the form 0.83x the kernel at M 128, 2.95x at M 512). */
#define TL_HOIST_MIN_M 256

/* The workspace parameter's name (appended by passes/hoist_operand.c). */
#define TL_HOIST_PARAM "hoisted"

#endif
