/* load_hoist: requires verified IR; keeps semantics (no load crosses a
 * store, a for/if or another load); moves each global load of the kernel body (function
 * level, not inside loops) up to just after the ops that define its
 * operands, and the pure scalar ops those need with it, so its latency
 * overlaps the work before it.  Breaks nothing.  docs/scheduling.md.
 *
 * Why: a program that loads a row, reduces it (shared memory + barriers)
 * and only then loads the weights (rmsnorm, layernorm) waits for two
 * memory latencies in a row; codegen emits ops in program order and LLVM
 * does not move our loads across a barrier. */
#include "load_order.h"

static bool run_load_hoist(tl_func *f, const tl_pass_opts *opts) {
  (void)opts;
  tl_hoist_loads(f, NULL, NULL);
  return true;
}

const tl_pass tl_pass_load_hoist = {
    "load_hoist",
    "requires verified IR; keeps semantics (no load crosses a store, region or other load); moves kernel-body loads up past tile work",
    run_load_hoist,
};
