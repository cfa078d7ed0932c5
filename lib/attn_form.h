/* attn_form.h: the FlashAttention-3 form of a wgmma attention kernel, picked at launch by the
 * sequence length (passes/attn_form.c records it, lib/api/forms.c loads it, lib/api/form_launch.c launches it;
 * docs/pipelines.md "FlashAttention-3's combination, picked by S").
 *
 * The form is the kernel's own source with the key tile constant at 128 and the option
 * attn-ws=fa3 (a producer warpgroup, the consumer warpgroups' turns, the value dot a step late;
 * one program an SM, persistent where every tile has the same trip count).  Its per-step work is
 * cheaper than the default's two programs of 64-key steps, its per-tile work is not: launches
 * whose key length S is at least min_s run the form, shorter ones the kernel itself. */
#ifndef TILEC_ATTN_FORM_H
#define TILEC_ATTN_FORM_H

#include <stdbool.h>
#include <stdint.h>

#include "code_env.h"

/* Causal fa3 tiles from the counter (codegen attn_sched.c): the mode ('1', '2'; '0' or 0 off) asked by the
 * option attn-sched (`opt`, route_pipeline's f->attn_sched; 0 unset), else by TILEC_ATTN_SCHED.  The one
 * resolution passes/attn_form.c (the causal form's bound) and attn_sched.c (the kernel) share. */
static inline char tl_attn_sched_mode(char opt) {
  const char *e = tl_code_env("TILEC_ATTN_SCHED");
  return opt ? opt : e ? e[0] : 0;
}

/* fa3's O slot: '1' K's, '0' V's, asked by the option attn-o-slot-k (`opt`, route_pipeline's f->attn_o_slot_k; 0
 * unset), else by TILEC_ATTN_O_SLOT_K (any value but 1 is V's); 0 when neither asks (the default decides).  The one
 * resolution passes/attn_form.c (no short form where something asked) and emit_o_slot.c (the slot) share. */
static inline char tl_attn_o_slot_k_mode(char opt) {
  const char *e = tl_code_env("TILEC_ATTN_O_SLOT_K");
  return opt ? opt : e ? (e[0] == '1' ? '1' : '0') : 0;
}

typedef struct tl_attn_form_plan {
  const char *s_sym;        /* the shape symbol of the keys ("S") */
  int32_t s_param, s_axis;  /* where a launch's arguments give it */
  int64_t min_s;            /* launches with S >= min_s run the form */
  const char *const_bn;     /* the tile constant of the keys a step ("BN") */
  int64_t bn;               /* its value in the form */
  bool counter;             /* causal (the main loop's range moves with the program) with the counter asked for
                             * (option attn-sched / TILEC_ATTN_SCHED): the form takes its tiles from it */
  int64_t short_min_s, short_max_s; /* the short form (0, 0: none): launches with short_min_s <= S < short_max_s
                             * run the form compiled with the option short_option=1 */
  const char *short_option; /* causal D128 with the counter: attn-o-slot-k (O through the last stage's K slot);
                             * causal D256 without it: attn-sched (its tiles from the counter) */
} tl_attn_form_plan;

#endif
