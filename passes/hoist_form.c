/* hoist_form: requires verified IR (before route_pipeline); keeps every op and value (it only
 * records f->hoist_form); says in --explain, for a kernel whose one dot's B is computed in the main
 * loop, whether it has a materialize-once form (lib/hoist_operand.h: B computed once into a
 * workspace by a pre-kernel, then the kernel with B a plain load of it) and, when not, why; records
 * the plan a launch picks by M (TILEC_HOIST_OPERAND=0: not). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hoist_operand.h"

/* A launch may run the form unless TILEC_HOIST_OPERAND=0 (the default since the twenty-third session:
 * an H100 measured the form 2.95x the kernel at M 512, 6.95-7.17x at M 4096 / 8192, and 0.83x at M 128,
 * so TL_HOIST_MIN_M is 256; bench/RESULTS.md).  It chooses which kernels a
 * launch runs, not the code of any (the kernel's PTX is the same either way:
 * tests/lit/passes/hoist_operand.test; the form and the pre-kernel have their own cache keys), so
 * it is read with getenv, not through lib/code_env.c's table of the switches in the key. */
static bool switched_on(void) {
  const char *e = getenv("TILEC_HOIST_OPERAND");
  return !(e && e[0] == '0');
}

/* cutlass_gemm's sm_90a tile (examples/gemm.tile: 0.91-1.07x cuBLAS with B by TMA) for the form,
 * whose loop is that kernel's once B is a plain load. */
enum { FORM_BM = 128, FORM_BN = 256, FORM_BK = 64 };

/* The form's tile: the tile constants naming A's rows, B's columns and A's columns (one each, distinct,
 * not set by -D), program ids used only times the tile's rows or columns (a form of other tiles then
 * computes the same C); else the kernel's tile, with the reason in note. */
static void plan_tile(tl_func *f, tl_hoist_plan *h, char *note, size_t n) {
  const tl_op *a = tl_op_at(f, h->a_load);
  const tl_param *ap = NULL;
  for (int i = 0; i < f->params.len; i++)
    if (f->params.data[i].value == a->opnd[0]) ap = &f->params.data[i];
  int cm = ap->view_const[0], ck = ap->view_const[1], cn = -1;
  for (int32_t i = 0; i < f->ops.len && cn < 0; i++) {
    const tl_op *o = &f->ops.data[i];
    if (o->flags & TL_OPF_DEAD || o->opc != TL_OP_load || o->nopnd < 3 || o->opnd[2] != h->n0) continue;
    for (int p = 0; p < f->params.len; p++)
      if (f->params.data[p].value == o->opnd[0] && f->params.data[p].rank == 2) cn = f->params.data[p].view_const[1];
  }
  const char *why = NULL;
  const char *e = getenv("TILEC_HOIST_OPERAND_TILE");
  if (e && e[0] == '0') why = "TILEC_HOIST_OPERAND_TILE=0";
  else if (cm <= 0 || ck <= 0 || cn <= 0 || cm == ck || cm == cn || ck == cn)
    why = "no three distinct tile constants name the dot's M, N and K";
  else if (f->consts.data[cm - 1].overridden || f->consts.data[cn - 1].overridden || f->consts.data[ck - 1].overridden)
    why = "its tile set by -D";
  else if (!tl_program_ids_tile_only(f, h->bm, h->bn))
    why = "a program_id is used other than times the tile's rows or columns";
  else if (f->consts.data[cm - 1].value_use || f->consts.data[cn - 1].value_use || f->consts.data[ck - 1].value_use)
    why = "a tile constant is used as a number, not only as a tile extent or in the tiling";
  if (why) {
    snprintf(note, n, "at the kernel's tile (%s)", why);
    return;
  }
  h->const_m = f->consts.data[cm - 1].name, h->const_n = f->consts.data[cn - 1].name;
  h->const_k = f->consts.data[ck - 1].name;
  h->form_bm = FORM_BM, h->form_bn = FORM_BN, h->form_bk = FORM_BK;
  snprintf(note, n, "at cutlass_gemm's tile, %s=%d %s=%d %s=%d, on the cutlass pipeline (TILEC_HOIST_OPERAND_TILE=0: the kernel's)",
           h->const_m, FORM_BM, h->const_n, FORM_BN, h->const_k, FORM_BK);
}

