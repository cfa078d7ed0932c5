/* kmajor_form: requires verified IR after mma_remap and swpipe (f->sched); keeps every op and
 * value (it only records f->kmajor_b); records, for a cutlass kernel whose one dot runs on wgmma
 * with an 8-bit B loaded [K][N] from a parameter, the K-major-B form a launch picks by B's strides
 * (lib/kmajor_b.h, docs/pipelines.md "fp8 [K][N] B: the transpose form"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code_env.h"
#include "schedule.h"
#include "kmajor_b.h"

/* TILEC_KMAJOR_B=0 (off) chooses which kernels a launch runs, not the code of any (the kernel's
 * PTX is the same either way: tests/lit/passes/kmajor_b.test; the form has its own cache key),
 * so it is read with getenv, not through lib/code_env.c's table of the switches in the key. */
static bool switched_off(void) {
  const char *e = getenv("TILEC_KMAJOR_B");
  return e && e[0] == '0';
}

/* TN's tile for the form.  examples/gemm_fp8.tile's NN kernel is 128x128x128 because its in-kernel
 * transpose needs a K-major buffer beside each [K][N] slot (80 KiB a stage at 128x256: 2 stages
 * fit); its form has no transpose and is the TN loop, which on sm_90a runs 128x256 x 4 stages
 * (0.958 / 0.912x cuBLAS accurate against 0.898 / 0.845x at 128x128, seventeenth session; the
 * fourteenth session's form ran 128x128 x 4).  So an 8-bit 128x128x128 dot on 8 warps whose N
 * extent is named by one tile constant (every range view of B's columns `n : n + BN`, not A's)
 * gets its form with that constant at 256 and 4 stages: the PTX of cutlass_gemm_fp8_tn at its
 * sm_90a tile (tests/lit/passes/kmajor_b.test), under promote (a 64x128 part at a time:
 * TILEC_PROMOTE_PARTS, without which 128x256 spills) and fast (the cooperative kernel) alike.
 * A tile the user set (-D) is kept; TILEC_KMAJOR_B_TILE=0 keeps the kernel's tile.  Fills
 * plan->const_n / form_bn / form_stages, or says in note why not. */
enum { TN_BN = 256, TN_STAGES = 4 };
static void plan_tile(tl_func *f, const tl_pass_opts *o, const tl_op *dot, int32_t pa, int32_t pb, tl_kmajor_plan *plan,
                      char *note, size_t n) {
  const char *e = getenv("TILEC_KMAJOR_B_TILE");
  tl_type *a = &tl_val(f, dot->opnd[0])->type, *b = &tl_val(f, dot->opnd[1])->type;
  int vc = f->params.data[pb].view_const[1];
  const tl_param *ap = &f->params.data[pa], *bp = &f->params.data[pb];
  const char *why = NULL;
  if (e && e[0] == '0') why = "TILEC_KMAJOR_B_TILE=0";
  else if (tl_dtype_bytes((tl_dtype)a->dtype) != 1 || a->shape[0] != 128 || a->shape[1] != 128 || b->shape[1] != 128 ||
           f->warps != 8)
    why = "TN's tile is for an 8-bit 128x128x128 dot on 8 warps";
  else if (!o->fp8_acc_fast && tl_code_env_off("TILEC_PROMOTE_PARTS"))
    why = "TILEC_PROMOTE_PARTS=0: promote at 128x256 would spill";
  else if (vc <= 0 || ap->view_const[0] <= 0 || ap->view_const[0] == vc || ap->view_const[1] == vc ||
           bp->view_const[0] == vc || f->consts.data[vc - 1].value != 128)
    why = "no one tile constant names B's columns alone";
  else if (f->consts.data[vc - 1].overridden)
    why = "its N tile set by -D";
  else if (!tl_program_ids_tile_only(f, 128, 128))
    why = "a program_id is used other than times the tile's rows or columns";
  else if (f->consts.data[vc - 1].value_use)
    why = "its N tile constant is used as a number, not only as a tile extent or in the tiling";
  if (why) {
    snprintf(note, n, "at the kernel's tile (%s)", why);
    return;
  }
  plan->const_n = f->consts.data[vc - 1].name;
  plan->form_bn = TN_BN;
  plan->form_stages = TN_STAGES;
  snprintf(note, n, "at TN's sm_90a tile, %s=%d and %d stages (TILEC_KMAJOR_B_TILE=0: the kernel's)", plan->const_n,
           TN_BN, TN_STAGES);
}

/* Whether f gets the form; when not, why (empty: not a kernel this pass is about, no line). */
static bool plan_for(tl_func *f, const tl_pass_opts *o, tl_kmajor_plan *plan, char *why, size_t n, char *tile,
                     size_t tn) {
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
  plan_tile(f, o, op, pa, pb, plan, tile, tn);
  return true;
}

static bool run_kmajor_form(tl_func *f, const tl_pass_opts *o) {
  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  char why[300] = "", tile[200] = "";
  tl_kmajor_plan plan;
  memset(&plan, 0, sizeof plan);
  bool on = plan_for(f, o, &plan, why, sizeof why, tile, sizeof tile);
  if (on && switched_off()) on = false, snprintf(why, sizeof why, "off (TILEC_KMAJOR_B=0)");
  f->kmajor_b = tl_form_record(f, o, "kmajor_form", on, why, &plan, sizeof plan);
  if (on && ex)
    tl_sbuf_printf(ex,
                   "kmajor_form: kernel '%s': %s is %s [K, N] and wgmma reads 8-bit B only K-major: a launch whose "
                   "%s is K-major (stride 1 along K) runs the K-major-B form (this kernel with %s stored [N, K]: the "
                   "TN loop, B by TMA; %s) on it; one whose %s is N-major and M > %lld (more than one tile row reads "
                   "each B tile) first transposes it into a workspace [N, K] (a second kernel, 2 x K x N bytes) and "
                   "runs the form on that; otherwise this kernel (its transpose in shared memory); off with "
                   "TILEC_KMAJOR_B=0 or --disable-pass=kmajor_form\n",
                   f->name, plan.b_name, tl_dtype_name((tl_dtype)plan.dtype), plan.b_name, plan.b_name, tile,
                   plan.b_name, (long long)plan.bm);
  return true;
}

const tl_pass tl_pass_kmajor_form = {
    "kmajor_form",
    "requires verified IR after mma_remap and swpipe; keeps ops and values; records the K-major-B form of a wgmma "
    "kernel with an 8-bit B [K, N] (f->kmajor_b) that the launcher picks by B's strides",
    run_kmajor_form,
};
