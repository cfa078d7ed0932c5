/* frontend.h: .tile source -> checked AST -> tile IR.  Implemented in dsl/. */
#ifndef TILEC_FRONTEND_H
#define TILEC_FRONTEND_H

#include "ir.h"

/* A compile-time override of a tile constant (-D NAME=VALUE). */
typedef struct tl_define { const char *name; int64_t value; } tl_define;

/* Lex, parse, check and lower source file `file` of c.  Defines naming no
 * tile constant of any kernel are an error.  On errors returns NULL with
 * diagnostics in c (several where recovery is sound).  If ast_dump is not
 * NULL the checked AST is printed into it (--emit=ast). */
tl_module *tl_frontend(tl_ctx *c, int32_t file, const tl_define *defs, int ndefs, tl_sbuf *ast_dump);

#endif
