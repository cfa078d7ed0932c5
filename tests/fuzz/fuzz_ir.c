/* fuzz_ir.c: libFuzzer target over the textual tile IR and the pass pipeline.
 * Bytes are parsed with tl_parse_ir; parse errors and verifier errors on the
 * input itself are fine.  Input that verifies goes through the whole default
 * pipeline (layout_assign included) with verify_each: an internal error
 * (TL_INTERNAL longjmp) or IR that a pass left invalid is a finding, reported
 * with __builtin_trap().  Inputs with a NUL byte are skipped (the API rejects
 * them before any parser sees them). */
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include "ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether diagnostics [from, len) hold a verifier error or the pipeline's
 * "invalid after pass" error. */
static bool has_verifier_error(const tl_ctx *c, int from) {
  for (int i = from; i < c->diags.len; i++) {
    const char *msg = c->diags.data[i].message;
    if (strncmp(msg, "verifier: ", 10) == 0 || strstr(msg, "the IR is invalid after pass")) return true;
  }
  return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 65536 || memchr(data, 0, size)) return 0;
  /* Static: what callees change must survive the longjmp of a fatal error. */
  static tl_ctx ctx;
  static tl_sbuf text;
  tl_ctx_init(&ctx);
  ctx.arena.limit = (size_t)512 << 20; /* a huge tile is an error, not an OOM kill */
  jmp_buf on_fatal;
  ctx.on_fatal = &on_fatal;
  if (setjmp(on_fatal) == 0) {
    int32_t file = tl_ctx_add_source(&ctx, "fuzz.tir", (const char *)data, size);
    tl_module *m = tl_parse_ir(&ctx, file);
    if (m && ctx.nerrors == 0 && tl_verify_module(m)) {
      int n = 0;
      const tl_pass *const *passes = tl_pipeline_default(&n);
      tl_pass_opts po = {.arch = "sm_90a", .opt_level = 3};
      tl_run_hooks hooks = {.verify_each = true, .log = &text};
      int before = ctx.diags.len;
      if (tl_run_passes(m, passes, n, &po, &hooks)) {
        if (!tl_verify_module(m)) __builtin_trap(); /* a pass broke the IR */
        tl_print_module(&text, m);
      }
      /* A pass may reject the input with its own error; an invalid result is a bug. */
      if (has_verifier_error(&ctx, before)) __builtin_trap();
    }
  } else if (ctx.fatal_status == TL_ERR_INTERNAL) {
    __builtin_trap(); /* TL_INTERNAL on input that parsed is a bug */
  }
  tl_sbuf_free(&text);
  tl_ctx_free(&ctx);
  return 0;
}
