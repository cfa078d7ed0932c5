/* fuzz_frontend.c: libFuzzer target over the front-end and the pass pipeline.
 * Any input must give either diagnostics or a module that verifies, before
 * and after the default pipeline; a crash, a sanitizer report, an internal
 * error or invalid IR is a finding.  Inputs with a NUL byte are skipped (the
 * API rejects them before the front-end sees them). */
#include <stdint.h>
#include <string.h>

#include "frontend.h"
#include "ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 65536 || memchr(data, 0, size)) return 0;
  /* Static: what callees change must survive the longjmp of a fatal error. */
  static tl_ctx ctx;
  static tl_sbuf ast, text;
  tl_ctx_init(&ctx);
  ctx.arena.limit = (size_t)512 << 20; /* a huge tile is an error, not an OOM kill */
  jmp_buf on_fatal;
  ctx.on_fatal = &on_fatal;
  if (setjmp(on_fatal) == 0) {
    int32_t file = tl_ctx_add_source(&ctx, "fuzz.tile", (const char *)data, size);
    tl_module *m = tl_frontend(&ctx, file, NULL, NULL, 0, &ast);
    if (m && ctx.nerrors == 0) {
      if (!tl_verify_module(m)) __builtin_trap(); /* the front-end made invalid IR */
      int n = 0;
      const tl_pass *const *passes = tl_pipeline_default(&n);
      tl_pass_opts po = {.arch = "sm_90a", .opt_level = 3};
      tl_run_hooks hooks = {.verify_each = true, .log = &text};
      int before = ctx.nerrors;
      if (tl_run_passes(m, passes, n, &po, &hooks)) {
        if (!tl_verify_module(m)) __builtin_trap(); /* a pass broke the IR */
        tl_print_module(&text, m);
      }
      for (int i = before; i < ctx.diags.len; i++)
        if (strncmp(ctx.diags.data[i].message, "verifier: ", 10) == 0) __builtin_trap();
    }
  } else if (ctx.fatal_status == TL_ERR_INTERNAL) {
    __builtin_trap(); /* TL_INTERNAL on user input is a bug */
  }
  tl_sbuf_free(&ast);
  tl_sbuf_free(&text);
  tl_ctx_free(&ctx);
  return 0;
}
