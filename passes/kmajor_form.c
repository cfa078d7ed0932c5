/* kmajor_form: requires verified IR after mma_remap and swpipe (f->sched); keeps every op and
 * value (it only records f->kmajor_b); records, for a cutlass kernel whose one dot runs on wgmma
 * with an 8-bit B loaded [K][N] from a parameter, the K-major-B form a launch picks by B's strides
 * (lib/kmajor_b.h, docs/pipelines.md "fp8 [K][N] B: the transpose form"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"
#include "kmajor_b.h"

/* TILEC_KMAJOR_B=0 (off) chooses which kernels a launch runs, not the code of any (the kernel's
 * PTX is the same either way: tests/lit/passes/kmajor_b.test; the form has its own cache key),
 * so it is read with getenv, not through lib/code_env.c's table of the switches in the key. */
static bool switched_off(void) {
  const char *e = getenv("TILEC_KMAJOR_B");
  return e && e[0] == '0';
}

/* Whether f gets the form; when not, why (empty: not a kernel this pass is about, no line). */
static bool plan_for(tl_func *f, const tl_pass_opts *o, tl_kmajor_plan *plan, char *why, size_t n) {
  why[0] = 0;
  if (f->pipeline != TL_PIPE_CUTLASS || (o->arch && strcmp(o->arch, "sm_90a"))) return false;
  int32_t dot = -1;
  int ndots = 0;
  for (int32_t i = 0; i < f->ops.len; i++)
    if (f->ops.data[i].opc == TL_OP_dot && !(f->ops.data[i].flags & TL_OPF_DEAD)) dot = i, ndots++;
  if (ndots != 1) return false;
  tl_op *op = tl_op_at(f, dot);
  tl_type *a = &tl_val(f, op->opnd[0])->type, *b = &tl_val(f, op->opnd[1])->type;
  if (tl_dtype_bytes((tl_dtype)b->dtype) != 1) return false; /* 16-bit B: wgmma reads [K][N] as it is */
  bool bt = false;
  int32_t pb = tl_loaded_param(f, op->opnd[1], &bt);
  if (pb < 0 || bt) return false; /* a K-major B (a trans of [N][K]) needs no form */
  tl_dot_sched *d = tl_sched_dot(f, dot, false);
  if (!d || d->instr != TL_SCHED_MMA_WGMMA || op->parent < 0)
    return snprintf(why, n, "off (the dot is not a wgmma main loop)"), false;
  bool at = false;
  int32_t pa = tl_loaded_param(f, op->opnd[0], &at);
  if (pa < 0 || at || f->params.data[pa].rank != 2 || f->params.data[pa].dims[0].is_const)
    return snprintf(why, n, "off (A is not a load of a 2-D tensor whose rows are a shape symbol)"), false;
  char w[200];
  if (!tl_kmajor_b_rewritable(f, pb, w, sizeof w)) return snprintf(why, n, "off (%s)", w), false;
  const tl_sym *msym = &f->syms.data[f->params.data[pa].dims[0].sym];
  plan->b_param = pb;
  plan->b_name = f->params.data[pb].name;
  plan->m_param = msym->param, plan->m_axis = msym->axis;
  plan->bm = a->shape[0];
  plan->dtype = b->dtype;
  return true;
}

static bool run_kmajor_form(tl_func *f, const tl_pass_opts *o) {
  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  char why[300] = "";
  tl_kmajor_plan plan;
  memset(&plan, 0, sizeof plan);
  bool on = plan_for(f, o, &plan, why, sizeof why);
  if (on && switched_off()) on = false, snprintf(why, sizeof why, "off (TILEC_KMAJOR_B=0)");
  f->kmajor_b = tl_form_record(f, o, "kmajor_form", on, why, &plan, sizeof plan);
  if (on && ex)
    tl_sbuf_printf(ex,
                   "kmajor_form: kernel '%s': %s is %s [K, N] and wgmma reads 8-bit B only K-major: a launch whose "
                   "%s is K-major (stride 1 along K) runs the K-major-B form (this kernel with %s stored [N, K]: the "
                   "TN loop, B by TMA) on it; one whose %s is N-major and M > %lld (more than one tile row reads "
                   "each B tile) first transposes it into a workspace [N, K] (a second kernel, 2 x K x N bytes) and "
                   "runs the form on that; otherwise this kernel (its transpose in shared memory); off with "
                   "TILEC_KMAJOR_B=0 or --disable-pass=kmajor_form\n",
                   f->name, plan.b_name, tl_dtype_name((tl_dtype)plan.dtype), plan.b_name, plan.b_name, plan.b_name,
                   (long long)plan.bm);
  return true;
}

const tl_pass tl_pass_kmajor_form = {
    "kmajor_form",
    "requires verified IR after mma_remap and swpipe; keeps ops and values; records the K-major-B form of a wgmma "
    "kernel with an 8-bit B [K, N] (f->kmajor_b) that the launcher picks by B's strides",
    run_kmajor_form,
};
