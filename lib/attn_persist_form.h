/* attn_persist_form.h: the persistent form of a D256 wgmma attention kernel without a producer,
 * picked at launch by the sequence length (passes/attn_persist_form.c records it, lib/api/forms.c
 * loads it, lib/api/form_launch.c launches it; docs/pipelines.md "The persistent form picked by S").
 *
 * The form is the kernel's own source with the option attn-persist=1 (route_pipeline: min(tiles,
 * CTAs that fit) CTAs looping over the tiles, the next tile's first K/V stage and q by TMA issued at
 * the main loop's exit, under this tile's epilogue).  It hides a tile's start and end, which weigh
 * most where a tile has few steps: launches whose key length S is at most max_s run the form,
 * longer ones the kernel itself. */
#ifndef TILEC_ATTN_PERSIST_FORM_H
#define TILEC_ATTN_PERSIST_FORM_H

#include <stdint.h>

typedef struct tl_attn_persist_plan {
  const char *s_sym;        /* the shape symbol of the keys ("S") */
  int32_t s_param, s_axis;  /* where a launch's arguments give it */
  int64_t max_s;            /* launches with S <= max_s run the form */
} tl_attn_persist_plan;

#endif
