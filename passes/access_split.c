/* access_split: requires verified IR; keeps every op and value; sets f->access_split for
 * kernels without a dot: codegen then emits each 16-byte access as one uniform branch between
 * its vector form (the launch's alignment facts hold: one predicated ld/st.v4 a group) and the
 * combined form (vector or per-element accesses inside one asm), instead of the combined form
 * alone, whose per-element fallback is issued (predicated off) beside every vector.  Breaks
 * nothing.  docs/rows.md. */
#include "ir.h"

static bool has_dot(const tl_func *f) {
  for (int i = 0; i < f->ops.len; i++)
    if (!(f->ops.data[i].flags & TL_OPF_DEAD) && f->ops.data[i].opc == TL_OP_dot) return true;
  return false;
}

static bool run_access_split(tl_func *f, const tl_pass_opts *o) {
  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  f->access_split = !has_dot(f);
  if (ex)
    tl_sbuf_printf(ex, "access_split: kernel '%s': %s\n", f->name,
                   f->access_split ? "each vector access branches once on the launch's alignment: 16-byte "
                                     "vectors only, or the per-element fallback"
                                   : "off (a dot kernel: its accesses keep the combined form)");
  return true;
}

const tl_pass tl_pass_access_split = {
    "access_split",
    "requires verified IR; keeps ops and values; sets f->access_split (kernels without a dot)",
    run_access_split,
};
