/* attn_persist_form: requires verified IR after route_pipeline, mma_remap and swpipe (f->sched);
 * keeps every op and value (it only records f->attn_persist_form); records, for a D = 256 wgmma
 * attention kernel without a producer whose tiles weigh the same (not causal), the persistent form
 * a launch picks by the key length S (lib/attn_persist_form.h, docs/pipelines.md "The persistent
 * form picked by S"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_persist_form.h"
#include "code_env.h"
#include "ir.h"

/* The bound (H200, bench/RESULTS.md eighteenth session "owed calls A and B", call B, bench.py beside
 * cuDNN in the same run, two rounds): TILEC_ATTN_PERSIST=1 against the kernel at D256 full, S 1k 0.794 / 0.784x
 * cuDNN against 0.760 / 0.748 (+4.5-5 %), S 4k 0.867 / 0.829 against 0.869 / 0.854 (0 to -3 %).  The
 * form hides a tile's fixed start and end, whose share of a tile falls as 1/S; 2048 (S 2k) is the
 * largest power of two not measured to lose, itself unmeasured.  TILEC_ATTN_PERSIST_MAX_S=N moves it
 * (measuring); like TILEC_ATTN_FORM_MIN_S it picks a kernel, not code, so it is read with getenv. */
#define ATTN_PERSIST_MAX_S 2048

/* Whether f gets the form; when not, why (empty: not a kernel this pass is about, no line). */
static bool plan_for(tl_func *f, const tl_pass_opts *o, tl_attn_persist_plan *plan, char *why, size_t n) {
  why[0] = 0;
  if (f->pipeline != TL_PIPE_CUTLASS || (o->arch && strcmp(o->arch, "sm_90a"))) return false;
  int32_t dots[2];
  if (!tl_attn_wgmma_dots(f, dots)) return false;
  tl_op *sd = tl_op_at(f, dots[0]);
  const tl_type *a = &tl_val(f, sd->opnd[0])->type;
  if (a->dtype != TL_BF16 && a->dtype != TL_F16) return false;
  if (f->ws != TL_WS_OFF) return snprintf(why, n, "off (the kernel is warp-specialized: a producer runs ahead already)"), false;
  if (f->attn_persist)
    return snprintf(why, n, "off (TILEC_ATTN_PERSIST=%d or the option attn-persist: the kernel itself is persistent "
                            "at every S)", f->attn_persist),
           false;
  if (o->attn_persist) return snprintf(why, n, "off (the option attn-persist=%s fixes the form)", o->attn_persist), false;
  if (tl_code_env_off("TILEC_ATTN_PERSIST")) return snprintf(why, n, "off (TILEC_ATTN_PERSIST=0)"), false;
  if (f->warps != 8) /* (route_pipeline judges the range only for two warpgroups: attn_persist_fits) */
    return snprintf(why, n, "off (%d warps: the form is the two-warpgroup wgmma kernel made persistent)", f->warps), false;
  if (!f->attn_persist_fits)
    return snprintf(why, n, "off (the main loop's range moves with the tile -- program_id(0), or a bound read from "
                            "memory: the tiles weigh differently, a static order would unbalance the SMs)"),
           false;
  if (a->shape[1] != 256)
    return snprintf(why, n, "off (head dimension %lld: the form is for 256; at 128 TILEC_ATTN_PERSIST=1 measured "
                            "0.97-1.01x the kernel at S 1k and 4k, at 64 0.94-0.95x at S 1k and 4k full, H100)",
                    (long long)a->shape[1]),
           false;
  const tl_sym *sym = tl_attn_key_len_sym(f, dots[0], NULL);
  if (!sym)
    return snprintf(why, n, "off (the score dot's B is not trans(load) of a tensor whose rows are a shape symbol)"), false;
  const char *e = getenv("TILEC_ATTN_PERSIST_MAX_S");
  plan->max_s = e && atoll(e) >= 0 && *e ? atoll(e) : ATTN_PERSIST_MAX_S;
  plan->s_sym = sym->name;
  plan->s_param = sym->param, plan->s_axis = sym->axis;
  return true;
}

static bool run_attn_persist_form(tl_func *f, const tl_pass_opts *o) {
  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  char why[300] = "";
  tl_attn_persist_plan plan;
  memset(&plan, 0, sizeof plan);
  bool on = plan_for(f, o, &plan, why, sizeof why);
  f->attn_persist_form = tl_form_record(f, o, "attn_persist_form", on, why, &plan, sizeof plan);
  if (on && ex)
    tl_sbuf_printf(ex,
                   "attn_persist_form: kernel '%s': a launch picks its form by %s (argument %d, dimension %d): %s <= "
                   "%lld runs the persistent form (this kernel with attn-persist=1: CTAs that fit looping over the "
                   "tiles, the next tile's first K/V stage and q by TMA issued under this tile's epilogue), %s > %lld "
                   "this kernel (one tile a program); off with TILEC_ATTN_PERSIST=0 or "
                   "--disable-pass=attn_persist_form\n",
                   f->name, plan.s_sym, plan.s_param, plan.s_axis, plan.s_sym, (long long)plan.max_s, plan.s_sym,
                   (long long)plan.max_s);
  return true;
}

const tl_pass tl_pass_attn_persist_form = {
    "attn_persist_form",
    "requires verified IR after route_pipeline, mma_remap and swpipe; keeps ops and values; records the "
    "persistent form of a D256 full wgmma attention kernel (f->attn_persist_form) that the launcher picks by S",
    run_attn_persist_form,
};
