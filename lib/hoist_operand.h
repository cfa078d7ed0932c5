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
 * The launcher does not pick it yet (lib/api/form_launch.c has no route for it). */
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
} tl_hoist_plan;

/* Whether f has a materialize-once form: 1 yes (*plan filled), -1 no (why says why), 0 not a
 * kernel this is about (no single dot whose B is computed; why empty). */
int tl_hoist_operand_find(tl_func *f, tl_hoist_plan *plan, char *why, size_t n);

/* The workspace parameter's name (appended by passes/hoist_operand.c). */
#define TL_HOIST_PARAM "hoisted"

#endif
