/* load_order.h: moving the loads of a kernel body up past tile work, so that their latency
 * overlaps it (passes/load_hoist.c moves every such load, passes/row_loads.c the loads of the
 * program's own rows in kernels without a dot; docs/scheduling.md, docs/rows.md).
 *
 * Codegen emits ops in program order, and neither LLVM nor ptxas moves a load across the
 * branch of an access_split access or a reduction's barriers, so `a = cast(load(A)); b =
 * cast(load(B))` waits for A's data before B's loads leave. */
#ifndef TILEC_LOAD_ORDER_H
#define TILEC_LOAD_ORDER_H

#include "ir.h"

/* Which function-level loads to move (op: the load's op id). */
typedef bool (*tl_load_pick)(tl_func *f, int32_t op, void *ctx);

/* Moves each function-level load of f's body that pick accepts up to just after the ops its
 * operands need (taking the pure scalar index math with it), never past a store, an atomic, a
 * for/if or another load (loads keep their order), and only when it then passes tile work
 * (math, a reduction, a layout change).  Loads inside regions stay.  Semantics are kept.
 * Returns the number of loads moved. */
int tl_hoist_loads(tl_func *f, tl_load_pick pick, void *ctx);

/* Op `op` is index math: a pure op with one scalar result and no region (what a moved load
 * takes with it; codegen's emit_under.c too). */
bool tl_is_index_math(tl_func *f, int32_t op);

/* Value v depends on a program_id (through the function-level ops that define it). */
bool tl_depends_on_program_id(tl_func *f, int32_t v);

#endif
