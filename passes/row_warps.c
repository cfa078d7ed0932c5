/* row_warps: requires verified IR; keeps every op and value; sets f->warps, when unset, for
 * kernels without a dot from their largest tile: the fewest warps (4..16, a power of two) that
 * leave each thread at most 64 of its elements (8192 elements: 4 warps, 32768: 16).  Dot kernels
 * keep route_pipeline's / layout_assign's rule.  Breaks nothing.  docs/rows.md. */
#include "ir.h"

/* H200 (bench/RESULTS.md 2026-12-01, rows): rmsnorm 4096 at 8 warps 0.91x of 4 warps,
 * embedding_rmsnorm 2 x 4096 at 8 warps 0.97x; softmax 32768 f32 at 16 warps 3.4x of 4 */
enum { ROW_ELEMS_PER_THREAD = 64 };

static bool run_row_warps(tl_func *f, const tl_pass_opts *o) {
  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  int64_t biggest = 0;
  for (int i = 0; i < f->ops.len; i++) {
    const tl_op *op = &f->ops.data[i];
    if (op->flags & TL_OPF_DEAD) continue;
    if (op->opc == TL_OP_dot) return true;
    for (int r = 0; r < op->nres; r++) {
      const tl_type *t = &f->values.data[op->res[r]].type;
      if (t->kind == TL_KIND_TILE && tl_type_numel(t) > biggest) biggest = tl_type_numel(t);
    }
  }
  bool set = f->warps != 0;
  if (!set) {
    int w = 4;
    while (w < 16 && (int64_t)w * 32 * ROW_ELEMS_PER_THREAD < biggest) w *= 2;
    f->warps = w;
  }
  if (ex)
    tl_sbuf_printf(ex, "row_warps: kernel '%s': warps=%d %s (largest tile %lld elements: %lld a thread)\n", f->name,
                   f->warps, set ? "(attribute or option)" : "(at most 64 elements a thread, 4..16 warps)",
                   (long long)biggest, (long long)((biggest + f->warps * 32 - 1) / (f->warps * 32)));
  return true;
}

const tl_pass tl_pass_row_warps = {
    "row_warps",
    "requires verified IR; keeps ops and values; sets f->warps when unset (kernels without a dot)",
    run_row_warps,
};
