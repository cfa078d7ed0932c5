/* hoist_form: requires verified IR (before route_pipeline); keeps every op and value (it only
 * explains); says in --explain, for a kernel whose one dot's B is computed in the main loop, whether
 * it has a materialize-once form (lib/hoist_operand.h: B computed once into a workspace by a
 * pre-kernel, then the kernel with B a plain load of it) and, when not, why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hoist_operand.h"

/* TILEC_HOIST_OPERAND=1 will let a launch run the form (default off); it changes no kernel's code. */
static bool switched_on(void) {
  const char *e = getenv("TILEC_HOIST_OPERAND");
  return e && e[0] == '1';
}

static bool run_hoist_form(tl_func *f, const tl_pass_opts *o) {
  if (!o->explain || !o->explain_out || o->hoist_operand_role) return true;
  tl_hoist_plan h;
  char why[300];
  int found = tl_hoist_operand_find(f, &h, why, sizeof why);
  if (found == 0) return true;
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
  tl_sbuf_printf(ex,
                 "hoist_form: kernel '%s': B (%s %lldx%lld) is computed in the loop from %s, none of it depending on "
                 "program_id(0): every row of C's tiles computes it again; its materialize-once form: a pre-kernel "
                 "(--hoist-operand=pre) stores each B tile once into " TL_HOIST_PARAM ": %s [%s, %s] (grid: cdiv(%s, "
                 "%lld) k-steps x the kernel's columns), then this kernel runs with B a plain load of it "
                 "(--hoist-operand=form); %s\n",
                 f->name, tl_dtype_name((tl_dtype)h.dtype), (long long)h.bk, (long long)h.bn, srcs,
                 tl_dtype_name((tl_dtype)h.dtype), kn, nn, kn, (long long)h.bk,
                 switched_on() ? "TILEC_HOIST_OPERAND=1, but no launch picks it yet (lib/api/form_launch.c has no route)"
                               : "no launch picks it (TILEC_HOIST_OPERAND unset; no launch route yet)");
  return true;
}

const tl_pass tl_pass_hoist_form = {
    "hoist_form",
    "requires verified IR; keeps ops and values; explains whether a kernel whose dot's B is computed in the loop has "
    "a materialize-once form (lib/hoist_operand.h)",
    run_hoist_form,
};
