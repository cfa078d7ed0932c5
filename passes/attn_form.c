/* attn_form: requires verified IR after route_pipeline, mma_remap and swpipe (f->sched); keeps
 * every op and value (it only records f->attn_form); records, for a D = 128 wgmma attention kernel
 * routed to two programs an SM (and a D = 256 one, whose 2-stage ring fa3 runs on with K and V apart:
 * TILEC_ATTN_KV_SPLIT, default on since the twentieth session), the FlashAttention-3 form a launch
 * picks by the key length S
 * (lib/attn_form.h, docs/pipelines.md "FlashAttention-3's combination, picked by S"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_form.h"
#include "code_env.h"
#include "schedule.h"

/* TILEC_ATTN_FORM=0 (off) and TILEC_ATTN_FORM_MIN_S (the bound) choose which kernel a launch runs,
 * not the code of any: the kernel's PTX is the same under either (tests/lit/passes/attn_form.test)
 * and the form has its own cache key (its defines and options), so they are read with getenv, not
 * through lib/code_env.c's table of the switches in the kernel cache key. */
/* TILEC_ATTN_KV_SPLIT unset or =1 (in the kernel cache key: lib/code_env.c) gives D256 kernels the form. */
static bool kv_split_on(void) {
  const char *e = tl_code_env("TILEC_ATTN_KV_SPLIT");
  return !e || (e[0] == '1' && !e[1]);
}

static bool switched_off(void) {
  const char *e = getenv("TILEC_ATTN_FORM");
  return e && e[0] == '0';
}

/* The short form's range (lib/attn_form.h short_*): O into K's slot for causal tiles from the counter measured (H100,
 * thirtieth session, 7 interleaved rounds x V's slot, bench/RESULTS.md) D128 S 1k / 2k / 4k / 16k 1.022 / 1.029 /
 * 1.018 / 1.007x: above the rule's 1.02 at 1k and 2k only, so a second form for 1024 <= S < 4096 (S below 1024 was
 * not measured).  TILEC_ATTN_FORM_KSLOT=0 (read with getenv: which kernel a launch runs, not the code of any) off. */
enum { ATTN_KSLOT_MIN_S = 1024, ATTN_KSLOT_MAX_S = 4096 };
/* D256's short form: causal tiles from the counter, which D256's form does not take by default (sched_on below),
 * measured x the form without it (H100, interleaved rounds, TILEC_ATTN_SCHED=1): twenty-ninth session S 1k 1.024x,
 * thirty-fourth S 1k / 1.5k / 2k 1.035 / 1.028 / 1.005x (S 4k 1.004, 8k 0.986, 16k 0.979): against the rule written
 * before (>= 1.01x in the range), 1024 <= S < 2048.  Thirty-fifth session (H100, bench/pending_counter256.sh, 7
 * interleaved rounds): the short form x TILEC_ATTN_FORM_COUNTER=0 S 1k / 1.5k 1.026 / 1.022x, S 2k 0.997 (the same
 * kernel); the counter at S 512 / 768 1.058 / 1.048x, so the range reaches 512 (the rule's: >= 1.01x at both).
 * TILEC_ATTN_FORM_COUNTER=0 (getenv, as the KSLOT switch) off. */
enum { ATTN_COUNTER_MIN_S = 512, ATTN_COUNTER_MAX_S = 2048 };

/* The bounds (H200, bench/RESULTS.md).  Fifteenth session, branch attn7: the form at BN 128 against
 * the default (BN 64, two programs an SM), same process, D128: S 1k 0.94-0.98x (about 5 us of each
 * 8-step tile runs outside the loop with one CTA an SM), S 4k 1.02-1.08x, S 16k 1.03-1.16x: 2048.
 * Twentieth session (owed call 1, attn8 and attnd128), the form with q by TMA (now its default):
 * D128 full S 1k 0.862 / 0.872x cuDNN against the two-program kernel's 0.841 / 0.843 (so 1024), D128
 * causal S 2k 0.864 / 0.888 against 0.913 / 0.924 and S 4k 0.941 / 0.963 against 0.965 / 0.965 (so
 * 4096 where the loop's range moves with the program: causal); D256 (against the persistent form or
 * the kernel) S 1k full 0.855 / 0.840 against 0.835 / 0.822, causal 0.809 / 0.783 against 0.762 /
 * 0.755, S 4k and 16k +5-7 % (so 1024: the smallest S measured). */
