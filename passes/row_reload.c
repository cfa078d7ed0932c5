/* row_reload: requires layouts (it runs after row_loads); keeps semantics and every value's layout;
 * off unless TILEC_ROW_RELOAD=1 (a measuring switch, docs/rows.md "embrms").  In a kernel without a
 * dot (and without row_stream), a function-level load of a tensor the kernel never writes whose
 * value (or its one cast) is used both by ops that do not need a later function-level reduce's
 * result and by ops that do is loaded a second time, just before the first op that needs that
 * result, and those ops take the copy: the first load's registers die at the reduction and the copy
 * re-reads bytes this thread read a few hundred ns before (L1 hits).  A row kernel that holds its
 * row across its reduction (rmsnorm, embedding + RMSNorm at 8192 columns: 64 f32 a thread) then
 * needs fewer registers and fits more CTAs an SM.  No copy is made past a store, an atomic or a
 * for/if after the load; the copy's operands are the first load's, defined before it.  --explain names each copy. */
#include "code_env.h"
#include "ir.h"

static bool has_dot(const tl_func *f) {
  for (int i = 0; i < f->ops.len; i++)
    if (!(f->ops.data[i].flags & TL_OPF_DEAD) && f->ops.data[i].opc == TL_OP_dot) return true;
  return false;
}

/* Op `op` has an operand in set[] (value ids below nset). */
static bool uses_any(tl_func *f, int32_t op, const bool *set, int32_t nset) {
  tl_op *o = tl_op_at(f, op);
  for (int k = 0; k < o->nopnd; k++)
    if (o->opnd[k] < nset && set[o->opnd[k]]) return true;
  return false;
}

/* Value v is used inside a region of some op (the copy rewires function-level uses only). */
static bool used_in_region(tl_func *f, const tl_region *r, int32_t v) {
  for (int i = 0; i < r->ops.len; i++) {
    tl_op *o = tl_op_at(f, r->ops.data[i]);
    for (int g = 0; g < o->nregions; g++) {
      const tl_region *in = &o->regions[g];
      for (int j = 0; j < in->ops.len; j++) {
        tl_op *p = tl_op_at(f, in->ops.data[j]);
        for (int k = 0; k < p->nopnd; k++)
          if (p->opnd[k] == v) return true;
      }
      if (used_in_region(f, in, v)) return true;
    }
  }
  return false;
}

/* The one function-level user of v, or -1 (none, several, or one inside a region). */
static int32_t only_user(tl_func *f, int32_t v) {
  tl_region *r = &f->body;
  int32_t user = -1;
  for (int i = 0; i < r->ops.len; i++) {
    tl_op *o = tl_op_at(f, r->ops.data[i]);
    for (int k = 0; k < o->nopnd; k++)
      if (o->opnd[k] == v) {
        if (user >= 0 && user != r->ops.data[i]) return -1;
        user = r->ops.data[i];
      }
  }
  return used_in_region(f, r, v) ? -1 : user;
}

/* A copy of op src (operand 0 replaced by opnd0 when opnd0 >= 0) inserted at body position pos. */
static int32_t copy_at(tl_func *f, int32_t src, int32_t opnd0, int pos) {
  const tl_op *s = tl_op_at(f, src);
  int32_t opnd[16];
  if (s->nopnd > 16 || s->nres != 1) return -1;
  for (int k = 0; k < s->nopnd; k++) opnd[k] = s->opnd[k];
  if (opnd0 >= 0) opnd[0] = opnd0;
  tl_type t = tl_val(f, s->res[0])->type;
  int32_t nid = tl_op_clone(f, s, opnd, &t);
  tl_region_insert(f, &f->body, pos, nid);
  return nid;
}

