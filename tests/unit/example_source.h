/* example_source.h: an examples/FILE.tile read and compiled by the front end (with -D defines) and
 * verified, for the unit tests that interpret or transform the examples (test_examples.c,
 * test_hoist_operand.c).  Static inline, so a test that does not use it does not warn. */
#ifndef EXAMPLE_SOURCE_H
#define EXAMPLE_SOURCE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "frontend.h"
#include "ir.h"

typedef struct compiled {
  tl_ctx ctx;
  tl_module *m;
  char *text;
} compiled;

/* examples/FILE compiled and verified; the test fails (with the diagnostics) where it does not compile. */
static inline compiled *example_compile(const char *file, const tl_define *defs, int ndefs) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/%s", TILEC_SOURCE_DIR, file);
  FILE *fp = fopen(path, "rb");
  cr_assert_not_null(fp, "cannot open %s", path);
  compiled *c = calloc(1, sizeof *c);
  c->text = calloc(1, 1 << 20);
  size_t n = fread(c->text, 1, (1 << 20) - 1, fp);
  fclose(fp);
  tl_ctx_init(&c->ctx);
  int32_t src = tl_ctx_add_source(&c->ctx, path, c->text, n);
  c->m = tl_frontend(&c->ctx, src, NULL, defs, ndefs, NULL);
  if (!c->m) {
    char *d = tl_ctx_render_diags(&c->ctx);
    cr_assert_fail("%s does not compile:\n%s", file, d ? d : "(no diagnostics)");
  }
  cr_assert(tl_verify_module(c->m), "%s: verifier:\n%s", file, tl_ctx_render_diags(&c->ctx));
  return c;
}

static inline void compiled_free(compiled *c) {
  tl_ctx_free(&c->ctx);
  free(c->text);
  free(c);
}

#endif