/* Where the launch's arguments give dimension d (-1: a constant). */
static void sym_place(const tl_func *f, tl_dimspec d, int32_t *param, int32_t *axis) {
  *param = d.is_const ? -1 : f->syms.data[d.sym].param;
  *axis = d.is_const ? -1 : f->syms.data[d.sym].axis;
}

static bool run_hoist_form(tl_func *f, const tl_pass_opts *o) {
  if (o->hoist_operand_role) return true; /* a form itself has none */
  tl_hoist_plan h;
  char why[300], tile[300] = "";
  int found = tl_hoist_operand_find(f, &h, why, sizeof why);
  if (found == 0) return true;
  if (found > 0) {
    const tl_op *a = tl_op_at(f, h.a_load);
    const tl_param *ap = NULL;
    for (int i = 0; i < f->params.len; i++)
      if (f->params.data[i].value == a->opnd[0]) ap = &f->params.data[i];
    if (ap->dims[0].is_const) found = -1, snprintf(why, sizeof why, "off (A's rows are not a shape symbol)");
    else {
      sym_place(f, ap->dims[0], &h.m_param, &h.m_axis);
      sym_place(f, h.k_dim, &h.k_param, &h.k_axis);
      sym_place(f, h.n_dim, &h.n_param, &h.n_axis);
      h.bm = a->dims[0];
      plan_tile(f, &h, tile, sizeof tile);
    }
  }
  bool on = found > 0 && switched_on();
  f->hoist_form = on ? tl_form_record(f, o, "hoist_form", true, NULL, &h, sizeof h) : NULL;
  if (!o->explain || !o->explain_out) return true;
  tl_sbuf *ex = o->explain_out;
  if (found < 0) {
    tl_sbuf_printf(ex, "hoist_form: kernel '%s': B of its dot is computed in the loop; materialize-once form %s\n", f->name, why);
    return true;
  }
  char srcs[160] = "";
  for (int i = 0; i < h.nsrcs; i++)
    snprintf(srcs + strlen(srcs), sizeof srcs - strlen(srcs), "%s%s", i ? ", " : "", h.srcs[i]);
  const char *kn = h.k_dim.is_const ? "K" : f->syms.data[h.k_dim.sym].name;
  const char *nn = h.n_dim.is_const ? "N" : f->syms.data[h.n_dim.sym].name;
  const char *mn = f->syms.data[f->params.data[h.m_param].dims[h.m_axis].sym].name;
  tl_sbuf_printf(ex,
                 "hoist_form: kernel '%s': B (%s %lldx%lld) is computed in the loop from %s, none of it depending on "
                 "program_id(0): every row of C's tiles computes it again; its materialize-once form: a pre-kernel "
                 "(--hoist-operand=pre) stores each B tile once into " TL_HOIST_PARAM ": %s [%s, %s] (grid: cdiv(%s, "
                 "%lld) k-steps x the kernel's columns), then this kernel runs with B a plain load of it "
                 "(--hoist-operand=form; %s); ",
                 f->name, tl_dtype_name((tl_dtype)h.dtype), (long long)h.bk, (long long)h.bn, srcs,
                 tl_dtype_name((tl_dtype)h.dtype), kn, nn, kn, (long long)h.bk, tile);
  if (on)
    tl_sbuf_printf(ex, "a launch with %s >= TILEC_HOIST_OPERAND_MIN_M (%d) runs the two into the handle's workspace, "
                       "one with fewer rows this kernel (TILEC_HOIST_OPERAND=0: off)\n", mn, TL_HOIST_MIN_M);
  else
    tl_sbuf_printf(ex, "off (TILEC_HOIST_OPERAND=0; unset, a launch with %s >= %d runs it)\n", mn, TL_HOIST_MIN_M);
  return true;
}

const tl_pass tl_pass_hoist_form = {
    "hoist_form",
    "requires verified IR; keeps ops and values; explains whether a kernel whose dot's B is computed in the loop has "
    "a materialize-once form and, unless TILEC_HOIST_OPERAND=0, records it (f->hoist_form) for the launcher "
    "(lib/hoist_operand.h)",
    run_hoist_form,
};