/* Tries the loads before the reduce at body position pr; returns the copies made. */
static int reload_after(tl_func *f, int pr, tl_sbuf *ex) {
  tl_region *r = &f->body;
  int32_t red = r->ops.data[pr];
  /* post[v]: v needs the reduce's result (function-level ops after it) */
  int32_t npost = f->values.len; /* values made below (the copies) are not in post */
  bool *post = tl_alloc(&f->ctx->arena, (size_t)npost + 1);
  for (int i = 0; i < npost; i++) post[i] = false;
  post[tl_op_at(f, red)->res[0]] = true;
  for (int i = pr + 1; i < r->ops.len; i++) {
    tl_op *o = tl_op_at(f, r->ops.data[i]);
    if (uses_any(f, r->ops.data[i], post, npost))
      for (int k = 0; k < o->nres; k++) post[o->res[k]] = true;
  }
  int made = 0;
  for (int pl = pr - 1; pl >= 0; pl--) {
    int32_t ld = r->ops.data[pl];
    tl_op *o = tl_op_at(f, ld);
    if (o->opc == TL_OP_store || o->opc == TL_OP_atomic || o->nregions > 0) break; /* nothing past these */
    if (o->opc != TL_OP_load || o->nres != 1) continue;
    const tl_type *t = &tl_val(f, o->res[0])->type;
    bool tr;
    int32_t param = tl_loaded_param(f, o->res[0], &tr);
    if (t->kind != TL_KIND_TILE || t->layout < 0 || param < 0 || tl_param_written(f, param) != 0) continue;
    /* the value the later ops use: the load's, or its one cast's */
    int32_t head = o->res[0], cast = -1, u = only_user(f, head);
    if (u >= 0 && tl_op_at(f, u)->opc == TL_OP_cast && tl_op_at(f, u)->nres == 1) cast = u, head = tl_op_at(f, u)->res[0];
    if (used_in_region(f, r, head)) continue;
    bool pre = false;
    int at = -1; /* the first op that uses head and needs the reduce: the copy goes just before it (after
                  * the reduce's scalar math: a correctly rounded division's slow-path call between the
                  * copy and its use would keep the copy's registers across the call) */
    for (int i = 0; i < r->ops.len; i++) {
      tl_op *p = tl_op_at(f, r->ops.data[i]);
      bool uses = false;
      for (int k = 0; k < p->nopnd; k++) uses |= p->opnd[k] == head;
      if (!uses) continue;
      if (!uses_any(f, r->ops.data[i], post, npost)) pre = true;
      else if (at < 0) at = i;
    }
    if (!pre || at < 0) continue;
    bool fenced = false; /* nothing that writes memory or holds a region between the load and its copy */
    for (int i = pl + 1; i < at; i++) {
      tl_op *p = tl_op_at(f, r->ops.data[i]);
      fenced |= p->opc == TL_OP_store || p->opc == TL_OP_atomic || p->nregions > 0;
    }
    if (fenced) continue;
    int32_t nld = copy_at(f, ld, -1, at++);
    if (nld < 0) continue;
    int32_t nhead = tl_op_at(f, nld)->res[0];
    if (cast >= 0) {
      int32_t nc = copy_at(f, cast, nhead, at++);
      if (nc < 0) return made; /* the load copy stays unused: dce-free, harmless */
      nhead = tl_op_at(f, nc)->res[0];
    }
    for (int i = at; i < r->ops.len; i++) {
      tl_op *p = tl_op_at(f, r->ops.data[i]);
      if (!uses_any(f, r->ops.data[i], post, npost)) continue;
      for (int k = 0; k < p->nopnd; k++)
        if (p->opnd[k] == head) p->opnd[k] = nhead;
    }
    made++;
    if (ex)
      tl_sbuf_printf(ex, "row_reload: kernel '%s': load at %d:%d read again after the reduce at %d:%d, for the ops that need it\n",
                     f->name, o->loc.line, o->loc.col, tl_op_at(f, red)->loc.line, tl_op_at(f, red)->loc.col);
  }
  return made;
}

static bool run_row_reload(tl_func *f, const tl_pass_opts *o) {
  if (!tl_code_env_on("TILEC_ROW_RELOAD") || has_dot(f) || f->row_ahead) return true;
  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  tl_region *r = &f->body;
  for (int i = 0; i < r->ops.len; i++) {
    tl_op *op = tl_op_at(f, r->ops.data[i]);
    if (op->opc == TL_OP_reduce && op->nres == 1) reload_after(f, i, ex); /* the copies land after i: loads, casts */
  }
  return true;
}

const tl_pass tl_pass_row_reload = {
    "row_reload",
    "requires layouts; keeps semantics and layouts; TILEC_ROW_RELOAD=1: a row load used across a reduce read again after it (kernels without a dot)",
    run_row_reload,
};