#define ATTN_FORM_MIN_S_CAUSAL 4096
/* Thirtieth session (H100, bench/pending_shorts.sh: 7 interleaved rounds, the form at every S x the default): the
 * form now has O through the last stage and, causal at D128, its tiles from the counter, and wins below 1024 too:
 * D128 causal S 256 / 512 / 768 1.094 / 1.110 / 1.108x, full S 512 / 768 1.127 / 1.114x; D256 S 512 causal
 * 1.235x, full 1.261x.  The bounds are the smallest S measured: 256 at D128, 512 at D256.  The same session on an
 * H200 (bench/pending_defaults30.sh, the form at every S x those bounds): D128 S 128 full / causal 1.275 / 1.247x,
 * S 192 causal 1.040x; D256 S 256 full / causal 1.359 / 1.384x, S 384 full 1.296x: 128 at D128, 256 at D256. */
#define ATTN_FORM_MIN_S 128
#define ATTN_FORM_MIN_S_D256 256
/* Twenty-eighth session (H100, interleaved rounds, bench/RESULTS.md): the causal form with its tiles from the
 * counter (TILEC_ATTN_SCHED=1 or the option attn-sched) and O through the last stage on every tile, against the
 * default at D128 S 1k / 2k / 4k / 16k: 1.10 / 1.07 / 1.04 / 1.00x (x cuDNN 0.954 / 1.020 / 1.047 / 1.050), so
 * 1024 with the counter.  Twenty-ninth session (H100, bench/pending_causal28.sh: the ragged sizes and GQA passed; 7
 * interleaved rounds x the default without the counter): D128 causal S 1k / 2k / 4k / 16k 1.109 / 1.072 / 1.045 / 1.006x,
 * D256 S 1k / 4k 1.024 / 1.004x, full unchanged: the default at D128 (D256: sched_on).  Since the thirtieth session
 * (above) the causal bound with the counter is full attention's, ATTN_FORM_MIN_S. */

/* The counter for a causal form (f->attn_sched: route_pipeline's record of the option attn-sched, else
 * TILEC_ATTN_SCHED), else the default: on at D128 since the twenty-ninth session's check, off at D256 (H100,
 * interleaved rounds x TILEC_ATTN_SCHED=0: D256 causal S1k 1.024, S4k 1.004, S8k 0.986, S16k 0.979 -- a form is
 * one kernel for every S past its bound, and the counter's tile-end reads cost more than its balance gains on
 * D256's long tiles; D128 S1k..16k 1.109 / 1.072 / 1.045 / 1.019 (S8k) / 1.006) */
static bool sched_on(const tl_func *f, bool d256) {
  char m = tl_attn_sched_mode(f->attn_sched);
  return m ? m == '1' || m == '2' : !d256;
}

/* The one tile constant whose value is v, or NULL (none, or several). */
static const char *const_of_value(const tl_func *f, int64_t v) {
  const char *found = NULL;
  for (int i = 0; i < f->consts.len; i++)
    if (f->consts.data[i].value == v) {
      if (found) return NULL;
      found = f->consts.data[i].name;
    }
  return found;
}

/* The short form's range [lo, hi) within the form's own (from min_s), none where that is empty. */
static void set_short_range(tl_attn_form_plan *plan, int64_t lo, int64_t hi, const char *option) {
  plan->short_min_s = plan->min_s > lo ? plan->min_s : lo;
  plan->short_max_s = hi;
  plan->short_option = option;
  if (plan->short_min_s >= plan->short_max_s) plan->short_min_s = plan->short_max_s = 0, plan->short_option = NULL;
}

