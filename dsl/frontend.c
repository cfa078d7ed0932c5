/* frontend.c: tl_frontend, the entry of the front-end: limits on the input,
 * then lexer -> parser -> checker/lowering, and the --emit=ast dump.
 * requires: source `file` in ctx; keeps: diagnostics in ctx; returns a
 * module only when no error was reported. */
#include "frontend.h"
#include "ast.h"

static tl_module *frontend(tl_ctx *c, int32_t file, const char *arch, const tl_define *defs, int ndefs, const fe_program **ast) {
  if (file < 0 || file >= c->files.len) {
    tl_error(c, TL_NOLOC, "no source file %d", (int)file);
    return NULL;
  }
  int errors = c->nerrors;
  const tl_source *src = &c->files.data[file];
  if (src->len > FE_MAX_SOURCE) {
    tl_loc loc = {file, 0, 0};
    tl_error(c, loc, "source is %zu bytes; the limit is %u MiB", src->len, FE_MAX_SOURCE >> 20);
    return NULL;
  }
  fe_token_vec toks = {0};
  fe_lex(c, file, &toks);
  fe_program *prog = fe_parse(c, toks.data, toks.len);
  tl_module *m = NULL;
  /* After syntax errors the checker would mostly report their echoes. */
  if (c->nerrors == errors) m = fe_lower(c, prog, arch, defs, ndefs);
  *ast = prog;
  return c->nerrors > errors ? NULL : m;
}

tl_module *tl_frontend(tl_ctx *c, int32_t file, const char *arch, const tl_define *defs, int ndefs, tl_sbuf *ast_dump) {
  const fe_program *prog = NULL;
  tl_module *m = frontend(c, file, arch, defs, ndefs, &prog);
  if (ast_dump && prog) fe_dump_ast(ast_dump, c, prog);
  return m;
}

tl_module *tl_frontend_keep_ast(tl_ctx *c, int32_t file, const char *arch, const tl_define *defs, int ndefs, const void **ast) {
  const fe_program *prog = NULL;
  tl_module *m = frontend(c, file, arch, defs, ndefs, &prog);
  *ast = prog;
  return m;
}

void tl_frontend_dump_ast(tl_sbuf *b, tl_ctx *c, const void *ast) { fe_dump_ast(b, c, ast); }
