/* form_record.c: the end every form-recording pass shares (small_m, kmajor_form, attn_form,
 * attn_persist_form): a plan kept in the function's arena when the form is on, the pass's "off
 * (why)" explain line when it is not; the attention forms' test of the kernel's two dots; and the
 * test that a form of other tiles computes the same result (small_m, kmajor_form).
 * Not a pass itself. */
#include <string.h>

#include "ir.h"
#include "schedule.h"
#include "util.h"

void *tl_form_record(tl_func *f, const tl_pass_opts *o, const char *pass, bool on, const char *why,
                     const void *plan, size_t size) {
  if (!on) {
    if (o->explain && o->explain_out && why && why[0])
      tl_sbuf_printf(o->explain_out, "%s: kernel '%s': %s\n", pass, f->name, why);
    return NULL;
  }
  void *keep = tl_alloc(&f->ctx->arena, size);
  memcpy(keep, plan, size);
  return keep;
}

bool tl_attn_wgmma_dots(tl_func *f, int32_t dots[2]) {
  int ndots = 0;
  for (int32_t i = 0; i < f->ops.len; i++)
    if (f->ops.data[i].opc == TL_OP_dot && !(f->ops.data[i].flags & TL_OPF_DEAD)) {
      if (ndots < 2) dots[ndots] = i;
      ndots++;
    }
  if (ndots != 2) return false;
  /* the score dot: S = q trans(k), k a load of the keys' tensor; the value dot's B is V unturned */
  bool t0 = false;
  if (tl_loaded_param(f, tl_op_at(f, dots[0])->opnd[1], &t0) < 0 || !t0) {
    int32_t t = dots[0];
    dots[0] = dots[1], dots[1] = t;
  }
  tl_op *sd = tl_op_at(f, dots[0]);
  tl_dot_sched *d0 = tl_sched_dot(f, dots[0], false), *d1 = tl_sched_dot(f, dots[1], false);
  return sd->parent >= 0 && tl_op_at(f, dots[1])->parent == sd->parent && d0 && d1 &&
         d0->instr == TL_SCHED_MMA_WGMMA && d1->instr == TL_SCHED_MMA_WGMMA;
}

const tl_sym *tl_attn_key_len_sym(tl_func *f, int32_t score_dot, int *key_axis) {
  bool bt = false;
  int32_t pk = tl_loaded_param(f, tl_op_at(f, score_dot)->opnd[1], &bt);
  if (pk < 0 || !bt || f->params.data[pk].rank < 2) return NULL;
  /* the keys' axis: the load's first ranged axis (the tile's rows, N once turned), not always the
   * second-to-last -- FlashAttention's own [B, S, H, D] puts the heads there (an attention-variant hunt) */
  int32_t v = tl_op_at(f, score_dot)->opnd[1];
  while (tl_val(f, v)->def >= 0 && tl_op_at(f, tl_val(f, v)->def)->opc != TL_OP_load) v = tl_op_at(f, tl_val(f, v)->def)->opnd[0];
  const tl_op *ld = tl_op_at(f, tl_val(f, v)->def);
  int axis = -1;
  for (int a = 0; a < f->params.data[pk].rank && axis < 0; a++)
    if (ld->dims[a] > 0) axis = a;
  if (axis < 0) return NULL;
  if (key_axis) *key_axis = axis;
  const tl_dimspec *rows = &f->params.data[pk].dims[axis];
  return rows->is_const ? NULL : &f->syms.data[rows->sym];
}

/* (ir.h) Every program_id of f is used only as `program_id(a) * C` with C the dot's M or N extent (the
 * tile's first row or column), so the tile constants set the tiling and nothing else the kernel
 * computes: a form with other tiles computes the same C.  moe_gemm's program_id(0) also indexes
 * its per-tile expert table (built for BM-row tiles), which a form of other BM would misread. */
bool tl_program_ids_tile_only(tl_func *f, int64_t em, int64_t en) {
  for (int32_t i = 0; i < f->ops.len; i++) {
    tl_op *u = &f->ops.data[i];
    if (u->flags & TL_OPF_DEAD) continue;
    for (int j = 0; j < u->nopnd; j++) {
      int32_t d = tl_val(f, u->opnd[j])->def;
      if (d < 0 || tl_op_at(f, d)->opc != TL_OP_program_id) continue;
      if (u->opc != TL_OP_mul) return false;
      int32_t c = tl_val(f, u->opnd[1 - j])->def;
      if (c < 0 || tl_op_at(f, c)->opc != TL_OP_const) return false;
      int64_t v = tl_op_at(f, c)->ival;
      if (v != em && v != en) return false;
    }
  }
  return true;
}
