/* units.h: LLVM modules on their way to PTX (units.c), internal to lib/codegen/. */
#ifndef TILEC_UNITS_H
#define TILEC_UNITS_H

#include <stdbool.h>
#include <stddef.h>

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#define CG_MAX_THREADS 16

/* One module: its own context and target machine, so that units run on
 * threads of their own. */
typedef struct cg_unit {
  LLVMContextRef C;
  LLVMModuleRef M;
  LLVMTargetMachineRef tm;
  const char *passes;   /* the new-PM pipeline */
  const char *fallback; /* run instead when `passes` does not parse (NULL: none) */
  bool want_ir;         /* print the optimized module into ir */
  char *ir, *ptx;       /* malloc'd */
  size_t ptx_len;
  char *err;            /* malloc'd message of a failure, NULL when none */
  bool oom;
  double ms_opt, ms_ptx;
} cg_unit;

/* Passes, fixups (nvptx_fixups.c), optionally the IR text, then the PTX. */
void cg_unit_run(cg_unit *u);
/* cg_unit_run on every unit, on up to `threads` threads (this one included). */
void cg_units_run(cg_unit *units, int n, int threads);
/* Threads for a file of nkernels kernels: one per kernel up to the online
 * CPUs (TILEC_CODEGEN_THREADS overrides; 1 = one module for all kernels). */
int cg_units_threads(int nkernels);
/* units[0..n) (one kernel each, in file order) as one module of all their
 * kernels prints it; malloc'd, NULL when out of memory or not PTX. */
char *cg_units_merge_ptx(cg_unit *units, int n);

#endif
