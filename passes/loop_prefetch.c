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
#include <string.h>

#include "load_order.h"

enum { PREFETCH_BYTES = 128, CHAIN_MAX = 32 };

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

typedef struct chain {
  int32_t op[CHAIN_MAX]; /* index math of the body the load needs, in body order */
  int n;
} chain;

/* v is computable one iteration ahead: defined outside the loop, the induction variable, or
 * index math of the body on such values (collected into c, each once). */
static bool ahead_ok(tl_func *f, int32_t loop, int32_t iv, int32_t v, chain *c, int depth) {
  if (v == iv || tl_defined_outside(f, v, loop)) return true;
  int32_t d = tl_val(f, v)->def;
  if (d < 0 || depth > CHAIN_MAX || tl_op_at(f, d)->parent != loop || !tl_is_index_math(f, d)) return false;
  for (int i = 0; i < c->n; i++)
    if (c->op[i] == d) return true;
  tl_op *o = tl_op_at(f, d);
  for (int k = 0; k < o->nopnd; k++)
    if (!ahead_ok(f, loop, iv, o->opnd[k], c, depth + 1)) return false;
  if (c->n == CHAIN_MAX) return false;
  c->op[c->n++] = d; /* after its operands' defs: a valid order */
  return true;
}

/* A copy of op src_id on its operands remapped through from/to, inserted into r at *pos;
 * returns the copy's result. */
static int32_t copy_op(tl_func *f, int32_t src_id, const int32_t *from, const int32_t *to, int nmap, tl_region *r,
                       int *pos) {
  const tl_op *src = tl_op_at(f, src_id);
  int32_t opnd[16];
  if (src->nopnd > 16) return -1;
  for (int k = 0; k < src->nopnd; k++) {
    opnd[k] = src->opnd[k];
    for (int m = 0; m < nmap; m++)
      if (from[m] == opnd[k]) opnd[k] = to[m];
  }
  tl_type t = tl_val(f, src->res[0])->type;
  int32_t nid = tl_op_clone(f, src, opnd, &t);
  tl_region_insert(f, r, (*pos)++, nid);
  return tl_op_at(f, nid)->res[0];
}

/* The load's chain and the load itself copied into r at *pos with the induction variable
 * replaced by `at`; returns the copy's result. */
static int32_t copy_load(tl_func *f, const chain *c, int32_t load, int32_t iv, int32_t at, tl_region *r, int *pos) {
  int32_t from[CHAIN_MAX + 1], to[CHAIN_MAX + 1];
  int n = 0;
  from[n] = iv, to[n++] = at;
  for (int i = 0; i < c->n; i++) {
    int32_t nv = copy_op(f, c->op[i], from, to, n, r, pos);
    from[n] = tl_op_at(f, c->op[i])->res[0], to[n++] = nv;
  }
  return copy_op(f, load, from, to, n, r, pos);
}

/* Appends one carried value (init, region argument, result) to loop L and the operand of its
 * yield; returns the region argument. */
static int32_t add_carried(tl_func *f, int32_t L, int32_t init, int32_t next, tl_type t) {
  int32_t res = tl_value_new(f, t, L, tl_op_at(f, L)->nres);
  tl_op *o = tl_op_at(f, L);
  int32_t *nr = tl_alloc(&f->ctx->arena, sizeof *nr * (size_t)(o->nres + 1));
  if (o->nres) memcpy(nr, o->res, sizeof *nr * (size_t)o->nres);
  nr[o->nres] = res;
  o->res = nr, o->nres++;
  tl_op_append_opnd(f, L, init);
  int32_t arg = tl_region_add_arg(f, &tl_op_at(f, L)->regions[0], L, t);
  tl_region *body = &tl_op_at(f, L)->regions[0];
  tl_op_append_opnd(f, body->ops.data[body->ops.len - 1], next);
  return arg;
}

/* The position of op id in region r, or -1. */
static int pos_in(const tl_region *r, int32_t id) {
  for (int i = 0; i < r->ops.len; i++)
    if (r->ops.data[i] == id) return i;
  return -1;
}

static tl_region *region_of(tl_func *f, int32_t op) {
  int32_t p = tl_op_at(f, op)->parent;
  if (p < 0) return &f->body;
  tl_op *o = tl_op_at(f, p);
  for (int k = 0; k < o->nregions; k++)
    if (pos_in(&o->regions[k], op) >= 0) return &o->regions[k];
  return NULL;
}

/* Prefetches the eligible loads of loop L; returns how many and their bytes a thread. */
static int prefetch_loop(tl_func *f, int32_t L, int threads, int64_t *bytes_out) {
  tl_region *outer = region_of(f, L);
  if (!outer) return 0;
  tl_region *body = &tl_op_at(f, L)->regions[0];
  int32_t iv = body->args.data[0];
  int n = 0;
  int64_t bytes = 0;
  for (int j = 0; j < body->ops.len; j++) {
    int32_t ld = body->ops.data[j];
    tl_op *o = tl_op_at(f, ld);
    if (o->opc != TL_OP_load || tl_val(f, o->res[0])->type.kind != TL_KIND_TILE) continue;
    const tl_type *t = &tl_val(f, o->res[0])->type;
    int64_t b = (tl_type_numel(t) * tl_dtype_bytes((tl_dtype)t->dtype) + threads - 1) / threads;
    if (bytes + b > PREFETCH_BYTES) continue;
    chain c = {.n = 0};
    bool ok = true;
    for (int k = 0; ok && k < o->nopnd; k++) ok = ahead_ok(f, L, iv, o->opnd[k], &c, 0);
    if (!ok) continue;
    bool uses_iv = false; /* a load the same every iteration is load_hoist's, not ours */
    for (int k = 0; k < o->nopnd; k++) uses_iv |= o->opnd[k] == iv;
    for (int i = 0; i < c.n; i++)
      for (int k = 0; k < tl_op_at(f, c.op[i])->nopnd; k++) uses_iv |= tl_op_at(f, c.op[i])->opnd[k] == iv;
    if (!uses_iv) continue;
    tl_type lt = *t;
    /* the first: before the loop, at the loop's lo */
    int opos = pos_in(outer, L);
    int32_t lo = tl_op_at(f, L)->opnd[0], step = tl_op_at(f, L)->opnd[2];
    int32_t first = copy_load(f, &c, ld, iv, lo, outer, &opos);
    /* the next: at the top of the body, at iv + step */
    body = &tl_op_at(f, L)->regions[0];
    int bpos = 0;
    int32_t ad[2] = {iv, step};
    tl_type i32 = tl_scalar_type(TL_I32);
    int32_t addop = tl_op_new(f, NULL, TL_OP_add, ad, 2, &i32, 1, tl_op_at(f, ld)->loc);
    tl_region_insert(f, body, bpos++, addop);
    int32_t next = copy_load(f, &c, ld, iv, tl_op_at(f, addop)->res[0], body, &bpos);
    int32_t arg = add_carried(f, L, first, next, lt);
    body = &tl_op_at(f, L)->regions[0];
    tl_replace_uses(f, tl_op_at(f, ld)->res[0], arg);
    tl_op_erase(f, body, pos_in(body, ld));
    j = pos_in(body, tl_val(f, next)->def); /* go on after the copies */
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