/* Whether f gets the form; when not, why (empty: not a kernel this pass is about, no line). */
static bool plan_for(tl_func *f, const tl_pass_opts *o, tl_attn_form_plan *plan, char *why, size_t n) {
  why[0] = 0;
  if (f->pipeline != TL_PIPE_CUTLASS || (o->arch && strcmp(o->arch, "sm_90a"))) return false;
  int32_t dots[2];
  if (!tl_attn_wgmma_dots(f, dots)) return false;
  tl_op *sd = tl_op_at(f, dots[0]);
  if (f->ws != TL_WS_OFF) return snprintf(why, n, "off (the kernel is warp-specialized already: attn-ws / TILEC_ATTN_WS)"), false;
  const tl_type *a = &tl_val(f, sd->opnd[0])->type, *b = &tl_val(f, sd->opnd[1])->type;
  /* D256 (one program an SM, a 2-stage ring): the form at the kernel's own BN, only with K and V of a
   * stage apart (TILEC_ATTN_KV_SPLIT=1, lib/codegen/emit_ws.c), which lets fa3 run on 2 stages */
  bool d256 = a->shape[1] == 256 && (a->dtype == TL_BF16 || a->dtype == TL_F16);
  if (d256 && !kv_split_on())
    return snprintf(why, n, "off (head dimension 256: fa3 runs on its 2-stage ring only with K and V of a stage apart, "
                            "TILEC_ATTN_KV_SPLIT=1, the default, not =%s)", tl_code_env("TILEC_ATTN_KV_SPLIT")),
           false;
  if (!f->two_programs && !d256)
    return snprintf(why, n, "off (not two programs an SM: the form is measured against that kernel only)"), false;
  if (a->dtype != TL_BF16 && a->dtype != TL_F16) return false;
  if (a->shape[1] != 128 && !d256)
    return snprintf(why, n, "off (head dimension %lld: the form is for 128; at 64 it measured 0.75-1.00x the "
                            "kernel, two programs an SM, and 0.76-0.83x causal with tiles from the counter)",
                    (long long)a->shape[1]),
           false;
  int key_axis = -1;
  const tl_sym *sym = tl_attn_key_len_sym(f, dots[0], &key_axis);
  if (!sym)
    return snprintf(why, n, "off (the score dot's B is not trans(load) of a tensor whose rows are a shape symbol)"), false;
  const char *bn = const_of_value(f, b->shape[1]);
  if (!bn)
    return snprintf(why, n, "off (no one tile constant has the score dot's N extent %lld: the form sets it by name)",
                    (long long)b->shape[1]),
           false;
  /* the form sets the constant to 128 by name: only where it is nothing but the key tile's extent (a mask block
   * index n0 / BN, a window WIN equal to a literal key tile, require(S % BN == 0) would change meaning: an
   * attention-variant hunt, thirty-sixth session) */
  bool kt = false;
  int32_t pk = tl_loaded_param(f, sd->opnd[1], &kt);
  int vc = f->params.data[pk].view_const[key_axis];
  if (vc <= 0 || vc > f->consts.len || strcmp(f->consts.data[vc - 1].name, bn))
    return snprintf(why, n, "off (the views of %s along its keys are not all `n0 : n0 + %s`: the form sets %s by name, "
                            "so it must be the keys' extent)",
                    f->params.data[pk].name, bn, bn),
           false;
  if (tl_tileconst_named(f, bn)->value_use)
    return snprintf(why, n, "off (the tile constant %s, the score dot's N extent %lld, is used as a number, not only "
                            "as a tile extent or the loop's step: the form sets it by name and would change what "
                            "the kernel computes)",
                    bn, (long long)b->shape[1]),
           false;
  const char *e = getenv("TILEC_ATTN_FORM_MIN_S");
  /* (f->attn_persist_fits: route_pipeline found the main loop's range independent of the program,
   * every tile the same weight; a causal kernel's is not) */
  int64_t bound = d256                                      ? ATTN_FORM_MIN_S_D256
                  : f->attn_persist_fits || sched_on(f, false) ? ATTN_FORM_MIN_S
                                                               : ATTN_FORM_MIN_S_CAUSAL;
  plan->min_s = e && atoll(e) >= 1 ? atoll(e) : bound;
  plan->s_sym = sym->name;
  plan->s_param = sym->param, plan->s_axis = sym->axis;
  plan->const_bn = bn;
  plan->bn = d256 ? b->shape[1] : 128;
  plan->counter = !f->attn_persist_fits && sched_on(f, d256);
  /* the short form: causal D128 with the counter, where neither the program (attn-o-slot-k) nor the switch
   * (TILEC_ATTN_O_SLOT_K, which the forms' codegen reads too) chose O's slot already */
  const char *ks = getenv("TILEC_ATTN_FORM_KSLOT");
  if (plan->counter && !d256 && !tl_attn_o_slot_k_mode(f->attn_o_slot_k) && !(ks && ks[0] == '0'))
    set_short_range(plan, ATTN_KSLOT_MIN_S, ATTN_KSLOT_MAX_S, "attn-o-slot-k");
  /* D256's short form: causal, where neither the program (attn-sched) nor the switch (TILEC_ATTN_SCHED) chose */
  const char *cs = getenv("TILEC_ATTN_FORM_COUNTER");
  if (d256 && !f->attn_persist_fits && !tl_attn_sched_mode(f->attn_sched) && !(cs && cs[0] == '0'))
    set_short_range(plan, ATTN_COUNTER_MIN_S, ATTN_COUNTER_MAX_S, "attn-sched");
  return true;
}

