/* form_record.c: the end every form-recording pass shares (small_m, kmajor_form, attn_form): a
 * plan kept in the function's arena when the form is on, the pass's "off (why)" explain line
 * when it is not.  Not a pass itself. */
#include <string.h>

#include "ir.h"
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
