/* kmajor_b: requires verified IR (before route_pipeline); runs only where the options ask for it
 * (the K-major-B form of a kernel, lib/api/forms.c) and only on the kernel they name; changes the
 * kernel's signature on purpose: parameter B (option "kmajor-b"), a tensor [K, N], becomes a
 * tensor [N, K] holding the same matrix transposed, and every `load B[k.., n..]` becomes
 * `trans(load B[n.., k..])`, so a dot reads B K-major (the TN loop: lib/kmajor_b.h,
 * docs/pipelines.md "fp8 [K][N] B: the transpose form").  The kernel computes what it computed;
 * only where B's bytes are changes.  A parameter it cannot rewrite is an error. */
#include <stdio.h>
#include <string.h>

#include "ir.h"
#include "kmajor_b.h"

/* Why use u of B (value b) cannot be rewritten, or NULL. */
static const char *use_problem(tl_func *f, const tl_op *u, int32_t b) {
  if (u->opc == TL_OP_dim) return NULL;
  if (u->opc != TL_OP_load) return "it is used other than by dim and load";
  for (int k = 1; k < u->nopnd; k++)
    if (u->opnd[k] == b) return "it is an index of a load";
  if (u->nopnd != 3 && u->nopnd != 4) return "a load of it has no 2-D view";
  if (!u->dims[0] || !u->dims[1]) return "a load of it drops a dimension (an indexed row or column)";
  for (int k = 1; k < 3; k++)
    if (tl_val(f, u->opnd[k])->type.kind != TL_KIND_SCALAR) return "a load of it gathers (a tile index)";
  if (u->nopnd == 4 && tl_val(f, u->opnd[3])->type.kind != TL_KIND_SCALAR)
    return "a load of it has a tile of `other` values";
  return NULL;
}

bool tl_kmajor_b_rewritable(tl_func *f, int32_t param, char *why, size_t n) {
  if (param < 0 || param >= f->params.len) return snprintf(why, n, "no such parameter"), false;
  const tl_param *p = &f->params.data[param];
  if (!p->is_tensor || p->rank != 2) return snprintf(why, n, "'%s' is not a 2-D tensor", p->name), false;
  int32_t b = p->value;
  for (int32_t i = 0; i < f->ops.len; i++) {
    const tl_op *u = &f->ops.data[i];
    if (u->flags & TL_OPF_DEAD) continue;
    bool uses = false;
    for (int k = 0; k < u->nopnd; k++) uses = uses || u->opnd[k] == b;
    if (!uses) continue;
    const char *w = use_problem(f, u, b);
    if (w) return snprintf(why, n, "'%s': %s", p->name, w), false;
  }
  return true;
}

/* Every load of b in region r (and nested regions) reads b [n.., k..] and is followed by a trans
 * back to the view it had; every dim of b asks for the other axis. */
static void rewrite_region(tl_func *f, tl_region *r, int32_t b) {
  for (int i = 0; i < r->ops.len; i++) {
    int32_t id = r->ops.data[i];
    tl_op *o = tl_op_at(f, id);
    if (o->flags & TL_OPF_DEAD) continue;
    for (int g = 0; g < o->nregions; g++) rewrite_region(f, &tl_op_at(f, id)->regions[g], b);
    o = tl_op_at(f, id);
    if (o->nopnd < 1 || o->opnd[0] != b) continue;
    if (o->opc == TL_OP_dim) {
      o->axis = 1 - o->axis;
      continue;
    }
    /* load b[i0 : l0, i1 : l1] -> load b[i1 : l1, i0 : l0] : [l1, l0], then trans -> [l0, l1] */
    int32_t t = o->opnd[1];
    o->opnd[1] = o->opnd[2], o->opnd[2] = t;
    int32_t d = o->dims[0];
    o->dims[0] = o->dims[1], o->dims[1] = d;
    int32_t res = o->res[0];
    tl_type view = tl_val(f, res)->type;
    tl_type stored = view;
    stored.shape[0] = view.shape[1], stored.shape[1] = view.shape[0];
    tl_val(f, res)->type = stored;
    int32_t tr = tl_op_new(f, NULL, TL_OP_trans, &res, 1, &view, 1, o->loc);
    tl_region_insert(f, r, i + 1, tr);
    int32_t tres = tl_op_result(f, tr, 0);
    tl_replace_uses(f, res, tres);
    tl_op_at(f, tr)->opnd[0] = res;
    i++;
  }
}

static bool run_kmajor_b(tl_func *f, const tl_pass_opts *o) {
  if (!o->kmajor_b_param || !o->kmajor_b_kernel || strcmp(o->kmajor_b_kernel, f->name)) return true;
  int32_t param = -1;
  for (int i = 0; i < f->params.len; i++)
    if (!strcmp(f->params.data[i].name, o->kmajor_b_param)) param = i;
  char why[200];
  if (param < 0) snprintf(why, sizeof why, "no parameter named '%s'", o->kmajor_b_param);
  if (param < 0 || !tl_kmajor_b_rewritable(f, param, why, sizeof why)) {
    tl_error(f->ctx, f->loc, "kernel '%s': no K-major-B form: %s", f->name, why);
    return false;
  }
  tl_param *p = &f->params.data[param];
  tl_dimspec d = p->dims[0];
  p->dims[0] = p->dims[1], p->dims[1] = d;
  int16_t vc = p->view_const[0];
  p->view_const[0] = p->view_const[1], p->view_const[1] = vc;
  for (int i = 0; i < f->syms.len; i++)
    if (f->syms.data[i].param == param) f->syms.data[i].axis = 1 - f->syms.data[i].axis;
  int32_t b = p->value;
  rewrite_region(f, &f->grid, b);
  rewrite_region(f, &f->body, b);
  if (o->explain && o->explain_out)
    tl_sbuf_printf(o->explain_out, "kmajor_b: kernel '%s': %s stored [%s, %s] (K-major): each load of it reads the "
                                   "[N, K] view and transposes it (the K-major-B form)\n",
                   f->name, p->name, p->dims[0].is_const ? "const" : f->syms.data[p->dims[0].sym].name,
                   p->dims[1].is_const ? "const" : f->syms.data[p->dims[1].sym].name);
  return true;
}

const tl_pass tl_pass_kmajor_b = {
    "kmajor_b",
    "requires verified IR; only with the kmajor-b option, on the kernel it names: parameter B [K, N] stored [N, K], "
    "each load of it a trans of the transposed view (lib/kmajor_b.h)",
    run_kmajor_b,
};
