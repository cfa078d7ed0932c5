/* program.h: what a tilec_program and tilec_options hold (shared by lib/api/*.c). */
#ifndef TILEC_PROGRAM_H
#define TILEC_PROGRAM_H

#include "tilec.h"
#include "ir.h"
#include "codegen.h"

#include "frontend.h"

/* Options: heap-allocated (malloc), deep-copied into each program. */
struct tilec_options {
  tl_define *defines; int ndefines;
  char *arch;          /* NULL = detect, else sm_90a */
  int opt_level;       /* default 3 */
  int line_info;       /* default 1 */
  char *pipeline;      /* NULL = by name/attribute */
  char *print_after;   /* pass name or "all"; NULL = none */
  int time_passes;
  int verify_each;     /* run the verifier after every pass (tests: 1) */
  char *entry_name;
  int max_errors;
  int explain;
};

struct tilec_program {
  tl_ctx ctx;                 /* arena, sources, diagnostics */
  struct tilec_options opts;  /* deep copy (strings in ctx arena) */
  int32_t file;               /* source index in ctx.files */
  int reached;                /* last stage completed, -1 = none */
  tilec_status failed;        /* sticky failure status (TILEC_OK = none) */
  tl_module *module;          /* after the front-end; passes run in place */
  char *text[5];              /* per stage, malloc'd (AST, IR, LLVM, PTX) */
  tl_codegen_result cg;       /* after TILEC_STAGE_PTX */
  void *cubin; size_t cubin_size; /* TILEC_STAGE_CUBIN, where ptxas/driver produced it */
  tl_sbuf log;                /* diagnostics, print-after, time-passes */
  int ndiag_logged;           /* diagnostics already appended to log */
};

/* Run fn under a fatal-error handler: returns the status (TILEC_OK, or
 * TILEC_ERROR_INTERNAL / NOMEM when fn raised one). */
tilec_status tl_api_guard(tilec_program *p, tilec_status (*fn)(tilec_program *, void *), void *arg);
/* Append new diagnostics of p->ctx to p->log. */
void tl_api_flush_diags(tilec_program *p);

#endif
