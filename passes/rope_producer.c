/* rope_producer: requires verified IR after route_pipeline (f->attn_fa3); keeps every op and value and
 * records nothing; with TILEC_ROPE_PRODUCER=1 says in --explain whether the rotate-half RoPE of the
 * keys in a wgmma attention kernel's main loop matched (lib/rope_producer.h) and whether the fa3 form
 * takes it (then codegen rotates k in the producer warpgroup: lib/codegen/emit_rope.c, which asks the
 * match itself; docs/pipelines.md "RoPE in fa3's producer").  Without the switch it says nothing. */
#include <stdio.h>
#include <string.h>

#include "code_env.h"
#include "rope_producer.h"

static bool run_rope_producer(tl_func *f, const tl_pass_opts *o) {
  if (!tl_code_env_on("TILEC_ROPE_PRODUCER")) return true;
  if (f->pipeline != TL_PIPE_CUTLASS || (o->arch && strcmp(o->arch, "sm_90a"))) return true;
  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  tl_rope_match m;
  char why[300];
  if (!tl_rope_match_keys(f, &m, why, sizeof why)) {
    if (ex) tl_sbuf_printf(ex, "rope_producer: kernel '%s': off (%s)\n", f->name, why);
    return true;
  }
  tl_op *lo = tl_op_at(f, m.load_lo);
  const char *k = f->params.data[m.k_param].name, *c = f->params.data[m.cos_param].name,
             *s = f->params.data[m.sin_param].name;
  if (!f->attn_fa3) {
    if (ex)
      tl_sbuf_printf(ex, "rope_producer: kernel '%s': the rotate-half RoPE of %s at %d:%d (tables %s, %s) matched, "
                         "but off (not the fa3 form: TILEC_ATTN_WS=fa3 or attn-ws=fa3 with -D BN=128; the consumers "
                         "rotate k as before)\n",
                     f->name, k, lo->loc.line, lo->loc.col, c, s);
    return true;
  }
  if (ex)
    tl_sbuf_printf(ex, "rope_producer: kernel '%s': the rotate-half RoPE of %s at %d:%d matched (halves of %d columns, "
                       "%d keys a step, %s tables %s, %s); fa3's producer warpgroup rotates k in its ring slot\n",
                   f->name, k, lo->loc.line, lo->loc.col, m.half, m.bn, tl_dtype_name(m.table_dtype), c, s);
  return true;
}

const tl_pass tl_pass_rope_producer = {
    "rope_producer",
    "requires verified IR after route_pipeline; keeps ops and values; with TILEC_ROPE_PRODUCER=1 notes whether the "
    "rotate-half RoPE of the keys in a wgmma attention loop matched and the fa3 form's producer rotates k",
    run_rope_producer,
};
