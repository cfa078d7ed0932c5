/* program.h: what a tilec_program and tilec_options hold (shared by the lib/api/ sources). */
#ifndef TILEC_PROGRAM_H
#define TILEC_PROGRAM_H

#include "tilec.h"
#include "ir.h"
#include "codegen.h"

#include "frontend.h"
#include "interp.h"

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
  tl_sbuf work;               /* scratch text of the stage in progress (freed with p) */
};

/* Size limit of one source (string or file); larger input is an error. */
#define TILEC_MAX_SOURCE_BYTES ((size_t)16 << 20)

/* From the runtime (runtime/loader.c): the "sm_XX[a]" of CUDA device
 * `device` into buf; false when there is no driver or device.  The default
 * target when no arch is given. */
bool tl_rt_device_arch(int device, char *buf, size_t n);

/* The tile function named `kernel` (NULL = the first), or NULL. */
tl_func *tl_api_find_kernel(tilec_program *p, const char *kernel);
/* Host tensor/scalar arguments -> interpreter arguments for f.  false with a
 * one-line reason in err when an argument cannot be mapped (device, dtype, rank). */
bool tl_api_map_args(const tl_func *f, const tilec_arg *args, int nargs, tl_arg *out,
                     bool host, char *err, size_t n);

/* Run fn under a fatal-error handler: returns the status (TILEC_OK, or
 * TILEC_ERROR_INTERNAL / NOMEM when fn raised one). */
tilec_status tl_api_guard(tilec_program *p, tilec_status (*fn)(tilec_program *, void *), void *arg);
/* Append new diagnostics of p->ctx to p->log. */
void tl_api_flush_diags(tilec_program *p);

#endif
