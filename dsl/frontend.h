/* frontend.h: .tile source -> checked AST -> tile IR.  Implemented in dsl/. */
#ifndef TILEC_FRONTEND_H
#define TILEC_FRONTEND_H

#include "ir.h"

/* A compile-time override of a tile constant (-D NAME=VALUE). */
typedef struct tl_define { const char *name; int64_t value; } tl_define;

/* Lex, parse, check and lower source file `file` of c for target `arch` ("sm_80" ...
 * "sm_90a"; NULL = sm_90a, the default target), which sets the predefined constants ARCH and
 * ARCH_SPECIFIC (docs/language.md "Predefined constants").  Defines naming no tile constant of
 * any kernel (nor ARCH / ARCH_SPECIFIC) are an error.  On errors returns NULL with
 * diagnostics in c (several where recovery is sound).  If ast_dump is not
 * NULL the checked AST is printed into it (--emit=ast). */
tl_module *tl_frontend(tl_ctx *c, int32_t file, const char *arch, const tl_define *defs, int ndefs, tl_sbuf *ast_dump);
/* As tl_frontend, with the checked AST kept (in c's arena) for a later dump instead of printed:
 * *ast (NULL when the source did not parse) for tl_frontend_dump_ast, which prints what
 * tl_frontend's ast_dump holds (the API prints it on demand: lib/api/api.c). */
tl_module *tl_frontend_keep_ast(tl_ctx *c, int32_t file, const char *arch, const tl_define *defs, int ndefs, const void **ast);
void tl_frontend_dump_ast(tl_sbuf *b, tl_ctx *c, const void *ast);

#endif