static bool run_attn_form(tl_func *f, const tl_pass_opts *o) {
  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  char why[300] = "";
  tl_attn_form_plan plan;
  memset(&plan, 0, sizeof plan);
  bool on = plan_for(f, o, &plan, why, sizeof why);
  if (on && switched_off()) on = false, snprintf(why, sizeof why, "off (TILEC_ATTN_FORM=0)");
  f->attn_form = tl_form_record(f, o, "attn_form", on, why, &plan, sizeof plan);
  if (on && ex)
    tl_sbuf_printf(ex,
                   "attn_form: kernel '%s': a launch picks its form by %s (argument %d, dimension %d): %s >= %lld runs "
                   "the FlashAttention-3 form (this kernel at %s=%lld with attn-ws=fa3: a producer warpgroup, the "
                   "consumer warpgroups' turns, the value dot a step late, one program an SM: fewer instructions a key, "
                   "more work a tile outside the loop%s), %s < %lld this kernel (%s an SM); off with "
                   "TILEC_ATTN_FORM=0 or --disable-pass=attn_form\n",
                   f->name, plan.s_sym, plan.s_param, plan.s_axis, plan.s_sym, (long long)plan.min_s, plan.const_bn,
                   (long long)plan.bn,
                   plan.counter ? "; causal: persistent, its tiles from a counter (attn-sched / TILEC_ATTN_SCHED), O "
                                 "through the last ring stage every tile"
                               : "",
                   plan.s_sym, (long long)plan.min_s, f->two_programs ? "two programs" : "one program");
  bool kslot = plan.short_option && !strcmp(plan.short_option, "attn-o-slot-k");
  if (on && ex && plan.short_max_s)
    tl_sbuf_printf(ex, "attn_form: kernel '%s': %lld <= %s < %lld runs the form's short variant, %s\n", f->name,
                   (long long)plan.short_min_s, plan.s_sym, (long long)plan.short_max_s,
                   kslot ? "the same with O through the last stage's K slot (attn-o-slot-k=1: measured 1.02-1.03x V's "
                           "slot at S 1k-2k, 1.007-1.018x from 4k); off with TILEC_ATTN_FORM_KSLOT=0"
                         : "the same with its causal tiles from the counter (attn-sched=1: measured 1.05-1.06x at S "
                           "512-768, 1.02-1.03x at 1k-1.5k, 1.005x at 2k, 0.98-1.00x from 4k); off with "
                           "TILEC_ATTN_FORM_COUNTER=0");
  return true;
}

const tl_pass tl_pass_attn_form = {
    "attn_form",
    "requires verified IR after route_pipeline, mma_remap and swpipe; keeps ops and values; records the "
    "FlashAttention-3 form of a D128 wgmma attention kernel (f->attn_form) that the launcher picks by S",
    run_attn_form,
};
