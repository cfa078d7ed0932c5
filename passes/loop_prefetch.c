/* loop_prefetch: requires verified IR and f->warps (after row_warps), before layout_assign; keeps
 * semantics (a load only reads: the one issued early for the iteration after the last reads past
 * the loop's range, which the view's bounds drop or which lands in the tensor unused); in a kernel
 * without a dot, a for loop whose body reduces (a CTA barrier every iteration) and stores nothing:
 * each load of its body whose view is the induction variable and loop-invariant values (through
 * scalar index math) is issued one iteration ahead -- the first before the loop, the next at the
 * top of the body, carried to the next iteration.  Breaks nothing.  docs/rows.md "loop_prefetch".
 *
 * Why: codegen emits a loop body in program order, and the reductions' barriers keep LLVM and
 * ptxas from moving the next iteration's loads above them, so a chunk loop over a long row
 * (cross-entropy over a vocabulary, a softmax's first pass) waited for each chunk's data with
 * nothing of its own in flight.  Carrying the next chunk costs its registers (capped at
 * PREFETCH_BYTES a thread). */
#include "carry_ahead.h"

enum { PREFETCH_BYTES = 128 };

/* Whether op tree `op` (nested regions included) holds a store / atomic / dot, and a reduction. */
static void scan_body(tl_func *f, const tl_region *r, bool *writes, bool *reduces) {
  for (int i = 0; i < r->ops.len; i++) {
    tl_op *o = tl_op_at(f, r->ops.data[i]);
    if (o->opc == TL_OP_store || o->opc == TL_OP_atomic || o->opc == TL_OP_dot) *writes = true;
    if (o->opc == TL_OP_reduce || o->opc == TL_OP_scan || o->opc == TL_OP_sort || o->opc == TL_OP_argreduce)
      *reduces = true;
    for (int k = 0; k < o->nregions; k++) scan_body(f, &o->regions[k], writes, reduces);
  }
}

/* Prefetches the eligible loads of loop L; returns how many and their bytes a thread. */
static int prefetch_loop(tl_func *f, int32_t L, int threads, int64_t *bytes_out) {
  int n = 0;
  int64_t bytes = 0;
  for (int j = 0; j < tl_op_at(f, L)->regions[0].ops.len; j++) {
    tl_region *body = &tl_op_at(f, L)->regions[0];
    int32_t ld = body->ops.data[j];
    tl_op *o = tl_op_at(f, ld);
    if (o->opc != TL_OP_load || tl_val(f, o->res[0])->type.kind != TL_KIND_TILE) continue;
    const tl_type *t = &tl_val(f, o->res[0])->type;
    int64_t b = (tl_type_numel(t) * tl_dtype_bytes((tl_dtype)t->dtype) + threads - 1) / threads;
    if (bytes + b > PREFETCH_BYTES) continue;
    tl_ahead_chain c;
    bool uses_iv = false; /* a load the same every iteration is load_hoist's, not ours */
    if (!tl_ahead_chain_of(f, L, ld, &c, &uses_iv) || !uses_iv) continue;
    /* the next at the top of the body */
    int32_t next = tl_issue_ahead(f, L, ld, &c, 0);
    if (next < 0) break;
    j = tl_pos_in(&tl_op_at(f, L)->regions[0], next); /* go on after the copies */
    n++;
    bytes += b;
  }
  *bytes_out = bytes;
  return n;
}

static bool run_loop_prefetch(tl_func *f, const tl_pass_opts *o) {
  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  for (int32_t i = 0; i < f->ops.len; i++) {
    tl_op *d = tl_op_at(f, i);
    if (!(d->flags & TL_OPF_DEAD) && d->opc == TL_OP_dot) return true; /* dot loops: swpipe's */
  }
  if (f->row_ahead) return true; /* row_stream plans this kernel's loads */
  int threads = (f->warps > 0 ? f->warps : 4) * 32;
  int nloops = f->ops.len; /* (the loop ops that exist now; copies are added past them) */
  for (int32_t L = 0; L < nloops; L++) {
    tl_op *lo = tl_op_at(f, L);
    if ((lo->flags & TL_OPF_DEAD) || lo->opc != TL_OP_for || lo->nregions != 1) continue;
    bool writes = false, reduces = false;
    scan_body(f, &lo->regions[0], &writes, &reduces);
    tl_loc loc = lo->loc;
    if (writes || !reduces) {
      if (ex)
        tl_sbuf_printf(ex, "loop_prefetch: kernel '%s': loop at %d:%d: none (%s)\n", f->name, loc.line, loc.col,
                       writes ? "its body stores" : "no reduction in its body");
      continue;
    }
    int64_t bytes = 0;
    int n = prefetch_loop(f, L, threads, &bytes);
    if (ex)
      tl_sbuf_printf(ex, "loop_prefetch: kernel '%s': loop at %d:%d: %d load%s issued one iteration ahead (%lld bytes a thread carried)\n",
                     f->name, loc.line, loc.col, n, n == 1 ? "" : "s", (long long)bytes);
  }
  return true;
}

const tl_pass tl_pass_loop_prefetch = {
    "loop_prefetch",
    "requires verified IR and f->warps; keeps semantics (loads only read); in dot-free kernels, a reducing loop that stores nothing loads each iteration's chunk one iteration ahead",
    run_loop_prefetch,
};
