/* row_loads: requires layouts (it runs after layout_assign); keeps semantics and every value's
 * layout; in kernels without a dot (and without row_stream, which issues its loads itself),
 * moves each function-level load whose view depends on the program ids (the program's own
 * rows, a stream from memory) up past tile work to just after its index math, never past a
 * store, a region or another load (lib/load_order.h), so every row the program reads is in
 * flight before the first of them is used.  Loads the same for every program (a norm's weights,
 * in L2) stay where the program put them.  --explain says, per kernel, the loads in flight
 * before the first use, and per load its tile, its vector width and groups a thread.  Breaks
 * nothing.  docs/rows.md. */
#include "layout.h"
#include "load_order.h"

static bool has_dot(const tl_func *f) {
  for (int i = 0; i < f->ops.len; i++)
    if (!(f->ops.data[i].flags & TL_OPF_DEAD) && f->ops.data[i].opc == TL_OP_dot) return true;
  return false;
}

/* The view's operands (not the tensor) depend on a program id. */
static bool program_rows(tl_func *f, int32_t op, void *ctx) {
  (void)ctx;
  tl_op *o = tl_op_at(f, op);
  for (int k = 1; k < o->nopnd; k++)
    if (tl_depends_on_program_id(f, o->opnd[k])) return true;
  return false;
}

/* Elements a thread holds of tile t (its distinct registers). */
static int64_t thread_elems(tl_func *f, const tl_type *t) {
  const tl_layout *l = tl_layout_at(f, t->layout);
  int64_t n = 0;
  for (int32_t r = 0; r < tl_layout_nregs(l); r++) n += tl_layout_canon_reg(l, r) == r;
  return n;
}


/* The loads before the first op that uses a loaded value (or a store / region): their count,
 * elements and bytes a thread (which[]: the first max of them). */
static int leading_loads(tl_func *f, int64_t *elems, int64_t *bytes, int32_t *which, int max) {
  tl_region *r = &f->body;
  bool *loaded = tl_alloc(&f->ctx->arena, (size_t)f->values.len + 1);
  for (int i = 0; i < f->values.len; i++) loaded[i] = false;
  int n = 0;
  *elems = *bytes = 0;
  for (int i = 0; i < r->ops.len; i++) {
    tl_op *o = tl_op_at(f, r->ops.data[i]);
    bool uses = false;
    for (int k = 0; k < o->nopnd; k++) uses |= loaded[o->opnd[k]];
    if (uses || o->nregions > 0 || o->opc == TL_OP_store || o->opc == TL_OP_atomic) break;
    const tl_type *t = o->opc == TL_OP_load ? &tl_val(f, o->res[0])->type : NULL;
    if (t && t->kind == TL_KIND_TILE && t->layout >= 0) {
      loaded[o->res[0]] = true;
      if (which && n < max) which[n] = r->ops.data[i];
      n++;
      *elems += thread_elems(f, t);
      *bytes += thread_elems(f, t) * tl_dtype_bytes((tl_dtype)t->dtype);
    }
  }
  return n;
}

static void explain(tl_func *f, tl_sbuf *ex, int moved) {
  tl_region *r = &f->body;
  int64_t elems, first_bytes;
  int nfirst = leading_loads(f, &elems, &first_bytes, NULL, 0);
  tl_sbuf_printf(ex, "row_loads: kernel '%s': %d load%s moved up; %d load%s (%lld bytes a thread) in flight before the first use",
                 f->name, moved, moved == 1 ? "" : "s", nfirst, nfirst == 1 ? "" : "s", (long long)first_bytes);
  const char *sep = ":";
  for (int i = 0; i < r->ops.len; i++) {
    int32_t id = r->ops.data[i];
    tl_op *o = tl_op_at(f, id);
    if (o->opc != TL_OP_load && o->opc != TL_OP_store) continue;
    int32_t v = o->opc == TL_OP_load ? o->res[0] : o->opnd[o->nopnd - 1];
    const tl_type *t = &tl_val(f, v)->type;
    if (t->kind != TL_KIND_TILE || t->layout < 0) continue;
    int eb = tl_dtype_bytes((tl_dtype)t->dtype);
    int32_t vec = tl_layout_vector(tl_layout_at(f, t->layout), eb);
    int64_t rows = 1;
    for (int d = 0; d + 1 < t->rank; d++) rows *= t->shape[d];
    tl_sbuf_printf(ex, "%s %s at %d:%d %lld row%s of %d, %d-byte vectors, %lld a thread", sep,
                   o->opc == TL_OP_load ? (program_rows(f, id, NULL) ? "load (rows)" : "load (shared)") : "store",
                   o->loc.line, o->loc.col, (long long)rows, rows == 1 ? "" : "s", t->rank ? t->shape[t->rank - 1] : 1,
                   vec * eb, (long long)(thread_elems(f, t) / vec));
    sep = ";";
  }
  tl_sbuf_puts(ex, "\n");
}

static bool run_row_loads(tl_func *f, const tl_pass_opts *o) {
  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  if (has_dot(f) || f->row_ahead) {
    if (ex && !has_dot(f))
      tl_sbuf_printf(ex, "row_loads: kernel '%s': off (row_stream issues the loads ahead)\n", f->name);
    return true;
  }
  int moved = tl_hoist_loads(f, program_rows, NULL);
  if (ex) explain(f, ex, moved);
  return true;
}

const tl_pass tl_pass_row_loads = {
    "row_loads",
    "requires layouts; keeps semantics and layouts; moves the program's row loads up past tile work (kernels without a dot)",
    run_row_loads,
};
