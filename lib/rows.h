/* rows.h: the loads of a kernel body that a persistent CTA can issue before the tile that
 * uses them (passes/row_stream.c decides, lib/codegen/emit_rows.c emits; docs/rows.md).
 *
 * Only function-level ops of the body take part.  A value is *recomputable* for another tile
 * when it is a parameter or the result of a function-level const, dim, iota, program_id,
 * num_programs, splat, broadcast, expand_dims or elementwise op over recomputable operands, or
 * of a planned load.  A function-level load of a tensor the kernel never stores to (nor
 * atomics), whose operands are recomputable scalars (a gather's index tile is not: it is
 * re-laid out through shared memory), is planned:
 *  - HOISTED when none of its operands depends on program_id (the same for every tile): it is
 *    loaded once per CTA, before the loop over tiles;
 *  - AHEAD otherwise, with a level: the largest number of AHEAD loads on a chain of operands
 *    leading to it (0: indices from program ids only; 1: a scalar index loaded from a table ...).  An AHEAD
 *    load of level v is issued `ahead + max_level - v` tiles before its tile, so the ids of a
 *    gather have arrived when the gather of the same tile is issued. */
#ifndef TILEC_ROWS_H
#define TILEC_ROWS_H

#include "ir.h"

enum { TL_ROW_NONE = 0, TL_ROW_AHEAD = 1, TL_ROW_HOISTED = 2 };

typedef struct tl_row_plan {
  uint8_t *role;       /* per op id: TL_ROW_* */
  int8_t *level;       /* per op id: the level of an AHEAD load */
  int max_level;
  int nahead, nhoisted;
  int64_t ahead_bytes;   /* bytes of one tile's AHEAD loads */
  int64_t hoisted_bytes; /* bytes of the HOISTED loads */
} tl_row_plan;

/* The plan of f (arena memory).  False, with the reason in *why, when the kernel cannot
 * loop over its tiles (it has a dot, its grid is not computable in the kernel, a function-level
 * `for`/`if` holds a store whose tensor an AHEAD candidate reads...) or has no AHEAD load. */
bool tl_row_plan_make(tl_func *f, tl_row_plan *p, const char **why);
/* Tiles before its own that AHEAD load `op` is issued. */
int tl_row_distance(const tl_row_plan *p, int32_t op, int ahead);
/* mark[op] = 1 for the function-level ops (not planned loads) that compute the operands of
 * load `op`: what is recomputed for another tile before issuing it.  mark has f->ops.len bytes,
 * cleared by the caller. */
void tl_row_slice(const tl_func *f, const tl_row_plan *p, int32_t op, uint8_t *mark);
/* The grid clause is made of const, dim and scalar elementwise ops (it can be evaluated in the
 * kernel, as persistent CTAs need). */
bool tl_grid_in_kernel(const tl_func *f);

/* The form of a row kernel's launch variant (docs/rows.md "rows6"; TILEC_VARIANT_FORM=1|2 forces
 * one): 1 straight-line (a kernel that combines its tiles: reduce, scan, sort, argreduce), 2 the
 * split's branch kept (elementwise).  Codegen emits it; the launcher's rule depends on it. */
int tl_row_variant_form(const tl_func *f);

#endif
